//! Known error lines from pasted text that no fact-based finding already explains.

use super::Ctx;
use super::context::{build_cuda, wheel_cuda_major};
use gpu_doctor_kb::{Coverage, KnownMessage, MessageLevel, coverage};
use gpu_doctor_model::{
    Category, ComputeCapability, CudaVersion, Finding, ObservedMessage, OsFamily, PlanTarget, Severity,
};

/// The finding id of a known message: `observed.<message id>`.
pub(super) fn finding_id(message_id: &str) -> String {
    format!("observed.{message_id}")
}

/// An observed message is an error unless its category is the harmless one (a note) or its
/// emitter prints it as a warning it goes on after (a warning).
pub(super) fn severity(known: &KnownMessage) -> Severity {
    match (known.category, known.level) {
        (Category::ToolkitVsFrameworkMismatchHarmless, _) | (_, MessageLevel::Workload) => Severity::Info,
        (_, MessageLevel::Warning) => Severity::Warning,
        (_, MessageLevel::Error) => Severity::Error,
    }
}

/// False when the message has a known range of releases that print it and every version of that
/// package in the snapshot is outside it: the line then came from somewhere else (another
/// environment, an old log), so its explanation would not fit this machine.
pub(super) fn printed_here(cx: &Ctx<'_>, known: &KnownMessage) -> bool {
    let Some(range) = &known.printed_by else { return true };
    let versions: Vec<&str> =
        cx.frameworks().filter(|(_, f)| f.name == range.package).map(|(_, f)| f.version.as_str()).collect();
    versions.is_empty() || versions.iter().any(|v| range.contains(v) != Some(false))
}

/// Whether the finding `id` of `category` explains the known message: a rule the row names in
/// `explained_by`, or any finding of its category outside the catch-all `other`, whose findings
/// (a GPU's health, a companion package, NVLink) have nothing to do with each other's lines.
fn explains(id: &str, category: Category, known: &KnownMessage) -> bool {
    known.explained_by.iter().any(|rule| rule == id) || (category == known.category && category != Category::Other)
}

/// One finding per known message no other finding explains, citing every line of it. A message
/// that a finding explains is named in that finding's `explains`, its lines in its evidence: the
/// one the row names in `explained_by`, else the first of its category.
pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let before = out.len();
    for known in &cx.kb.errors.message {
        if !printed_here(cx, known) {
            continue;
        }
        let observed: Vec<&ObservedMessage> = cx.s.messages.iter().filter(|m| m.id == known.id).collect();
        let Some(first) = observed.first() else { continue };
        let lines: Vec<String> = observed.iter().map(|m| format!("pasted line: {}", m.line)).collect();
        let explaining = out[..before]
            .iter()
            .position(|f| known.explained_by.contains(&f.id))
            .or_else(|| out[..before].iter().position(|f| explains(&f.id, f.category, known)));
        if let Some(at) = explaining {
            let finding = &mut out[at];
            finding.explains.push(finding_id(&known.id));
            for line in lines {
                if !finding.evidence.iter().any(|e| e.contains(line.trim_start_matches("pasted line: "))) {
                    finding.evidence.push(line);
                }
            }
            continue;
        }
        if capability_warning_answered(cx, known) || false_ptxas_warning(known, first) {
            continue;
        }
        let meaning = with_values(&known.meaning, first, &known.pattern);
        // The driver planner writes the fix of a driver target; the floor and the other way out go
        // in the detail.
        let (needs, plan) = needed_driver(cx, first).or_else(|| build_driver(cx, known, &observed)).unzip();
        // Else the torch build for this driver; else `message_fix::attach` gives the fix of the row's
        // family.
        let fix = if plan.is_none() { build_for_driver(cx, known) } else { None };
        let finding = Finding {
            id: finding_id(&known.id),
            category: known.category,
            severity: severity(known),
            summary: format!("{}: {}", short_emitter(&known.emitter), first_sentence(&meaning)),
            detail: match needs {
                Some(needs) => format!("{meaning} (Printed by {}.) {needs}", known.emitter),
                None => format!(
                    "{meaning} (Printed by {}.) The facts that would say why were not in the text; paste `nvidia-smi` \
                     and the framework's own version output from that machine, or run gpu-doctor there.",
                    known.emitter
                ),
            },
            evidence: lines,
            explains: Vec::new(),
            fix,
            plan: None,
        };
        out.push(finding.with_plan(plan));
    }
}

/// The program an emitter names, without its source file, function and code (`PyTorch
/// c10/cuda/CUDAFunctions.cpp (device_count_ensure_non_zero)` → `PyTorch`, `CUDA runtime,
/// cudaErrorInsufficientDriver (35)` → `CUDA runtime`): the words before the first path, source file
/// (not `.cpp`, which ends `llama.cpp`), parenthesis or comma.
fn short_emitter(emitter: &str) -> &str {
    let head = emitter.split(',').next().unwrap_or(emitter);
    let cut = head
        .match_indices(' ')
        .map(|(at, _)| at)
        .find(|&at| {
            let next = head[at + 1..].split(' ').next().unwrap_or("");
            next.starts_with('(')
                || (next.contains('/') && next != "/")
                || [".cc", ".cu", ".py", ".go", ".c", ".h"].iter().any(|ext| next.ends_with(ext))
        })
        .unwrap_or(head.len());
    let short = head[..cut].trim_end_matches([' ', '/']).trim();
    if short.is_empty() { emitter } else { short }
}

/// The first sentence of a meaning: up to the first `. ` before a capital letter (so `e.g. ` and
/// versions stay whole), or all of it.
fn first_sentence(text: &str) -> &str {
    text.match_indices(". ")
        .map(|(at, _)| at)
        .find(|&at| text[at + 2..].starts_with(|c: char| c.is_ascii_uppercase()))
        .map_or(text, |at| &text[..=at])
}

/// The rows of PyTorch's `_check_capability` warning: the GPU's capability (`cc`), the lowest and
/// highest entries of `torch.cuda.get_arch_list()` (`min_cc`, `max_cc`), and the CUDA variants it
/// suggests after them.
const CAPABILITY_WARNING: [&str; 3] =
    ["torch.gpu_too_old", "torch.min_max_capability", "torch.suggested_cuda_configurations"];

/// TensorFlow's ptxas warning naming a ptxas that is not older than the version it names (`You are using ptxas
/// 10.0.145, which is older than 9.2.88`): TensorFlow 1.13's comparison bug (tensorflow/tensorflow#23874), not an
/// old toolkit.
fn false_ptxas_warning(known: &KnownMessage, m: &ObservedMessage) -> bool {
    let parse = |name: &str| -> Option<Vec<u32>> {
        m.values.get(name)?.split('.').map(|p| p.parse().ok()).collect::<Option<Vec<u32>>>()
    };
    known.id == "tf.ptxas_too_old"
        && matches!((parse("ptxas"), parse("older_than")), (Some(have), Some(named)) if have >= named)
}

/// True when PyTorch's capability warning is answered by binary compatibility: `_check_capability`
/// warns when `major * 10 + minor` of the GPU is below the lowest or above the highest number of the
/// arch list (`_check_capability` of pytorch/pytorch:torch/cuda/__init__.py@v2.10.0, its message at
/// #L258-L264: a comparison of numbers),
/// while machine code of X.y runs on every X.z with z ≥ y (NVIDIA's Blackwell compatibility guide,
/// the knowledge base's `coverage`): a GB10 (12.1) under a build whose highest entry is 12.0 runs
/// it (eugr/spark-vllm-docker#15, pytorch/pytorch#172629). Every GPU the warning names (its `cc`,
/// else the text's GPUs) must be at or above the lowest entry and covered by the highest (or in
/// between); with no range in the text nothing is answered.
fn capability_warning_answered(cx: &Ctx<'_>, known: &KnownMessage) -> bool {
    CAPABILITY_WARNING.contains(&known.id.as_str()) && capability_warning_runs(cx).is_some()
}

/// The GPUs PyTorch's capability warning names and the build's highest entry, when every such GPU
/// runs the build by binary compatibility (see [`capability_warning_answered`]); `None` when the
/// text has no such warning, no range, or a GPU the build cannot run.
pub(super) fn capability_warning_runs(cx: &Ctx<'_>) -> Option<(Vec<ComputeCapability>, ComputeCapability)> {
    let value = |m: &ObservedMessage, name: &str| m.values.get(name).and_then(|v| v.trim().parse().ok());
    let ranges: Vec<(ComputeCapability, ComputeCapability)> =
        cx.s.messages
            .iter()
            .filter(|m| m.id == "torch.min_max_capability")
            .filter_map(|m| Some((value(m, "min_cc")?, value(m, "max_cc")?)))
            .collect();
    let mut warned: Vec<ComputeCapability> =
        cx.s.messages.iter().filter(|m| m.id == "torch.gpu_too_old").filter_map(|m| value(m, "cc")).collect();
    if warned.is_empty() {
        warned = cx.capabilities();
    }
    warned.sort();
    warned.dedup();
    let runs = |cc: &ComputeCapability| {
        ranges
            .iter()
            .any(|&(min, max)| *cc >= min && (*cc <= max || matches!(coverage(&[max], &[], *cc), Coverage::Sass(_))))
    };
    let max = ranges.iter().map(|&(_, max)| max).max()?;
    (!warned.is_empty() && warned.iter().all(runs)).then_some((warned, max))
}

/// A row's meaning with the values of its first pasted line in place of the `name`s it quotes
/// ("needs a driver supporting CUDA `required_cuda`" → "… CUDA 11.0").
///
/// A name the line did not capture (another spelling of the message, without that value) is not
/// shown as a name: its parenthetical (" (`image_cuda`)") goes, and elsewhere the name is left.
pub(super) fn with_values(meaning: &str, m: &ObservedMessage, pattern: &str) -> String {
    let filled =
        m.values.iter().fold(meaning.to_owned(), |text, (name, value)| text.replace(&format!("`{name}`"), value));
    group_names(pattern)
        .filter(|name| !m.values.contains_key(*name))
        .fold(filled, |text, name| text.replace(&format!(" (`{name}`)"), ""))
}

/// The names of a pattern's capture groups (`(?P<name>…)`), read from its text.
fn group_names(pattern: &str) -> impl Iterator<Item = &str> {
    pattern.split("(?P<").skip(1).filter_map(|rest| rest.split_once('>').map(|(name, _)| name))
}

/// The values a row names for the CUDA level its program needs from the driver:
/// nvidia-container-cli's `cuda>=11.0` (`required_cuda`; its own words: "please update your driver
/// to a newer version, or use an earlier cuda container"), nvidia-docker 1.0's image CUDA
/// (`image_cuda`).
const NEEDED_CUDA: [&str; 2] = ["required_cuda", "image_cuda"];

/// The value a row names for the driver branch its program asks for (ollama's
/// `required_driver="570 or newer"`).
const NEEDED_BRANCH: &str = "required_driver";

/// For a message that names the CUDA level or driver branch its program needs: what it needs, in
/// words (the first driver of that CUDA, from the knowledge base's release table), and the driver
/// plan; `None` when the message names neither, the table lacks it, or the known driver already
/// supports it.
fn needed_driver(cx: &Ctx<'_>, m: &ObservedMessage) -> Option<(String, PlanTarget)> {
    if let Some(branch) = m.values.get(NEEDED_BRANCH).and_then(|b| b.parse::<u32>().ok()) {
        if cx.driver.version.as_ref().is_some_and(|d| d.major() >= branch) {
            return None;
        }
        let words = format!(
            "It asks for the {branch} driver branch or newer; a release of the program built for the CUDA the \
             installed driver supports (`nvidia-smi` prints it in its header) also runs."
        );
        return Some((words, PlanTarget::Driver { min_branch: Some(branch) }));
    }
    let needed: CudaVersion = NEEDED_CUDA.iter().find_map(|name| m.values.get(*name)?.parse().ok())?;
    if cx.driver_cuda().is_some_and(|c| c >= needed) {
        return None;
    }
    let os = if cx.os == OsFamily::Windows { OsFamily::Windows } else { OsFamily::Linux };
    let floor = cx.kb.cuda.full_driver(needed, os)?;
    let windows = match cx.kb.cuda.full_driver(needed, OsFamily::Windows) {
        Some(w) if os == OsFamily::Linux && cx.os != OsFamily::Linux => format!(" ({w} or newer on Windows and WSL)"),
        _ => String::new(),
    };
    let words = format!(
        "CUDA {needed} needs driver {floor} or newer{windows}, its first driver (the CUDA release notes' driver \
         table); an image or build for the CUDA the installed driver supports (`nvidia-smi` prints it in its \
         header) also runs."
    );
    Some((words, PlanTarget::Driver { min_branch: Some(floor.major()) }))
}

/// For a message that says the driver is too old for the torch build, on a machine whose driver's CUDA
/// level is known and whose torch build is not (pasted text): the two ways out in words, the newest torch
/// line the knowledge base lists for a CUDA this driver runs (for the GPUs' capabilities, where known) with
/// its command, and the driver the newest torch build needs. `None` for another message or emitter, a
/// known torch (the fact-based rules judge it), or an unknown driver level.
fn build_for_driver(cx: &Ctx<'_>, known: &KnownMessage) -> Option<String> {
    let torch_message = known.printed_by.as_ref().map_or(known.id.starts_with("torch."), |p| p.package == "torch");
    if known.category != Category::DriverTooOldForRuntime
        || !torch_message
        || cx.frameworks().any(|(_, f)| f.name == "torch")
    {
        return None;
    }
    let level = cx.driver_cuda()?;
    let ccs = cx.capabilities();
    let fits = cx.kb.pytorch.recommend(&ccs, Some(level), None)?;
    let cmd = super::fix::install_torch(cx, fits);
    let os = if cx.os == OsFamily::Windows { OsFamily::Windows } else { OsFamily::Linux };
    let newer = cx
        .kb
        .pytorch
        .recommend(&ccs, None, None)
        .filter(|n| n.cuda > level)
        .and_then(|n| Some((n, cx.kb.cuda.full_driver(n.cuda, os)?)))
        .map_or_else(String::new, |(n, d)| {
            format!(" Or update the driver: torch {} built for CUDA {} needs driver {d} or newer.", n.torch, n.cuda)
        });
    Some(format!(
        "Install torch {} built for CUDA {}, the newest line this driver (CUDA up to {level}) runs: {cmd}.{newer}",
        fits.torch, fits.cuda
    ))
}

/// The CUDA level the text says the program needs: a value of the message (CUDA.jl's
/// `toolkit_cuda`, cuda-python's `built_major`), a framework build (`+cu121`, `cupy-cuda12x`) or a
/// pip `nvidia-*-cuNN` wheel; the highest, with what names it and whether only its major is known.
fn needed_cuda(cx: &Ctx<'_>, observed: &[&ObservedMessage]) -> Option<(CudaVersion, String, bool)> {
    let mut found: Vec<(CudaVersion, String, bool)> = Vec::new();
    for m in observed {
        if let Some(v) = m.values.get("toolkit_cuda").and_then(|v| v.parse::<CudaVersion>().ok()) {
            found.push((v, format!("the CUDA {v} toolkit the line names"), false));
        }
        if let Some(major) = m.values.get("built_major").and_then(|v| v.parse::<u32>().ok()) {
            found.push((CudaVersion::new(major, 0), format!("a build for CUDA {major}"), true));
        }
    }
    for (_, f) in cx.frameworks() {
        if let Some((cuda, major_only)) = build_cuda(f) {
            found.push((cuda, format!("{} {}", f.name, f.version), major_only));
        }
    }
    for env in cx.envs() {
        for p in &env.cuda_wheels {
            if let Some(major) = wheel_cuda_major(p) {
                found.push((CudaVersion::new(major, 0), format!("{} {}", p.name, p.version), true));
            }
        }
    }
    found.into_iter().max_by_key(|(v, _, major_only)| (*v, !*major_only))
}

/// The driver a CUDA level needs on this OS: the first driver of that release, or for a level of
/// which only the major is known, the lowest driver that starts that major.
fn driver_floor(cx: &Ctx<'_>, cuda: CudaVersion, major_only: bool) -> Option<String> {
    let os = if cx.os == OsFamily::Windows { OsFamily::Windows } else { OsFamily::Linux };
    let floor = if major_only { cx.kb.cuda.floor(cuda.major, os) } else { None };
    floor.or_else(|| cx.kb.cuda.full_driver(cuda, os)).map(ToString::to_string)
}

/// For a driver too old for the CUDA the program was built for, where the text names that CUDA
/// (a build, a wheel, a value of the line) and not a driver that supports it: what it needs, in
/// words for the finding's detail, and the driver plan of that floor, whose fix the driver planner
/// writes. `None` for another category or when the text names no such CUDA.
fn build_driver(cx: &Ctx<'_>, known: &KnownMessage, observed: &[&ObservedMessage]) -> Option<(String, PlanTarget)> {
    if known.category != Category::DriverTooOldForRuntime {
        return None;
    }
    let (cuda, what, major_only) = needed_cuda(cx, observed)?;
    if cx.driver_cuda().is_some_and(|have| have >= cuda) {
        return None;
    }
    let floor = driver_floor(cx, cuda, major_only)?;
    let branch: u32 = floor.split('.').next()?.parse().ok()?;
    let level = if major_only { format!("CUDA {}", cuda.major) } else { format!("CUDA {cuda}") };
    let words = format!(
        "{what} is built for {level}, which needs driver {floor} or newer (the CUDA release notes' driver table); a \
         build for the CUDA the installed driver supports (`nvidia-smi` prints it in its header) also runs."
    );
    Some((words, PlanTarget::Driver { min_branch: Some(branch) }))
}

/// Adds to each finding, as evidence, the pasted error lines it explains (at most three) that its
/// evidence does not quote already, so a finding drawn from facts also shows the symptom the user saw.
pub(super) fn cite(cx: &Ctx<'_>, out: &mut [Finding]) {
    for f in out.iter_mut().filter(|f| !f.id.starts_with("observed.")) {
        let explained = cx.s.messages.iter().filter(|m| {
            cx.kb.errors.message.iter().any(|k| k.id == m.id && explains(&f.id, f.category, k) && printed_here(cx, k))
        });
        let mut added = 0;
        for m in explained {
            if added == 3 {
                break;
            }
            if !f.evidence.iter().any(|e| e.contains(m.line.as_str())) {
                f.evidence.push(format!("pasted line: {}", m.line));
                added += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A finding that quotes a pasted line itself does not get it again as an explained line (FFmpeg's
    /// line from styler00dollar/VSGAN-tensorrt-docker#42, which the video finding quotes).
    #[test]
    fn an_explained_line_the_finding_quotes_is_not_added_twice() {
        let kb = gpu_doctor_kb::Kb::get().unwrap();
        let snap = gpu_doctor_probes::parse::paste::read_pasted(
            "[hevc_nvenc @ 0x55ca461fa380] Cannot load libnvidia-encode.so.1\n\
             [hevc_nvenc @ 0x55ca461fa380] The minimum required Nvidia driver for nvenc is (unknown) or newer\n",
            kb,
        )
        .unwrap();
        let f = crate::diagnose::diagnose(&snap, kb)
            .into_iter()
            .find(|f| f.id == "presence.video_codec_libs_missing")
            .unwrap();
        let quoting = |text: &str| f.evidence.iter().filter(|e| e.contains(text)).count();
        assert_eq!(quoting("Cannot load libnvidia-encode.so.1"), 1, "{:#?}", f.evidence);
        assert_eq!(quoting("The minimum required Nvidia driver"), 1, "{:#?}", f.evidence);
    }

    /// nvidia-docker 1.0's first betas printed `unsupported CUDA version: 7.5 < 6.5` without the words
    /// that name the two versions (NVIDIA/nvidia-docker#68): the title says no group name.
    #[test]
    fn a_message_without_a_value_its_meaning_names_shows_no_group_name() {
        let kb = gpu_doctor_kb::Kb::get().unwrap();
        let snap = gpu_doctor_probes::parse::paste::read_pasted(
            "nvidia-docker | 2016/04/09 00:07:59 Error: unsupported CUDA version: 7.5 < 6.5\n",
            kb,
        )
        .unwrap();
        let f = crate::diagnose::diagnose(&snap, kb)
            .into_iter()
            .find(|f| f.id == "observed.container.unsupported_cuda_version")
            .unwrap();
        assert!(!f.summary.contains('`') && !f.detail.contains("`image_cuda`"), "{}\n{}", f.summary, f.detail);
        assert!(f.summary.starts_with("nvidia-docker 1.0: The image is built on a newer CUDA than"), "{}", f.summary);
        let names: Vec<&str> = group_names(r"driver (?P<driver_cuda>\d+) < image (?P<image_cuda>\d+)").collect();
        assert_eq!(names, ["driver_cuda", "image_cuda"]);
    }

    #[test]
    fn a_message_finding_is_titled_by_its_program_and_its_first_sentence() {
        assert_eq!(short_emitter("PyTorch c10/cuda/CUDAFunctions.cpp (device_count_ensure_non_zero)"), "PyTorch");
        assert_eq!(short_emitter("CUDA runtime, cudaErrorInsufficientDriver (35)"), "CUDA runtime");
        assert_eq!(short_emitter("llama.cpp / ggml ggml-cuda.cu (ggml_cuda_init)"), "llama.cpp / ggml");
        assert_eq!(short_emitter("TensorFlow/XLA stream_executor cuda_driver.cc"), "TensorFlow/XLA stream_executor");
        assert_eq!(first_sentence("The driver is too old. Update it."), "The driver is too old.");
        assert_eq!(first_sentence("Built for sm_86, e.g. an RTX 3090. It fails"), "Built for sm_86, e.g. an RTX 3090.");
        assert_eq!(first_sentence("CUDA 12.8 needs driver 570"), "CUDA 12.8 needs driver 570");
        // Every row of the catalogue gets a short name that names no source path.
        let kb = gpu_doctor_kb::Kb::get().unwrap();
        for m in &kb.errors.message {
            let short = short_emitter(&m.emitter);
            assert!(!short.is_empty() && !short.contains(" ("), "{}: {short:?}", m.id);
            // No path or source file after the program's first word (a first word may hold a `/`:
            // `TensorFlow/XLA`).
            let file =
                |w: &str| (w.contains('/') && w != "/") || [".cc", ".cu", ".py", ".go"].iter().any(|e| w.ends_with(e));
            assert!(!short.split(' ').skip(1).any(file), "{}: {short:?}", m.id);
        }
        let line = "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n";
        let snap = gpu_doctor_probes::parse::paste::read_pasted(line, kb).unwrap();
        let f = crate::diagnose::diagnose(&snap, kb).into_iter().find(|f| f.id == "observed.cuda.devices_unavailable");
        let f = f.unwrap();
        assert_eq!(
            f.summary,
            "CUDA runtime: Every visible GPU is in Exclusive_Process or Prohibited compute mode and taken, or otherwise \
             refuses new contexts."
        );
        assert!(f.detail.contains("(Printed by CUDA runtime, cudaErrorDevicesUnavailable (46)"), "{}", f.detail);
    }
}
