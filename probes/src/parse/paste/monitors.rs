//! GPU monitors' lines: gpustat's `[0] NVIDIA GeForce RTX 3090 | 35'C,   0 % |   10 / 24576 MB | …`
//! (after a header line ending in the driver version), and nvtop's device header
//! `Device 0 [GeForce GTX 1080 Ti] PCIe GEN 3@16x …`, which states the link's current generation and
//! width (not its maximum). GPUs of one model have one maximum link (the card's), so where another GPU
//! of the same name runs a higher generation or more lanes now, that is a floor for this one's maximum.

use std::sync::OnceLock;

use regex::Regex;

use super::facts::Facts;
use gpu_doctor_model::DriverVersion;
use gpu_doctor_model::Gpu;

const GPUSTAT: &str = "gpustat";
const NVTOP: &str = "nvtop";

/// gpustat's row: index, name, then `|`-separated temperature and utilization, memory.
fn gpustat_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by every test
    RE.get_or_init(|| {
        Regex::new(r"^\[(\d{1,3})\]\s+([^|]{1,120}?)\s*\|\s*(\d{1,3})\s*\S{0,2}C\s*((?:,\s*\d{1,3}\s*%\s*){1,2})[^|]{0,40}\|\s*(\d{1,9})\s*/\s*(\d{1,9})\s*MB")
            .unwrap()
    })
}

/// nvtop's device header.
fn nvtop_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    #[allow(clippy::unwrap_used)] // a literal pattern, exercised by every test
    RE.get_or_init(|| {
        Regex::new(r"^Device (\d{1,3}) ?\[([^\]]{1,120})\][^A-Za-z0-9]{0,8}PCIe GEN (\d{1,2})@\s*(\d{1,2})x").unwrap()
    })
}

const MIB: u64 = 1024 * 1024;

/// Reads gpustat rows (and the driver version on the header before them) and nvtop headers.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut gpustat_driver = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if let Some(c) = gpustat_re().captures(t) {
            facts.saw(i, GPUSTAT);
            let num = |k: usize| c.get(k).and_then(|m| m.as_str().parse::<u64>().ok());
            // With `--show-fan` the fan's percentage comes first: utilization is the last one.
            let util = c.get(4).and_then(|m| {
                m.as_str().split(',').filter_map(|p| p.trim().trim_end_matches('%').trim().parse().ok()).next_back()
            });
            let gpu = Gpu {
                index: c.get(1).and_then(|m| m.as_str().parse().ok()).unwrap_or(0),
                name: c.get(2).map(|m| m.as_str().to_owned()),
                temperature_c: num(3).and_then(|v| u32::try_from(v).ok()),
                utilization_gpu_pct: util,
                memory_used_bytes: num(5).map(|v| v.saturating_mul(MIB)),
                memory_total_bytes: num(6).map(|v| v.saturating_mul(MIB)),
                ..Gpu::default()
            };
            facts.listed_gpus.push((gpu, GPUSTAT));
            if i > 0 && gpustat_driver.is_none() {
                gpustat_driver = header_driver(&lines[i - 1]);
            }
        } else if let Some(c) = nvtop_re().captures(t) {
            facts.saw(i, NVTOP);
            let num = |k: usize| c.get(k).and_then(|m| m.as_str().parse::<u32>().ok());
            let gpu = Gpu {
                index: num(1).unwrap_or(0),
                name: c.get(2).map(|m| m.as_str().to_owned()),
                pcie_gen_current: num(3),
                pcie_width_current: num(4),
                ..Gpu::default()
            };
            facts.listed_gpus.push((gpu, NVTOP));
        }
    }
    facts.driver(gpustat_driver, None, GPUSTAT);
    siblings_floor(&mut facts.listed_gpus);
    dmon_replays(lines, facts);
}

const DMON: &str = "nvidia-smi dmon";

/// The most rows of `nvidia-smi dmon` read: it prints one per GPU every interval, for as long as it runs.
const MAX_DMON_ROWS: usize = 4096;

/// `nvidia-smi dmon -s e` (or with more groups): its `pci` column under `errs` counts each GPU's PCIe replays
/// (nvidia-smi(1), dmon: "e - ECC (Number of aggregated single bit, double bit ecc errors) and PCIe replay
/// errors"). The header is `# gpu … pci …` (after `Date Time` with `-o DT`), then a `# Idx …` units line; each row
/// holds as many words. The most a GPU's rows show is its count since the driver loaded.
fn dmon_replays(lines: &[String], facts: &mut Facts) {
    let Some(at) = lines.iter().position(|l| {
        let t = l.trim_start();
        t.starts_with('#') && t.split_whitespace().any(|w| w == "gpu") && t.split_whitespace().any(|w| w == "pci")
    }) else {
        return;
    };
    let names: Vec<&str> = lines[at].trim_start().trim_start_matches('#').split_whitespace().collect();
    let (Some(gpu), Some(pci)) = (names.iter().position(|n| *n == "gpu"), names.iter().position(|n| *n == "pci"))
    else {
        return;
    };
    let mut most: Vec<(u32, u64)> = Vec::new();
    for line in lines[at + 1..].iter().take(MAX_DMON_ROWS) {
        let t = line.trim();
        if t.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if words.len() != names.len() {
            break;
        }
        let (Some(index), Some(count)) =
            (words[gpu].parse::<u32>().ok(), words.get(pci).and_then(|w| w.parse::<u64>().ok()))
        else {
            continue;
        };
        if let Some((_, c)) = most.iter_mut().find(|(i, _)| *i == index) {
            *c = (*c).max(count);
        } else if most.len() < super::gpus::MAX_GPUS {
            most.push((index, count));
        }
    }
    if most.is_empty() {
        return;
    }
    facts.saw(at, DMON);
    for (index, count) in most {
        let health = gpu_doctor_model::GpuHealth { index, pcie_replay_count: Some(count), ..Default::default() };
        facts.health(health, DMON);
    }
}

/// Gives each nvtop GPU without a maximum the highest generation and width another nvtop GPU of the
/// same name runs now, where that is above its own: the same card can run at least that.
fn siblings_floor(listed: &mut [(Gpu, &'static str)]) {
    let nvtop: Vec<(Option<String>, Option<u32>, Option<u32>)> = listed
        .iter()
        .filter(|(_, f)| *f == NVTOP)
        .map(|(g, _)| (g.name.clone(), g.pcie_gen_current, g.pcie_width_current))
        .collect();
    for (g, _) in listed.iter_mut().filter(|(_, f)| *f == NVTOP) {
        let same = nvtop.iter().filter(|(n, _, _)| n.is_some() && *n == g.name);
        let (most_gen, most_width) = same.fold((None, None), |(mg, mw), (_, gn, w)| (mg.max(*gn), mw.max(*w)));
        let above = |most: Option<u32>, now: Option<u32>| most.filter(|m| now.is_some_and(|n| n < *m));
        if g.pcie_gen_max.is_none() && g.pcie_width_max.is_none() {
            let (gen_max, width_max) = (above(most_gen, g.pcie_gen_current), above(most_width, g.pcie_width_current));
            if gen_max.is_some() || width_max.is_some() {
                g.pcie_gen_max = gen_max.or(g.pcie_gen_current);
                g.pcie_width_max = width_max.or(g.pcie_width_current);
            }
        }
    }
}

/// gpustat's header, `host  Wed Jun  5 14:12:01 2019  418.56`: the driver version at its end,
/// after a clock time.
fn header_driver(line: &str) -> Option<DriverVersion> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let last = words.last()?;
    let timed = words.iter().any(|w| w.len() == 8 && w.matches(':').count() == 2);
    timed.then(|| last.parse::<DriverVersion>().ok()).flatten().filter(|d| d.major() >= 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Facts {
        Facts::read_by(read, text)
    }

    #[test]
    fn gpustat_rows_and_header() {
        let f = read_text(
            "server  Wed Jun  5 14:12:01 2019  418.56\n\
             [0] GeForce GTX 1080 Ti | 65'C,  98 % | 10981 / 11178 MB | user(10971M)\n\
             [1] GeForce GTX 1080 Ti | 30'C,  45 %,   0 % |     0 / 11178 MB |\n",
        );
        assert_eq!(f.listed_gpus.len(), 2);
        let g = &f.listed_gpus[0].0;
        assert_eq!((g.index, g.name.as_deref()), (0, Some("GeForce GTX 1080 Ti")));
        assert_eq!((g.temperature_c, g.utilization_gpu_pct), (Some(65), Some(98)));
        assert_eq!(g.memory_total_bytes, Some(11178 * MIB));
        assert_eq!(f.listed_gpus[1].0.utilization_gpu_pct, Some(0), "the fan's percentage comes first");
        assert_eq!(f.driver_version.as_ref().map(|(d, _)| d.as_str()), Some("418.56"));
    }

    /// Syllo/nvtop#6 (tests/corpus/pcie_link_degraded/nvtop-6-gen1-idle-1080ti.txt), the
    /// reporter's markdown emphasis kept.
    #[test]
    fn nvtop_device_headers() {
        let f = read_text(
            "Device 0 [GeForce GTX 1080 Ti] PCIe GEN 3@16x \nDevice 1 [GeForce GTX 1080 Ti] _**PCIe GEN 1@16x**_ \n",
        );
        let links: Vec<_> =
            f.listed_gpus.iter().map(|(g, _)| (g.index, g.pcie_gen_current, g.pcie_width_current)).collect();
        assert_eq!(links, [(0, Some(3), Some(16)), (1, Some(1), Some(16))]);
        let max: Vec<_> = f.listed_gpus.iter().map(|(g, _)| (g.pcie_gen_max, g.pcie_width_max)).collect();
        assert_eq!(max, [(None, None), (Some(3), Some(16))], "GPU 1's floor is its twin's Gen3; GPU 0's is unknown");
    }

    /// nvtop's header as its source draws it (Syllo/nvtop src/interface.c at 3.3.2, lines 651-654 and
    /// 823-829: `"Device %-2u"`, `"[%s]"`, then `"PCIe "`, `"GEN "`, `"%u@%2ux"`, `" RX: "`), on a
    /// machine of two models: each GPU is held only to its own model. `%-2u` leaves no space before
    /// the name from device 10 on.
    #[test]
    fn nvtop_link_floors_come_from_the_same_model_only() {
        let f = read_text(
            "Device 0 [NVIDIA GeForce RTX 3090] PCIe GEN 4@16x RX: 0.000 KiB/s TX: 0.000 KiB/s\n\
             Device 1 [NVIDIA GeForce RTX 3060] PCIe GEN 1@ 8x RX: 0.000 KiB/s TX: 0.000 KiB/s\n\
             Device 2 [NVIDIA GeForce RTX 3060] PCIe GEN 1@ 8x RX: 0.000 KiB/s TX: 0.000 KiB/s\n\
             Device 10[NVIDIA GeForce RTX 3090] PCIe GEN 1@ 4x RX: 0.000 KiB/s TX: 0.000 KiB/s\n",
        );
        let max: Vec<_> = f.listed_gpus.iter().map(|(g, _)| (g.index, g.pcie_gen_max, g.pcie_width_max)).collect();
        assert_eq!(max, [(0, None, None), (1, None, None), (2, None, None), (10, Some(4), Some(16))]);
    }
}
