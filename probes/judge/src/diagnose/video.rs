//! The driver's video libraries: FFmpeg's NVENC and NVDEC load `libnvidia-encode.so.1` and `libnvcuvid.so.1`
//! (nv-codec-headers' dynamic loader prints `Cannot load <library>`). Both are the driver's own, packaged apart
//! from its CUDA library on Debian and Ubuntu, and the NVIDIA Container Toolkit mounts them into a container
//! only for the `video` driver capability (NVIDIA_DRIVER_CAPABILITIES; the CUDA images default to
//! `compute,utility`). So the library is missing on the host, or the container was not given the capability:
//! a video library the text shows present in the same place (an `ldconfig -p` line) says the capability is
//! there, and the host lacks the other library. A Linux program's line alone shows neither place: both causes are
//! said, each for its place.

use super::{Ctx, Rule};
use gpu_doctor_model::{Category, Finding, ObservedMessage, OsFamily, Severity};

const CAPABILITIES_SOURCE: &str = "NVIDIA Container Toolkit, Driver capabilities \
    (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html: `video` is \
    \"required for using the Video Codec SDK\"; the CUDA images set compute,utility); \
    NVIDIA/libnvidia-container src/nvc_info.c (the video libraries libnvcuvid, libnvidia-encode, \
    libnvidia-opticalflow are mounted for the video capability)";

pub(super) const CAPABILITY_MISSING: Rule = Rule {
    id: "env.driver_capabilities_lack_video",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "FFmpeg, DALI or a Video Codec SDK encoder cannot load the driver's NVENC or NVDEC library \
              (`Cannot load libnvidia-encode.so.1`, `libnvcuvid.so.1`) in a container, and nothing in the text shows a video library present there; or \
              NVIDIA_DRIVER_CAPABILITIES is set without `video` (or `all`) beside that failure: the NVIDIA Container \
              Toolkit mounts those libraries only for the video capability. Where the text shows neither a \
              container nor the loader's cache, said for the container case beside presence.video_codec_libs_missing \
              for the host's.",
    source: CAPABILITIES_SOURCE,
};

pub(super) const LIBRARIES_MISSING: Rule = Rule {
    id: "presence.video_codec_libs_missing",
    category: Category::Other,
    severity: Severity::Error,
    trigger: "FFmpeg, DALI or a Video Codec SDK encoder cannot load the driver's NVENC or NVDEC library \
              (`Cannot load libnvidia-encode.so.1`, `libnvcuvid.so.1`, `nvEncodeAPI64.dll`) on a host, or in a container where another video library is \
              present (the video capability is on, so the host lacks the library): Debian and Ubuntu package them \
              apart from the driver's CUDA library. Where the text shows neither a container nor the loader's cache, \
              said for the host case beside env.driver_capabilities_lack_video for a container's.",
    source: "FFmpeg/nv-codec-headers include/ffnvcodec/dynlink_loader.h (the libraries' names); Debian's \
             nvidia-graphics-drivers packages (libnvidia-encode1, libnvcuvid1); Ubuntu's \
             (libnvidia-encode-<branch>, libnvidia-decode-<branch>); RPM Fusion's xorg-x11-drv-nvidia-cuda-libs",
};

pub(super) const STARTUP_PROBE: Rule = Rule {
    id: "presence.video_codec_probe_only",
    category: Category::Other,
    severity: Severity::Info,
    trigger: "nv-codec-headers' `Cannot load <library>` alone: no NVENC or NVDEC codec named (FFmpeg prefixes an \
              encoder's lines with its name, `[h264_nvenc @ 0x…]`), no `-hwaccel`, no other video message, no NVIDIA \
              GPU, driver, container or loader cache in the text. Programs that offer NVENC (HandBrake, its CLI) load \
              the library at start-up to see whether it is there, and print the line on every machine without it: \
              harmless unless the program is asked to encode with NVENC.",
    source: "FFmpeg/nv-codec-headers include/ffnvcodec/dynlink_loader.h (LOAD_LIBRARY prints `Cannot load %s` \
             whenever the library is looked for); lisamelton/video_transcoding#286 (HandBrake's start-up probe, \
             `Cannot load nvEncodeAPI64.dll` three times on a machine not encoding with NVENC: \"you can just ignore \
             it\")",
};

/// `CAPABILITY_MISSING` is listed with the variables' rules (`env_vars::RULES`), whose family it names.
pub(super) const RULES: &[Rule] = &[LIBRARIES_MISSING, STARTUP_PROBE];

/// Words in a line that name an NVENC or NVDEC codec or FFmpeg's hardware decoding: the library was asked for.
const ASKED: [&str; 6] = ["_nvenc", "nvenc_", "_cuvid", "cuvid_", "hwaccel", "nvdec"];

/// The load failed because a codec was asked for, or the text shows where it ran (a GPU, a driver, a
/// container, the loader's cache, the capabilities variable), or another video message stands beside it.
fn asked_or_placed(cx: &Ctx<'_>, failed: &[&ObservedMessage]) -> bool {
    let asked = |line: &str| {
        let lower = line.to_ascii_lowercase();
        ASKED.iter().any(|w| lower.contains(w))
    };
    failed.iter().any(|m| m.id != "ffmpeg.nvenc_library_not_loaded" || asked(&m.line))
        || cx.s.messages.iter().any(|m| !NOT_LOADED.contains(&m.id.as_str()) && asked(&m.line))
        || !cx.gpus.is_empty()
        || cx.driver.version.is_some()
        || cx.s.platform.container.is_some()
        || cx.loader_cache().is_some()
        || cx.s.env.vars.contains_key(CAPABILITIES)
}

/// The catalogue's rows for a program failing to load the driver's encode and decode libraries: FFmpeg's,
/// DALI's video reader's, and the Video Codec SDK's encoder's (which names no library: the encode one).
const NOT_LOADED: [&str; 4] = [
    "ffmpeg.nvenc_library_not_loaded",
    "ffmpeg.nvdec_library_not_loaded",
    "dali.nvcuvid_not_loaded",
    "nvcodec.nvenc_library_not_found",
];

/// The library a failed load names, as the loader caches it: `libnvcuvid.so` is `libnvcuvid.so.1`; the
/// SDK encoder's line names none and loads `libnvidia-encode.so.1` (`nvEncodeAPI64.dll` on Windows).
fn library_of(m: &ObservedMessage, windows: bool) -> &str {
    match m.values.get("library").map(String::as_str) {
        Some("libnvcuvid.so") => "libnvcuvid.so.1",
        Some(library) => library,
        None if windows => "nvEncodeAPI64.dll",
        None => "libnvidia-encode.so.1",
    }
}

/// The driver's video libraries, by the names the loader caches them under.
const VIDEO_LIBRARIES: [&str; 3] = ["libnvidia-encode.so.1", "libnvcuvid.so.1", "libnvidia-opticalflow.so.1"];

const CAPABILITIES: &str = "NVIDIA_DRIVER_CAPABILITIES";

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let failed: Vec<&ObservedMessage> = cx.s.messages.iter().filter(|m| NOT_LOADED.contains(&m.id.as_str())).collect();
    if failed.is_empty() {
        return;
    }
    let mut missing: Vec<&str> = failed.iter().map(|m| library_of(m, cx.os == OsFamily::Windows)).collect();
    missing.sort_unstable();
    missing.dedup();
    if !asked_or_placed(cx, &failed) {
        out.push(startup_probe(&missing, &failed));
        return;
    }
    let windows = missing.iter().any(|l| l.ends_with(".dll"));
    let mut evidence: Vec<String> = failed.iter().map(|m| format!("pasted line: {}", m.line)).collect();
    let present: Vec<String> = cx
        .loader_cache()
        .unwrap_or_default()
        .iter()
        .filter(|e| VIDEO_LIBRARIES.contains(&e.name.as_str()) && !missing.contains(&e.name.as_str()))
        .map(|e| format!("{} => {} (the loader's cache)", e.name, e.path))
        .collect();
    let capabilities = cx.s.env.vars.get(CAPABILITIES);
    let lacks_video = capabilities.filter(|v| !v.split(',').any(|c| matches!(c.trim(), "video" | "all")));
    let container = cx.s.platform.container.as_ref().filter(|_| !windows);
    if let Some(value) = lacks_video {
        evidence.push(format!("{CAPABILITIES}={value}"));
    }
    let markers = container.into_iter().flat_map(|c| c.markers.iter().take(2)).map(|m| format!("pasted line: {m}"));
    if lacks_video.is_some() || (container.is_some() && present.is_empty()) {
        evidence.extend(markers);
        out.push(capability_missing(&missing, evidence, false));
        return;
    }
    // Neither a container nor the loader's cache in the text (a Linux program's line alone): where it ran is not
    // shown, and each place has its cause, so both are said, each for its place.
    let unshown = container.is_none() && !windows && cx.loader_cache().is_none() && cx.os != OsFamily::Windows;
    if unshown {
        let mut said = evidence.clone();
        said.push("the text shows no container and no loader cache: where this ran is not shown".to_owned());
        out.push(capability_missing(&missing, said, true));
    }
    evidence.extend(present);
    evidence.extend(markers);
    out.push(libraries_missing(cx, &missing, windows, container.is_some(), unshown, evidence));
}

fn startup_probe(missing: &[&str], failed: &[&ObservedMessage]) -> Finding {
    let mut lines: Vec<String> = failed.iter().map(|m| format!("pasted line: {}", m.line)).collect();
    lines.dedup();
    STARTUP_PROBE.finding(
        format!("A program looked for the driver's video library and did not find it ({})", missing.join(", ")),
        "Programs that can encode with NVENC (HandBrake and its CLI among them) load the driver's encode library \
         at start-up to see whether NVENC is there, and print `Cannot load` on every machine without it. Nothing in \
         the text asks for an NVENC or NVDEC codec, so this alone is no fault.",
        lines,
        Some(
            "Nothing to repair unless you want hardware encoding: then the NVIDIA driver of an NVENC-capable GPU \
             installs the library (nvEncodeAPI64.dll in System32 on Windows; libnvidia-encode on Linux, packaged \
             apart from the driver on Debian and Ubuntu), and the encoder to choose is an `_nvenc` one."
                .to_owned(),
        ),
    )
}

fn capability_missing(missing: &[&str], evidence: Vec<String>, unshown: bool) -> Finding {
    let place = if unshown { "If this ran in a container: it" } else { "The container" };
    CAPABILITY_MISSING.finding(
        format!("{place} was not given the driver's video libraries ({})", missing.join(", ")),
        "The NVIDIA Container Toolkit mounts the driver's encode and decode libraries (libnvidia-encode, libnvcuvid) \
         into a container only when NVIDIA_DRIVER_CAPABILITIES includes `video`; NVIDIA's CUDA images and most \
         others set `compute,utility`, which gives CUDA but not NVENC or NVDEC.",
        evidence,
        Some(
            "Start the container with NVIDIA_DRIVER_CAPABILITIES=compute,video,utility (or all): `docker run --gpus all \
             -e NVIDIA_DRIVER_CAPABILITIES=compute,video,utility …`, in Compose `environment: \
             NVIDIA_DRIVER_CAPABILITIES=compute,video,utility` (with the GPU reserved), or `ENV \
             NVIDIA_DRIVER_CAPABILITIES=compute,video,utility` in the image's Dockerfile (its last stage). Setting it \
             inside the running container changes nothing: the toolkit reads it when the container starts. The host \
             needs the libraries too (`ldconfig -p | grep -E 'libnvidia-encode|libnvcuvid'` there)."
                .to_owned(),
        ),
    )
}

fn libraries_missing(
    cx: &Ctx<'_>,
    missing: &[&str],
    windows: bool,
    container: bool,
    unshown: bool,
    evidence: Vec<String>,
) -> Finding {
    let branch = cx.driver.version.as_ref().map_or_else(|| "<branch>".to_owned(), |d| d.major().to_string());
    let fix = if windows {
        "The Windows driver installs nvEncodeAPI64.dll and nvcuvid.dll in System32: reinstall or update the NVIDIA \
         display driver (a driver without them is a minimal or OEM package), then run FFmpeg again."
            .to_owned()
    } else {
        format!(
            "Install the driver's video libraries of the installed branch on the host: Ubuntu `sudo apt install \
             libnvidia-encode-{branch} libnvidia-decode-{branch}`, Debian `sudo apt install libnvidia-encode1 \
             libnvcuvid1`, RPM Fusion `xorg-x11-drv-nvidia-cuda-libs`, NVIDIA's runfile installs them itself; then \
             `ldconfig -p | grep -E 'libnvidia-encode|libnvcuvid'` lists them.{}",
            if container {
                " Restart the container afterwards: the toolkit mounts what the host has when it starts."
            } else {
                " If FFmpeg runs in a container, it also needs NVIDIA_DRIVER_CAPABILITIES with `video` (or all) \
                 where the container starts: the toolkit mounts these libraries only for that capability."
            }
        )
    };
    let place = if unshown { "If this ran on the host: the" } else { "The" };
    LIBRARIES_MISSING.finding(
        format!("{place} driver's video library is missing ({})", missing.join(", ")),
        "NVENC and NVDEC users (FFmpeg, DALI, the Video Codec SDK's programs) load the driver's encode and decode \
         libraries at run time; Debian and Ubuntu package them apart from the driver and its CUDA library, so a \
         driver installed for CUDA alone lacks them.",
        evidence,
        Some(fix),
    )
}
