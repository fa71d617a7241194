//! Queries on the JAX table.

use super::{JaxPlugin, JaxTable, PyVersion};
use gpu_doctor_model::CudnnVersion;

impl JaxTable {
    /// The lowest cuDNN `plugin` of release `version` accepts, and the source that says so: the
    /// release row of `version`'s line; for a line the table has no row for, the nearest row below it
    /// (a newer release keeps the newest floor known), or the oldest row for an older one; the
    /// plugin row's own floor where no release row names one.
    pub fn plugin_cudnn_min<'a>(&'a self, plugin: &'a JaxPlugin, version: &str) -> (CudnnVersion, &'a str) {
        let numbers = PyVersion::new(version).numbers();
        let line = |v: &str| PyVersion::new(v).numbers().into_iter().take(2).collect::<Vec<_>>();
        let own = numbers.iter().copied().take(2).collect::<Vec<_>>();
        let mut rows: Vec<_> = self
            .release
            .iter()
            .filter_map(|r| r.plugin_cudnn_min.get(&plugin.extra).map(|m| (line(&r.version), *m, r.source.as_str())))
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        let below = rows.iter().rev().find(|(l, _, _)| *l <= own);
        match below.or(rows.first()) {
            Some((_, min, source)) if !numbers.is_empty() => (*min, source),
            _ => (plugin.cudnn_min, plugin.source.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Kb;

    fn floor(package: &str, version: &str) -> String {
        let kb = Kb::get().expect("kb");
        let plugin = kb.jax.plugin.iter().find(|p| p.package == package).expect("plugin row");
        kb.jax.plugin_cudnn_min(plugin, version).0.to_string()
    }

    /// The floors jax-cuda12-plugin's own Requires-Dist states per release (PyPI METADATA, read by
    /// scripts/kb-refresh): >=9.1 up to 0.5, >=9.8 from 0.6, >=9.10.2.21 from 0.11; cuda13 >=9.12.0.46.
    #[test]
    fn plugin_cudnn_floor_follows_the_release() {
        assert_eq!(floor("jax-cuda12-plugin", "0.5.1"), "9.1.0");
        assert_eq!(floor("jax-cuda12-plugin", "0.6.0"), "9.8.0");
        assert_eq!(floor("jax-cuda12-plugin", "0.10.2"), "9.8.0");
        assert_eq!(floor("jax-cuda12-plugin", "0.11.0"), "9.10.2");
        assert_eq!(floor("jax-cuda13-plugin", "0.7.2"), "9.12.0");
        // A line newer than the table keeps the newest floor; an older one the oldest.
        assert_eq!(floor("jax-cuda12-plugin", "0.13.0"), "9.10.2");
        assert_eq!(floor("jax-cuda12-plugin", "0.4.30"), "9.1.0");
    }
}
