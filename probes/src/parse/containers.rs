//! Container tooling's text: `docker info`, the engines' and the NVIDIA Container Toolkit's
//! `--version` lines, `nvidia-container-cli info`, Docker's `daemon.json`, containerd's
//! `config.toml` and CDI specs (YAML or JSON). Every parser takes text and returns what it could
//! read, never panicking on malformed input.

use std::sync::LazyLock;

use regex::Regex;

use super::ParseError;
use gpu_doctor_model::{CliDevice, CliInfo};

#[cfg(test)]
mod tests;

/// What `docker info` says about the daemon's runtimes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DockerInfo {
    /// `Runtimes:`; `None` when the line is missing.
    pub runtimes: Option<Vec<String>>,
    /// `Default Runtime:`.
    pub default_runtime: Option<String>,
    /// The `cdi:` lines under `Discovered Devices:` (Docker 28 and later).
    pub cdi_devices: Vec<String>,
}

/// Reads `docker info`'s text form. Lines it does not know are skipped; the result is empty when
/// the text has none of them (e.g. only the client part, when the daemon did not answer).
pub fn docker_info(text: &str) -> DockerInfo {
    let mut info = DockerInfo::default();
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("Runtimes:") {
            info.runtimes = Some(v.split_whitespace().map(str::to_owned).collect());
        } else if let Some(v) = t.strip_prefix("Default Runtime:") {
            info.default_runtime = non_empty(v);
        } else if let Some(v) = t.strip_prefix("cdi:")
            && let Some(d) = non_empty(v)
        {
            info.cdi_devices.push(d);
        }
    }
    info
}

/// The first version number in a program's `--version` text: `Docker version 24.0.5, build …`,
/// `podman version 4.9.3`, `containerd containerd.io 1.6.21 …`, `NVIDIA Container Toolkit CLI
/// version 1.14.3`, `cli-version: 1.14.3`; a leading `v` is dropped. `None` when there is none.
pub fn first_version(text: &str) -> Option<String> {
    static VERSION: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^v?([0-9]+\.[0-9]+(?:\.[0-9]+)*(?:[-~+][0-9A-Za-z.~+-]*)?)$").ok());
    let re = VERSION.as_ref()?;
    text.lines().flat_map(str::split_whitespace).find_map(|token| {
        let token = token.trim_end_matches([',', ';']);
        re.captures(token).and_then(|c| c.get(1)).map(|m| m.as_str().to_owned())
    })
}

/// Reads `nvidia-container-cli info` (`-k -d /dev/tty` debug lines in between are skipped). An
/// error when the text has neither a driver line nor a device.
pub fn container_cli_info(text: &str) -> Result<CliInfo, ParseError> {
    let mut info = CliInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        let value = (!value.is_empty() && value != "(null)").then(|| value.to_owned());
        match key.trim() {
            "NVRM version" => info.driver_version = value,
            "CUDA version" => info.cuda_version = value,
            "Device Index" => {
                info.devices.push(CliDevice { index: value.and_then(|v| v.parse().ok()), ..CliDevice::default() });
            }
            "Model" => set_last(&mut info.devices, |d| d.model = value),
            "GPU UUID" => set_last(&mut info.devices, |d| d.uuid = value),
            "Bus Location" => set_last(&mut info.devices, |d| d.bus_location = value),
            _ => {}
        }
    }
    if info.driver_version.is_none() && info.cuda_version.is_none() && info.devices.is_empty() {
        return Err(ParseError::new("nvidia-container-cli info", "no NVRM version, CUDA version or device"));
    }
    Ok(info)
}

fn set_last(devices: &mut [CliDevice], set: impl FnOnce(&mut CliDevice)) {
    if let Some(d) = devices.last_mut() {
        set(d);
    }
}

/// The runtimes a configuration file registers and its default runtime.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Runtimes {
    /// Registered runtime names, in the file's order.
    pub names: Vec<String>,
    /// The default runtime, when the file sets one.
    pub default: Option<String>,
}

/// Reads Docker's `daemon.json`: the keys of `runtimes` and `default-runtime`. An error when the
/// text is not a JSON object; an empty file is an empty configuration (Docker accepts it).
pub fn daemon_json(text: &str) -> Result<Runtimes, ParseError> {
    if text.trim().is_empty() {
        return Ok(Runtimes::default());
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ParseError::new("daemon.json", e.to_string()))?;
    let object = value.as_object().ok_or_else(|| ParseError::new("daemon.json", "not a JSON object"))?;
    let names = match object.get("runtimes") {
        None => Vec::new(),
        Some(serde_json::Value::Object(r)) => r.keys().cloned().collect(),
        Some(_) => return Err(ParseError::new("daemon.json", "\"runtimes\" is not an object")),
    };
    let default = object.get("default-runtime").and_then(serde_json::Value::as_str).map(str::to_owned);
    Ok(Runtimes { names, default })
}

/// Reads containerd's `config.toml` (version 2's `io.containerd.grpc.v1.cri` plugin, version 3's
/// `io.containerd.cri.v1.runtime`, or a drop-in file): the names under any
/// `…containerd.runtimes` table and `default_runtime_name`. An error when the text is not TOML.
pub fn containerd_config(text: &str) -> Result<Runtimes, ParseError> {
    let table: toml::Table =
        text.parse().map_err(|e: toml::de::Error| ParseError::new("containerd config.toml", e.message().to_owned()))?;
    let mut out = Runtimes::default();
    walk_containerd(&table, 0, &mut out);
    Ok(out)
}

/// Looks for `containerd` tables under `plugins.*`, at most a few levels deep.
fn walk_containerd(table: &toml::Table, depth: usize, out: &mut Runtimes) {
    if depth > 4 {
        return;
    }
    for (key, value) in table {
        let Some(inner) = value.as_table() else { continue };
        if key == "containerd" {
            if let Some(runtimes) = inner.get("runtimes").and_then(toml::Value::as_table) {
                out.names.extend(runtimes.keys().filter(|k| !out.names.contains(k)).cloned().collect::<Vec<_>>());
            }
            if let Some(d) = inner.get("default_runtime_name").and_then(toml::Value::as_str) {
                out.default = Some(d.to_owned());
            }
        } else {
            walk_containerd(inner, depth + 1, out);
        }
    }
}

/// What a CDI spec says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cdi {
    /// `kind`, e.g. `nvidia.com/gpu`.
    pub kind: Option<String>,
    /// Each device's `name`, in order.
    pub devices: Vec<String>,
    /// The driver version named by a `libcuda.so.<v>` or `libnvidia-ml.so.<v>` path.
    pub driver_version: Option<String>,
}

/// Reads a CDI spec, JSON when it starts with `{`, else the YAML `nvidia-ctk cdi generate` writes
/// (read line by line: the top-level `kind:`, and each `name:` of an item of the top-level
/// `devices:` list, whatever its indentation). An error when neither a kind nor a device is found.
pub fn cdi_spec(text: &str) -> Result<Cdi, ParseError> {
    let mut cdi = if text.trim_start().starts_with('{') { cdi_json(text)? } else { cdi_yaml(text) };
    static DRIVER: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"lib(?:cuda|nvidia-ml)\.so\.([0-9]+\.[0-9]+(?:\.[0-9]+)?)").ok());
    cdi.driver_version =
        DRIVER.as_ref().and_then(|re| re.captures(text)).and_then(|c| c.get(1)).map(|m| m.as_str().to_owned());
    if cdi.kind.is_none() && cdi.devices.is_empty() {
        return Err(ParseError::new("CDI spec", "no kind and no devices"));
    }
    Ok(cdi)
}

fn cdi_json(text: &str) -> Result<Cdi, ParseError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ParseError::new("CDI spec", e.to_string()))?;
    let kind = value.get("kind").and_then(serde_json::Value::as_str).map(str::to_owned);
    let devices = value
        .get("devices")
        .and_then(serde_json::Value::as_array)
        .map(|ds| ds.iter().filter_map(|d| d.get("name")?.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    Ok(Cdi { kind, devices, driver_version: None })
}

fn cdi_yaml(text: &str) -> Cdi {
    let mut cdi = Cdi::default();
    // Inside the top-level `devices:` list: the indentation of its items' `-`.
    let mut devices: Option<Option<usize>> = None;
    for raw in text.lines() {
        let line = strip_comment(raw);
        if line.trim().is_empty() || line.trim() == "---" {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if indent == 0 && !t.starts_with('-') {
            devices = None;
            if let Some(v) = t.strip_prefix("kind:") {
                cdi.kind = non_empty(unquote(v));
            } else if t == "devices:" {
                devices = Some(None);
            }
            continue;
        }
        let Some(item_indent) = devices else { continue };
        let item_indent = match (item_indent, t.starts_with('-')) {
            (None, true) => {
                devices = Some(Some(indent));
                indent
            }
            (Some(i), _) => i,
            (None, false) => continue,
        };
        let key = if indent == item_indent && t.starts_with('-') {
            t[1..].trim_start()
        } else if indent == item_indent + 2 {
            t
        } else {
            continue;
        };
        if let Some(v) = key.strip_prefix("name:")
            && let Some(name) = non_empty(unquote(v))
        {
            cdi.devices.push(name);
        }
    }
    cdi
}

/// The line without a ` #` comment (YAML comments need a space before `#`).
fn strip_comment(line: &str) -> &str {
    if line.trim_start().starts_with('#') {
        return "";
    }
    line.find(" #").map_or(line, |i| &line[..i])
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    v.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .unwrap_or(v)
}

fn non_empty(v: &str) -> Option<String> {
    let v = v.trim();
    (!v.is_empty()).then(|| v.to_owned())
}

/// The driver version in a `libcuda.so.<version>` file name (`libcuda.so.535.104.05` → `535.104.05`);
/// `None` for `libcuda.so`, `libcuda.so.1` and WSL's `libcuda.so.1.1`.
pub fn libcuda_version(file_name: &str) -> Option<String> {
    let v = file_name.strip_prefix("libcuda.so.")?;
    let parts: Vec<&str> = v.split('.').collect();
    let numeric = parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    // Driver versions have a three-digit major (`470.57.02`); sonames are `1` or `1.1`.
    (numeric && parts.len() >= 2 && parts[0].len() >= 3).then(|| v.to_owned())
}
