//! CUDA environment variables: `CUDA_VISIBLE_DEVICES` that hides every GPU, names GPUs that do not exist or
//! uses a form CUDA does not read; `CUDA_LAUNCH_BLOCKING=1` left set.

use super::{Ctx, Rule, fix};
use gpu_doctor_model::{Category, Change, Finding, GPUS_IN_WORDS, PlanTarget, Severity};
use gpu_doctor_model::{FrameworkBuild, Gpu, ObservedMessage};

const SOURCE: &str = "CUDA Programming Guide, CUDA environment variables \
    (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars): a comma-separated list of indices, \
    GPU UUIDs (a unique prefix is enough) or MIG UUIDs; devices after an invalid entry are hidden";

const VAR: &str = "CUDA_VISIBLE_DEVICES";

pub(super) const HIDES_ALL: Rule = Rule {
    id: "env.cuda_visible_devices_hides_all",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "CUDA_VISIBLE_DEVICES leaves no GPU visible (empty, -1, NoDevFiles, or its first entry is invalid or \
              names a GPU that does not exist) while the driver lists GPUs; or, the GPU list unknown, its first entry \
              is an index of 1 or more and the program saw no GPU (\"no CUDA-capable device\", \"No CUDA GPUs are \
              available\", TensorFlow's cuInit CUDA_ERROR_NO_DEVICE or, \
              the error not shown, the diagnostic it logs only after cuInit failed, device_count() 0, is_available() False \
              of a CUDA build or of one the text does not show, or, no CPU build shown, the text saying the work ran \
              on the CPU), or every index is at or past \
              the GPU count the text states in words (\"I only have one GPU\"); or, its value not in the text, \
              PyTorch said \"No CUDA GPUs are available\" while the same text shows PyTorch seeing a GPU \
              (is_available() True, a device count), or a program saw no device and the text shows it started by a \
              shell script on a host (not a container, not WSL): the driver answered and counted no device for that \
              process alone, which is what the variable set by the script or config does. With neither sign, CUDA's \
              or PyTorch's no-device line on a host (not WSL, not a container) where nothing else says the driver \
              sees no GPU (nvidia-smi's or NVML's failures, an empty GPU list, a missing or old driver) and PyTorch \
              is not shown seeing one: a warning, the likeliest cause.",
    source: HIDES_ALL_SOURCE,
};

/// Where "No CUDA GPUs are available" comes from, and the threads where a launch script's CUDA_VISIBLE_DEVICES was
/// the cause while PyTorch saw the GPU in a plain shell.
const HIDES_ALL_SOURCE: &str = "CUDA Programming Guide, CUDA environment variables \
    (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars): a comma-separated list of indices, \
    GPU UUIDs (a unique prefix is enough) or MIG UUIDs; devices after an invalid entry are hidden; \
    pytorch/pytorch:c10/cuda/CUDAFunctions.cpp@v2.5.0 (device_count_ensure_non_zero: TORCH_CHECK(count, \"No CUDA \
    GPUs are available\") after device_count_impl, which turns cudaErrorNoDevice into 0 and a missing or old driver \
    into its own errors); KeYang8/WITT#34, LiYingwei/ShapeTextureDebiasedTraining#12, mazurowski-lab/finetune-SAM#18 \
    (is_available() True in a shell, the project's script or config selecting a GPU index the machine lacks)";

pub(super) const UNKNOWN_DEVICE: Rule = Rule {
    id: "env.cuda_visible_devices_unknown_device",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "CUDA_VISIBLE_DEVICES names a GPU index or UUID that does not exist after valid ones: CUDA stops there, \
              so the devices listed after it are hidden too.",
    source: SOURCE,
};

pub(super) const FORM: Rule = Rule {
    id: "env.cuda_visible_devices_form",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "CUDA_VISIBLE_DEVICES uses a form CUDA and the frameworks do not read: `cuda:0`, `GPU0`, spaces, \
              brackets or quotes, `0-3` ranges, empty entries.",
    source: SOURCE,
};

pub(super) const LAUNCH_BLOCKING: Rule = Rule {
    id: "env.cuda_launch_blocking",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "CUDA_LAUNCH_BLOCKING=1 is set: every kernel launch waits for the GPU, a debugging aid that slows all \
              work down.",
    source: "CUDA Programming Guide, CUDA environment variables (CUDA_LAUNCH_BLOCKING)",
};

pub(super) const TOOLKIT_ROOT: Rule = Rule {
    id: "env.cuda_home_not_a_toolkit_root",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "CUDA_HOME or CUDA_PATH is not one toolkit folder: a list (`/usr/local/cuda:` or `…:$CUDA_HOME`), a \
              `$VAR` left unexpanded, or the toolkit's `bin` folder or nvcc itself instead of the folder above them.",
    source: "torch.utils.cpp_extension (CUDA_HOME/bin/nvcc, CUDA_HOME/include); CUDA Installation Guide, \
             post-installation actions; facebookresearch/maskrcnn-benchmark#132 and feihuzhang/GANet#8",
};

pub(super) const SET_IN_PROCESS: Rule = Rule {
    id: "env.cuda_visible_devices_set_after_init",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "CUDA_VISIBLE_DEVICES is set from inside the program (Python's `os.environ[…] = …`, a Hydra config's \
              `job.env_set`, which Hydra sets just before the task function): CUDA reads it once, \
              when it initializes, so set after `import torch` (or anything that initializes CUDA) it changes \
              nothing and the program keeps GPU 0.",
    source: "CUDA Programming Guide, CUDA environment variables (read when the CUDA driver initializes); \
             open-mmlab/mmdetection3d#1020 and AUTOMATIC1111/stable-diffusion-webui#442 (maintainers: set it before \
             importing torch, or in the shell); facebookresearch/hydra:hydra/core/utils.py (run_job: \
             env_override(hydra.job.env_set) around the task function)",
};

const MIG_SOURCE: &str = "NVIDIA MIG User Guide, \"CUDA Device Enumeration\" and \"CUDA_VISIBLE_DEVICES\" \
    (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/mig-device-names.html#cuda-device-enumeration): a CUDA \
    process enumerates one MIG device, named in CUDA_VISIBLE_DEVICES by its MIG-<UUID> (drivers from R470) or \
    MIG-<GPU-UUID>/<GI>/<CI> (R450, R460); pytorch/pytorch#130181 and #131650 (maintainer: set CUDA_VISIBLE_DEVICES \
    to the MIG device)";

pub(super) const MIG_UNSET: Rule = Rule {
    id: "env.mig_visible_devices_unset",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "A GPU in MIG mode (nvidia-smi's \"MIG M.\" Enabled, `nvidia-smi -L` MIG devices, a MIG-… device \
              named in a variable) sits beside another GPU and CUDA_VISIBLE_DEVICES is not set (or not shown) to one \
              MIG device: a CUDA process enumerates one MIG device while NVML counts the GPUs, so frameworks that ask \
              both disagree (PyTorch's `device >= 0 && device < num_gpus` assert). One GPU split into MIG devices \
              alone is not flagged: CUDA takes its first.",
    source: MIG_SOURCE,
};

pub(super) const SEVERAL_ON_MIG: Rule = Rule {
    id: "env.cuda_visible_devices_several_on_mig",
    category: Category::EnvVarMisconfig,
    severity: Severity::Warning,
    trigger: "CUDA_VISIBLE_DEVICES lists more than one device while GPUs are in MIG mode: a CUDA process enumerates \
              one MIG device, so a list of GPU indices or several MIG devices does not give it several GPUs.",
    source: MIG_SOURCE,
};

pub(super) const DRIVER_PATH: Rule = Rule {
    id: "env.cuda_driver_path_names_runtime",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "NUMBA_CUDA_DRIVER (NUMBAPRO_CUDA_DRIVER before numba 0.36) names a file that is not the driver's \
              libcuda (the CUDA runtime's libcudart, a toolkit library): numba loads that file as the CUDA driver \
              and stops at the first driver function it lacks (`driver missing function: cuInit`).",
    source: "numba/numba:numba/cuda/cudadrv/driver.py@0.35.0 (find_driver: NUMBAPRO_CUDA_DRIVER's path is loaded as the \
             driver; MISSING_FUNCTION_ERRMSG `driver missing function: %s`) and @0.60.0 (config.CUDA_DRIVER, \
             numba/core/config.py: NUMBA_CUDA_DRIVER)",
};

pub(super) const XLA_MEM_FRACTION: Rule = Rule {
    id: "env.xla_mem_fraction_out_of_range",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "XLA_PYTHON_CLIENT_MEM_FRACTION is not a fraction between 0 and 1 (`100` meant as a percentage, `0`, a \
              negative number, text): JAX preallocates that share of the GPU's available memory, so a value above 1 \
              asks for more than the GPU has and leaves nothing for cuDNN, cuBLAS and NCCL, whose allocations then \
              fail.",
    source: "jax-ml/jax:docs/gpu_memory_allocation.rst (`XLA_PYTHON_CLIENT_MEM_FRACTION=.XX`: preallocate XX% of \
             currently-available GPU memory instead of the default); jax-ml/jax#17426 (maintainer: the variable is a \
             ratio, 0.75 is typical, and `100` is a mistake)",
};

pub(super) const ALLOC_CONF_AFTER_IMPORT: Rule = Rule {
    id: "env.alloc_conf_set_after_import",
    category: Category::EnvVarMisconfig,
    severity: Severity::Error,
    trigger: "PyTorch's `Allocator backend parsed at runtime != allocator backend parsed at load time`: the allocator \
              backend is chosen from PYTORCH_CUDA_ALLOC_CONF once, when torch is loaded, and the variable's `backend:` \
              read again when CUDA starts names another, so the variable was set or changed after `import torch` \
              (os.environ in the script, or a package that imported torch before the script set it).",
    source: "pytorch/pytorch:c10/cuda/CUDAAllocatorConfig.cpp@01f9ef32eae5ef513002dd44902c23cbe6be3aae \
             (parseAllocatorConfig's assert against the allocator chosen at load time); pytorch/pytorch#104801 \
             (maintainer: set before the import it works, after it this assert)",
};

const ALLOC_CONF: &str = "PYTORCH_CUDA_ALLOC_CONF";

/// The allocator backend changed after torch loaded ([`ALLOC_CONF_AFTER_IMPORT`]).
fn alloc_conf_after_import(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(m) = cx.s.messages.iter().find(|m| m.id == "torch.alloc_backend_changed_after_load") else { return };
    let (runtime, load) = (m.values.get("runtime"), m.values.get("load"));
    let which = match (runtime, load) {
        (Some(r), Some(l)) => format!(" (`backend:{r}` now, `{l}` when torch was loaded)"),
        _ => String::new(),
    };
    let mut evidence = vec![format!("pasted line: {}", m.line)];
    evidence.extend(cx.s.env.vars.get(ALLOC_CONF).map(|v| format!("{ALLOC_CONF}={v}")));
    out.push(ALLOC_CONF_AFTER_IMPORT.finding(
        format!("{ALLOC_CONF} changed the allocator backend after torch was loaded"),
        format!(
            "PyTorch picks its CUDA allocator (native or cudaMallocAsync) from {ALLOC_CONF} when torch is imported, \
             and checks the variable again when CUDA starts: the two disagree{which}, so the variable was set or \
             changed after `import torch`, by the script's os.environ or after a package that imports torch had \
             already loaded it."
        ),
        evidence,
        Some(format!(
            "Set {ALLOC_CONF} before Python starts (`{ALLOC_CONF}=backend:cudaMallocAsync python your_script.py`, or \
             `ENV`/`environment:` for a container), or make the `os.environ[\"{ALLOC_CONF}\"]` line the first of the \
             script, before any import that loads torch; leave `backend:` out if the default allocator will do."
        )),
    ));
}

const MEM_FRACTION: &str = "XLA_PYTHON_CLIENT_MEM_FRACTION";

/// A preallocation share that is no fraction of the memory ([`XLA_MEM_FRACTION`]).
fn xla_mem_fraction(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(value) = cx.s.env.vars.get(MEM_FRACTION) else { return };
    let fraction = value.trim().parse::<f64>().ok().filter(|f| f.is_finite());
    if fraction.is_some_and(|f| f > 0.0 && f <= 1.0) {
        return;
    }
    let meant = match fraction {
        Some(f) if f > 1.0 && f < 100.0 => format!(" (for {f}% write {})", f / 100.0),
        _ => String::new(),
    };
    out.push(XLA_MEM_FRACTION.finding(
        format!("{MEM_FRACTION}={value} is not a fraction of the GPU's memory"),
        format!(
            "JAX preallocates {MEM_FRACTION} times the GPU memory that is free when it starts; the value must be a \
             number above 0 and at most 1. `{value}` asks for {} so JAX's allocator, or the libraries that need \
             memory of their own beside it (cuDNN, cuBLAS, NCCL), fail.",
            if fraction.is_some_and(|f| f > 1.0) { "more than the GPU has," } else { "no usable share," }
        ),
        vec![format!("{MEM_FRACTION}={value}")],
        Some(format!(
            "Set it to a fraction{meant}: `{}` (or `os.environ[\"{MEM_FRACTION}\"] = \".75\"` \
             before JAX is imported), leaving room for the CUDA libraries; or unset it for JAX's default, or set \
             XLA_PYTHON_CLIENT_PREALLOCATE=false to allocate on demand.",
            fix::var_line(cx, MEM_FRACTION, ".75")
        )),
    ));
}

/// The variables through which numba is told where the driver's library is: today's name, and numbapro's.
const DRIVER_PATH_VARS: [&str; 2] = ["NUMBA_CUDA_DRIVER", "NUMBAPRO_CUDA_DRIVER"];

/// A driver-path variable whose file is not libcuda ([`DRIVER_PATH`]).
fn driver_path(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for name in DRIVER_PATH_VARS {
        let Some(value) = cx.s.env.vars.get(name) else { continue };
        let file = value.trim().rsplit(['/', '\\']).next().unwrap_or_default();
        let driver = file.starts_with("libcuda.so") || file.eq_ignore_ascii_case("nvcuda.dll");
        if file.is_empty() || driver {
            continue;
        }
        let runtime = file.starts_with("libcudart") || file.starts_with("cudart");
        out.push(DRIVER_PATH.finding(
            format!("{name} names {file}, not the driver's library"),
            format!(
                "numba loads the file {name} names as the CUDA driver and looks up the driver's functions in it \
                 (cuInit first). {} has none of them, so numba stops with `driver missing function: cuInit` \
                 however the driver itself is installed.",
                if runtime { "The CUDA runtime (libcudart) sits above the driver and" } else { "That library" }
            ),
            vec![format!("{name}={value}")],
            Some(format!(
                "Point it at the driver's library or unset it, so numba finds the driver by itself: `unset {name}` \
                 (and remove it from ~/.bashrc), or `export NUMBA_CUDA_DRIVER=/usr/lib/x86_64-linux-gnu/libcuda.so.1` \
                 (`ldconfig -p | grep -F libcuda.so.1` shows where it is)."
            )),
        ));
    }
}

/// With the container's video capability (`video::CAPABILITY_MISSING`), which the video family judges, and the
/// toolkit's stub libcuda on the loader's path (`libcuda::STUB_ON_PATH`), which the libcuda family judges.
pub(super) const RULES: &[Rule] = &[
    HIDES_ALL,
    UNKNOWN_DEVICE,
    FORM,
    LAUNCH_BLOCKING,
    TOOLKIT_ROOT,
    SET_IN_PROCESS,
    MIG_UNSET,
    SEVERAL_ON_MIG,
    DRIVER_PATH,
    XLA_MEM_FRACTION,
    ALLOC_CONF_AFTER_IMPORT,
    super::video::CAPABILITY_MISSING,
    super::libcuda::STUB_ON_PATH,
    super::libcuda::CAPABILITY_LACKS_COMPUTE,
];

/// What shows that GPUs are in MIG mode: evidence lines, the MIG devices' UUIDs, and whether a GPU in MIG mode
/// sits beside another GPU.
struct MigSeen {
    evidence: Vec<String>,
    uuids: Vec<String>,
    several: bool,
}

fn mig_seen(cx: &Ctx<'_>) -> Option<MigSeen> {
    let mut evidence = Vec::new();
    let mut uuids: Vec<String> = Vec::new();
    let gpus = cx.raw_gpus().unwrap_or_default();
    let mut mig_gpus: Vec<u32> = Vec::new();
    for g in gpus.iter().filter(|g| g.mig_enabled == Some(true)) {
        mig_gpus.push(g.index);
        evidence.push(format!("GPU {} {}: MIG mode enabled", g.index, g.name.as_deref().unwrap_or("(name unknown)")));
    }
    for g in cx.s.topology.value().map(|t| t.gpus.as_slice()).unwrap_or_default() {
        let Some(m) = g.mig.as_ref().filter(|m| m.enabled) else { continue };
        if !mig_gpus.contains(&g.index) {
            mig_gpus.push(g.index);
            evidence.push(format!("GPU {}: MIG mode enabled", g.index));
        }
        for i in m.instances.iter().flatten() {
            if let Some(u) = &i.uuid {
                uuids.push(u.clone());
            }
        }
    }
    for (name, value) in cx.s.env.vars.iter().filter(|(n, _)| n.as_str() != VAR) {
        for tok in value.split(',').map(str::trim).filter(|t| t.starts_with("MIG-")) {
            evidence.push(format!("{name}=\"{value}\" names a MIG device"));
            if !uuids.iter().any(|u| u == tok) {
                uuids.push(tok.to_owned());
            }
        }
    }
    if evidence.is_empty() {
        return None;
    }
    // A GPU in MIG mode beside any other GPU (in MIG mode or whole, or not saying): NVML counts the GPUs while
    // CUDA gives the process one MIG device, so frameworks that ask both disagree (pytorch/pytorch#131650). One
    // GPU split into several MIG devices is not that: CUDA takes its first MIG device, as documented.
    let listed = gpus.len().max(cx.s.topology.value().map_or(0, |t| t.gpus.len()));
    let several = !mig_gpus.is_empty() && listed >= 2;
    Some(MigSeen { evidence, uuids, several })
}

/// The plan that gives the process one MIG device: the first one listed, or the words to find one.
fn one_mig_device(seen: &MigSeen) -> PlanTarget {
    let goal = "CUDA sees the one MIG device it is given";
    match seen.uuids.first() {
        Some(uuid) => fix::change(
            None,
            goal,
            vec![
                fix::set_var(VAR, uuid),
                Change::Manual {
                    text: "Run one process per MIG device, each with its own MIG-… UUID from `nvidia-smi -L`; a job \
                           that needs several GPUs needs MIG mode off (`sudo nvidia-smi -i <gpu> -mig 0`)."
                        .into(),
                },
            ],
        ),
        None => fix::change(
            None,
            goal,
            vec![Change::Manual {
                text: "List the MIG devices with `nvidia-smi -L` and start each process with one of them: \
                       `CUDA_VISIBLE_DEVICES=MIG-<uuid> python your_script.py` (the UUID as `nvidia-smi -L` prints it). \
                       A job that needs several GPUs needs MIG mode off (`sudo nvidia-smi -i <gpu> -mig 0`)."
                    .into(),
            }],
        ),
    }
}

/// GPUs in MIG mode with CUDA_VISIBLE_DEVICES unset (or not shown), or listing several devices.
fn mig(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(seen) = mig_seen(cx) else { return };
    match cx.s.env.vars.get(VAR) {
        None if seen.several => {
            let mut evidence = seen.evidence.clone();
            evidence.push("CUDA_VISIBLE_DEVICES: not set, or not in the pasted text".to_owned());
            out.push(
                MIG_UNSET
                    .finding(
                        "GPUs are in MIG mode and CUDA_VISIBLE_DEVICES does not name a MIG device",
                        "In MIG mode a CUDA process enumerates one MIG device. Without CUDA_VISIBLE_DEVICES naming \
                         it, the process takes whichever it finds first, and frameworks that count GPUs through NVML \
                         (PyTorch) count more devices than CUDA gives them, which ends in errors such as \
                         `device >= 0 && device < num_gpus INTERNAL ASSERT FAILED`.",
                        evidence,
                        None,
                    )
                    .with_plan(one_mig_device(&seen)),
            );
        }
        Some(value) => {
            let entries: Vec<&str> = value.split(',').map(str::trim).filter(|e| !e.is_empty()).collect();
            if entries.len() < 2 {
                return;
            }
            let mut evidence = vec![format!("CUDA_VISIBLE_DEVICES=\"{value}\" ({} devices)", entries.len())];
            evidence.extend(seen.evidence.iter().cloned());
            out.push(
                SEVERAL_ON_MIG
                    .finding(
                        format!("CUDA_VISIBLE_DEVICES lists {} devices on GPUs in MIG mode", entries.len()),
                        "In MIG mode a CUDA process enumerates one MIG device, so listing several GPU indices or MIG \
                         devices does not give it several GPUs: CUDA and the frameworks disagree on how many there \
                         are (PyTorch's `num_gpus` asserts), or the process gets only the first.",
                        evidence,
                        None,
                    )
                    .with_plan(one_mig_device(&seen)),
            );
        }
        None => {}
    }
}

/// CUDA_VISIBLE_DEVICES set by the program itself: it counts only before CUDA initializes.
/// `value` is `None` where the program computes it (`os.environ[…] = args.gpu_devices`).
fn set_in_process(cx: &Ctx<'_>, value: Option<&str>) -> Finding {
    let word = fix::word(cx, value.unwrap_or("0"));
    let (title, evidence) = match value {
        Some(value) => (
            format!("CUDA_VISIBLE_DEVICES=\"{value}\" is set from inside the program"),
            format!(
                "CUDA_VISIBLE_DEVICES=\"{value}\", and the pasted code sets it inside the running program (Python's \
                 os.environ[\"CUDA_VISIBLE_DEVICES\"], or a Hydra config's job.env_set, which Hydra sets just before it \
                 calls the task function)"
            ),
        ),
        None => (
            "CUDA_VISIBLE_DEVICES is set from inside the program".to_owned(),
            "os.environ[\"CUDA_VISIBLE_DEVICES\"] = <a value the program computes> in the pasted code".to_owned(),
        ),
    };
    SET_IN_PROCESS.finding(
        title,
        "CUDA reads CUDA_VISIBLE_DEVICES once, when it initializes. Set with `os.environ[...]` after `import torch`, \
         `import tensorflow` or a module that imports them, it changes nothing: the program still sees every GPU \
         and uses GPU 0.",
        vec![evidence],
        Some(format!(
            "Set it before the program starts, in the shell that runs it (`CUDA_VISIBLE_DEVICES={word} python \
             your_script.py`; in a Windows batch file `set CUDA_VISIBLE_DEVICES={word}`), or make the `os.environ` \
             line the first thing the script does, before any `import torch`."
        )),
    )
}

/// One entry of the list, as CUDA reads it.
#[derive(Debug, PartialEq)]
enum Entry {
    Index(u32),
    /// A `GPU-…` UUID or prefix.
    Uuid(String),
    /// A `MIG-…` UUID: valid, but not checkable against the GPU list.
    Mig(String),
    /// `-1` (or another negative number): hides what follows on purpose.
    Hide,
    /// Certainly not a device: CUDA stops here. `fixed` are the indices meant, when they can be told.
    Bad {
        text: String,
        why: &'static str,
        fixed: Vec<String>,
    },
    /// A form the frameworks do not accept and CUDA may not read as meant (spaces, ranges).
    Unclear {
        text: String,
        why: &'static str,
        fixed: Vec<String>,
    },
}

fn classify(raw: &str) -> Entry {
    let t = raw.trim();
    if t != raw && !t.is_empty() {
        let fixed = fixed_tokens(&classify(t), t);
        return Entry::Unclear { text: raw.to_owned(), why: "spaces around an entry", fixed };
    }
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let bad = |why, fixed: Vec<String>| Entry::Bad { text: raw.to_owned(), why, fixed };
    let lower = t.to_ascii_lowercase();
    if digits(t)
        && let Ok(i) = t.parse::<u32>()
    {
        Entry::Index(i)
    } else if t.starts_with('-') && digits(&t[1..]) {
        Entry::Hide
    } else if t.starts_with("GPU-") {
        Entry::Uuid(t.to_owned())
    } else if t.starts_with("MIG-") {
        Entry::Mig(t.to_owned())
    } else if t.is_empty() {
        bad("an empty entry", Vec::new())
    } else if let Some(n) = lower.strip_prefix("cuda:").filter(|n| digits(n)) {
        bad("a framework's device name (cuda:N), not an index", vec![n.to_owned()])
    } else if let Some(n) = lower.strip_prefix("gpu").filter(|n| digits(n)) {
        bad("GPUn is not an index (nor a GPU-… UUID)", vec![n.to_owned()])
    } else if t.contains(['[', ']', '"', '\'', '(', ')']) {
        let inner = t.trim_matches(|c| matches!(c, '[' | ']' | '"' | '\'' | '(' | ')'));
        let fixed = if digits(inner) { vec![inner.to_owned()] } else { Vec::new() };
        bad("brackets or quotes inside the value", fixed)
    } else if let Some((a, b)) = t.split_once('-').filter(|(a, b)| digits(a) && digits(b)) {
        let (a, b): (u32, u32) = (a.parse().unwrap_or(0), b.parse().unwrap_or(0));
        let fixed = (a..=b).take(64).map(|i| i.to_string()).collect();
        Entry::Unclear { text: raw.to_owned(), why: "a range (CUDA takes a list, not a-b)", fixed }
    } else {
        bad("neither an index nor a GPU-…/MIG-… UUID", Vec::new())
    }
}

fn fixed_tokens(e: &Entry, text: &str) -> Vec<String> {
    match e {
        Entry::Index(_) | Entry::Uuid(_) | Entry::Mig(_) => vec![text.to_owned()],
        Entry::Bad { fixed, .. } | Entry::Unclear { fixed, .. } => fixed.clone(),
        Entry::Hide => Vec::new(),
    }
}

/// Where CUDA stops reading the list.
#[derive(Debug, PartialEq)]
enum Stop {
    /// It read every entry.
    End,
    /// A deliberate `-1`.
    Hidden,
    /// An entry that is not a device.
    Invalid(String),
    /// An index or UUID that names no GPU here (or more than one).
    Missing(String),
    /// An entry whose effect is not known here: nothing is claimed past it.
    Unclear,
}

/// How many devices a CUDA_VISIBLE_DEVICES value lists before CUDA stops reading it, where the GPUs
/// are not known (each index and UUID counted as one); `None` for an entry whose effect is not known.
pub(super) fn listed_devices(value: &str) -> Option<usize> {
    let entries: Vec<Entry> = match value.trim() {
        "" | "NoDevFiles" => vec![Entry::Hide],
        v => v.split(',').map(classify).collect(),
    };
    let mut n = 0;
    for e in &entries {
        match e {
            Entry::Index(_) | Entry::Uuid(_) | Entry::Mig(_) => n += 1,
            Entry::Hide | Entry::Bad { .. } => return Some(n),
            Entry::Unclear { .. } => return None,
        }
    }
    Some(n)
}

/// How many devices the list leaves visible, and where CUDA stops reading it.
fn visible(entries: &[Entry], gpus: &[Gpu]) -> (usize, Stop) {
    let mut n = 0;
    for e in entries {
        let stop = match e {
            Entry::Index(i) if (*i as usize) < gpus.len() => None,
            Entry::Index(i) => Some(Stop::Missing(format!("index {i}"))),
            Entry::Uuid(p) => match uuid_matches(p, gpus) {
                Some(1) => None,
                Some(0) => Some(Stop::Missing(format!("{p} (no GPU has this UUID)"))),
                Some(_) => Some(Stop::Missing(format!("{p} (a prefix of more than one GPU's UUID)"))),
                None => Some(Stop::Unclear),
            },
            Entry::Mig(_) => None,
            Entry::Hide => Some(Stop::Hidden),
            Entry::Bad { text, why, .. } => Some(Stop::Invalid(format!("\"{text}\" ({why})"))),
            Entry::Unclear { .. } => Some(Stop::Unclear),
        };
        match stop {
            None => n += 1,
            Some(s) => return (n, s),
        }
    }
    (n, Stop::End)
}

/// How many GPUs' UUIDs start with `prefix`; `None` when a GPU's UUID is unknown.
fn uuid_matches(prefix: &str, gpus: &[Gpu]) -> Option<usize> {
    let uuids: Option<Vec<&str>> = gpus.iter().map(|g| g.uuid.as_deref()).collect();
    Some(uuids?.iter().filter(|u| u.to_ascii_lowercase().starts_with(&prefix.to_ascii_lowercase())).count())
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    toolkit_roots(cx, out);
    driver_path(cx, out);
    xla_mem_fraction(cx, out);
    alloc_conf_after_import(cx, out);
    mig(cx, out);
    let vars = &cx.s.env.vars;
    if vars.get("CUDA_LAUNCH_BLOCKING").is_some_and(|v| v.trim() == "1") {
        out.push(LAUNCH_BLOCKING.finding(
            "CUDA_LAUNCH_BLOCKING=1 makes every kernel launch wait for the GPU",
            "It is meant for debugging (errors are reported at the launch that caused them). Left set, every launch \
             is synchronous and GPU work runs much slower.",
            vec!["CUDA_LAUNCH_BLOCKING=1".to_owned()],
            None,
        )
        .with_plan(fix::change(
            None,
            "kernel launches asynchronous again",
            vec![
                Change::UnsetVar { name: "CUDA_LAUNCH_BLOCKING".into() },
                Change::Manual { text: "Remove it from your shell profile or notebook settings.".into() },
            ],
        )));
    }
    let in_process = cx.s.env.set_in_process.iter().any(|n| n == VAR);
    let Some(value) = vars.get(VAR) else {
        if in_process {
            out.push(set_in_process(cx, None));
        } else {
            out.extend(hidden_where_the_program_starts(cx));
        }
        return;
    };
    let in_process_at = in_process.then(|| {
        out.push(set_in_process(cx, Some(value)));
        out.len() - 1
    });
    let entries: Vec<Entry> = match value.as_str() {
        "" | "NoDevFiles" => vec![Entry::Hide],
        _ => value.split(',').map(classify).collect(),
    };
    let mut evidence = vec![format!("CUDA_VISIBLE_DEVICES=\"{value}\"")];
    // A GPU named in a sentence says which model the machine has, not how many: no count to check
    // the indices against.
    let in_a_sentence = cx.s.gpus.source().is_some_and(|s| s.strip_prefix("pasted ") == Some(GPUS_IN_WORDS[2]));
    let gpus = cx.raw_gpus().filter(|g| !g.is_empty() && !in_a_sentence);
    if let Some(gpus) = gpus {
        evidence.push(format!("the driver lists {} GPU(s): {}", gpus.len(), gpu_list(gpus)));
        let (n, stop) = visible(&entries, gpus);
        let hides_all = n == 0 && matches!(stop, Stop::Hidden | Stop::Invalid(_) | Stop::Missing(_));
        if hides_all {
            out.push(hides_all_finding(value, &stop, &entries, gpus, evidence));
            return;
        }
        if let Stop::Missing(what) = &stop {
            let after = entries.len().saturating_sub(n + 1);
            out.push(UNKNOWN_DEVICE.finding(
                format!("CUDA_VISIBLE_DEVICES names {what}, which is not a GPU here"),
                format!(
                    "CUDA reads the list up to the first entry that names no device: {n} GPU(s) stay visible{}.",
                    match after {
                        0 => String::new(),
                        1 => ", and the entry after it is ignored".to_owned(),
                        _ => format!(", and the {after} entries after it are ignored"),
                    }
                ),
                evidence.clone(),
                None,
            )
            .with_plan(visible_devices(&corrected(&entries, Some(gpus)))));
        }
    } else if hides_whatever_the_machine(value).is_some()
        && let Some(symptom) = no_device_seen(cx).or_else(|| not_initialized(cx))
    {
        // Empty, or a scheduler's NoDevFiles, hides every GPU whatever the machine has (`-1` is how people hide
        // them on purpose, so it is left alone).
        evidence.push(symptom);
        if let Some(at) = in_process_at {
            out.remove(at);
        }
        out.push(hidden_whatever_the_machine(value, evidence));
        return;
    } else if let Some(symptom) = no_device_seen(cx)
        && let Some(Entry::Index(i @ 1..)) = entries.first()
    {
        evidence.push(symptom);
        // The program saw no GPU under the value its code set: the value took effect, so the warning that
        // setting it there changes nothing would mislead.
        if let Some(at) = in_process_at {
            out.remove(at);
        }
        out.push(likely_missing_finding(*i, evidence));
        return;
    } else if let Some(count) = cx.s.stated_gpu_count
        && let Some(first) = past_a_stated_count(&entries, count)
    {
        evidence.push(format!("the text says the machine has {count} GPU(s)"));
        out.push(past_stated_count_finding(first, count, evidence));
        return;
    }
    form(&entries, gpus, evidence, out);
}

/// Entries CUDA does not read (`cuda:0`, `GPU0`, spaces, ranges): the form finding, with the list corrected.
fn form(entries: &[Entry], gpus: Option<&[Gpu]>, mut evidence: Vec<String>, out: &mut Vec<Finding>) {
    let odd: Vec<String> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Bad { text, why, .. } | Entry::Unclear { text, why, .. } => Some(format!("\"{text}\": {why}")),
            _ => None,
        })
        .collect();
    if !odd.is_empty() {
        evidence.extend(odd);
        out.push(FORM.finding(
            "CUDA_VISIBLE_DEVICES is written in a form CUDA does not read",
            "CUDA expects comma-separated indices (0,1), GPU UUIDs (GPU-…, a unique prefix is enough) or MIG UUIDs, \
             with no spaces, brackets, quotes or ranges. It stops reading the list at the first entry it cannot \
             parse, so the GPUs meant from there on may be hidden, and frameworks that read the variable themselves \
             reject such values.",
            evidence,
            None,
        )
        .with_plan(visible_devices(&corrected(entries, gpus))));
    }
}

/// The first entry, when every entry is a GPU index at or past `count` (the GPUs the text says the machine
/// has): CUDA stops at it, so none is visible.
fn past_a_stated_count(entries: &[Entry], count: u32) -> Option<u32> {
    let mut first = None;
    for e in entries {
        match e {
            Entry::Index(i) if *i >= count => {
                first.get_or_insert(*i);
            }
            _ => return None,
        }
    }
    first
}

/// CUDA_VISIBLE_DEVICES starts with index `first` on a machine the text says has `count` GPUs.
fn past_stated_count_finding(first: u32, count: u32, evidence: Vec<String>) -> Finding {
    let keep = (0..count).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    HIDES_ALL
        .finding(
            format!("CUDA_VISIBLE_DEVICES={first} names a GPU past the {count} this machine has"),
            format!(
                "CUDA numbers GPUs from 0, so a machine with {count} GPU(s) has indices up to {}; CUDA stops \
                 reading the list at an index that names no GPU, so this value hides every one and programs run \
                 on the CPU or fail (\"No CUDA GPUs are available\"). Scripts written for multi-GPU servers often \
                 set it.",
                count - 1
            ),
            evidence,
            None,
        )
        .with_plan(fix::change(
            None,
            format!("CUDA sees GPUs {keep}"),
            vec![
                fix::set_var(VAR, &keep),
                Change::Manual {
                    text: format!(
                        "Change the line that sets CUDA_VISIBLE_DEVICES={first} (in the launch script, an \
                         `os.environ` line or the config) to CUDA_VISIBLE_DEVICES={keep}; `nvidia-smi -L` lists the \
                         indices."
                    ),
                },
            ],
        ))
}

/// CUDA_VISIBLE_DEVICES not in the text, but what the text shows says the process was started with GPUs hidden:
/// it saw no device while PyTorch saw one elsewhere in the text, or it was started by a shell script on a host.
fn hidden_where_the_program_starts(cx: &Ctx<'_>) -> Option<Finding> {
    let message = no_device_message(cx)?;
    // PyTorch's own "No CUDA GPUs are available" beside PyTorch's own answer: one library, one driver, so only
    // the environment differs. Another program's "no device" (numba's cuInit) may load another libcuda.
    let by_torch = cx.s.messages.iter().any(|m| m.id == "torch.no_gpus_available");
    let seen_elsewhere = cx.envs().iter().filter(|_| by_torch).find_map(|e| {
        let t = e.deep_torch()?;
        match (t.cuda_available, t.device_count) {
            (_, Some(n @ 1..)) => Some(format!("torch.cuda.device_count() is {n} elsewhere in the text")),
            (Some(true), _) => Some("torch.cuda.is_available() is True elsewhere in the text".to_owned()),
            _ => None,
        }
    });
    let on_a_host = cx.s.platform.wsl.is_none() && cx.s.platform.container.is_none();
    let script = cx.s.env.launch_scripts.first().filter(|_| on_a_host);
    let mut evidence = vec![message, "CUDA_VISIBLE_DEVICES: its value is not in the pasted text".to_owned()];
    let why = match (&seen_elsewhere, script) {
        (Some(seen), _) => {
            evidence.push(seen.clone());
            "PyTorch saw a GPU when asked on its own, yet the program counted none: the driver works, so what differs \
             is the environment the program started with"
        }
        (None, Some(script)) => {
            evidence.push(format!("the program was started by {script}"));
            "The driver answered and counted no device for this process (PyTorch raises \"No CUDA GPUs are \
             available\" only then; a missing or old driver gives other errors), and the program was started by a \
             script, which sets its environment"
        }
        (None, None) => {
            let alone = alone_in_the_text(cx)?;
            evidence.push(alone);
            "The driver answered and counted no device for this process (CUDA's `no CUDA-capable device` and \
             PyTorch's \"No CUDA GPUs are available\" come only then; a missing or old driver gives other errors), \
             and nothing in the text says the driver itself sees no GPU"
        }
    };
    if let Some(script) = script.filter(|_| seen_elsewhere.is_some()) {
        evidence.push(format!("the program was started by {script}"));
    }
    // The GPUs the text says the machine has, else the first one, which every machine with a GPU has.
    let keep = match cx.s.stated_gpu_count {
        Some(n @ 1..) => (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(","),
        _ => "0".to_owned(),
    };
    let look = match script {
        Some(script) => format!("`grep -n CUDA_VISIBLE_DEVICES {script}`"),
        None => "`grep -rn CUDA_VISIBLE_DEVICES .` in the project (its launch scripts, `os.environ` lines and \
                 configs such as a `gpu_ids` or `cuda_visible_devices` setting)"
            .to_owned(),
    };
    let mut finding = HIDES_ALL
        .finding(
            "A CUDA_VISIBLE_DEVICES set where the program starts probably hides every GPU",
            format!(
                "{why}. Projects' launch scripts, `os.environ[\"CUDA_VISIBLE_DEVICES\"]` lines and configs often \
                     select a GPU index of a multi-GPU server (1, 3, 7): on a machine with fewer GPUs that index names \
                     none, and CUDA hides every GPU."
            ),
            evidence,
            None,
        )
        .with_plan(fix::change(
            None,
            "CUDA sees the GPUs",
            vec![
                fix::set_var(VAR, &keep),
                Change::Manual {
                    text: format!(
                        "Find where it is set with {look} and set it to {keep}, or other indices `nvidia-smi -L` \
                             lists, or remove the line."
                    ),
                },
            ],
        ));
    if seen_elsewhere.is_none() && script.is_none() {
        // Only the message, no sign of where the variable was set: the likeliest cause, not a shown one.
        finding.severity = Severity::Warning;
    }
    Some(finding)
}

/// Why a no-device line alone points at CUDA_VISIBLE_DEVICES: CUDA's or PyTorch's own line (the driver
/// loaded and answered), on a host (inside WSL or a container the GPU may not be handed in at all), with
/// nothing saying the driver itself sees no GPU (nvidia-smi's or NVML's failures, an empty GPU list) or
/// another cause of the category. In the corpus every such line outside WSL is the variable's
/// (tests/corpus/env_var_misconfig, 20 cases; none in other folders or healthy).
fn alone_in_the_text(cx: &Ctx<'_>) -> Option<String> {
    let own = cx.s.messages.iter().any(|m| NO_DEVICE_MESSAGES.contains(&m.id.as_str()));
    let on_a_host = cx.s.platform.wsl.is_none() && cx.s.platform.container.is_none();
    let driver_sees_none = cx.raw_gpus().is_some_and(<[Gpu]>::is_empty);
    // PyTorch seeing a GPU beside another program's "no device" (numba's cuInit): that program may load
    // another libcuda; the variable would hide the GPU from both.
    let torch_sees = cx
        .envs()
        .iter()
        .filter_map(|e| e.deep_torch())
        .any(|t| t.cuda_available == Some(true) || t.device_count.is_some_and(|n| n > 0));
    if torch_sees {
        return None;
    }
    let other_cause = cx.s.messages.iter().any(|m| {
        !NO_DEVICE_MESSAGES.contains(&m.id.as_str())
            && cx.kb.errors.message.iter().any(|k| {
                k.id == m.id
                    && matches!(
                        k.category,
                        Category::NoDriverOrGpuNotVisible | Category::WslSpecific | Category::DriverTooOldForRuntime
                    )
            })
    });
    (own && on_a_host && !driver_sees_none && !other_cause).then(|| {
        let gpu = if cx.has_nvidia_gpu() { "the text names an NVIDIA GPU; " } else { "" };
        format!("{gpu}nothing else in the text says the driver sees no GPU")
    })
}

/// A known line that says the process saw no GPU: CUDA's or PyTorch's "no device" message, TensorFlow's cuInit
/// failing with CUDA_ERROR_NO_DEVICE, or TensorFlow's diagnostic after a failed cuInit whose error the text does
/// not show (`kernel version seems to match DSO`: the driver agrees with itself).
fn no_device_message(cx: &Ctx<'_>) -> Option<String> {
    if let Some(m) = cx.s.messages.iter().find(|m| NO_DEVICE_MESSAGES.contains(&m.id.as_str())) {
        return Some(format!("pasted line: {}", m.line));
    }
    // TensorFlow's (and XLA's) `failed call to cuInit: CUDA_ERROR_NO_DEVICE`: the driver API's cudaErrorNoDevice.
    let cuinit: Vec<&ObservedMessage> = cx.s.messages.iter().filter(|m| m.id == "tf.cuinit_failed").collect();
    let error = |m: &ObservedMessage| m.values.get("error").cloned();
    cuinit
        .iter()
        .find(|m| error(m).as_deref() == Some("CUDA_ERROR_NO_DEVICE"))
        .or_else(|| cuinit.first().filter(|_| cuinit.iter().all(|m| error(m).is_none())))
        .map(|m| format!("pasted line: {}", m.line))
}

/// What says the program saw no GPU at all: a known "no device" line, or PyTorch counting none: a CUDA build,
/// or a torch whose build the text does not show at all (neither its version nor `torch.version.cuda`, where
/// a CPU build prints None); a CPU build says False everywhere, and is its own finding. Last, the text saying the
/// work ran on the CPU, where no CPU build is shown.
fn no_device_seen(cx: &Ctx<'_>) -> Option<String> {
    if let Some(m) = no_device_message(cx) {
        return Some(m);
    }
    let cpu_build =
        cx.frameworks().any(|(_, f)| matches!(f.build, FrameworkBuild::Cpu)) || cx.s.stated_cpu_torch.is_some();
    let said = cx.s.stated_cpu_fallback.as_ref().filter(|_| !cpu_build);
    let torch = cx.envs().iter().find_map(|e| {
        let torch = e.framework("torch");
        let cpu_build = torch.is_some_and(|f| matches!(f.build, FrameworkBuild::Cpu));
        let t = e.deep_torch()?;
        let build_unknown = t.version.is_none() && t.cuda.is_none() && t.hip.is_none() && torch.is_none();
        if t.device_count == Some(0) {
            Some("torch.cuda.device_count() is 0".to_owned())
        } else if t.cuda_available == Some(false) && !cpu_build && t.cuda.is_some() {
            Some("torch.cuda.is_available() is False (a CUDA build of PyTorch)".to_owned())
        } else if t.cuda_available == Some(false) && build_unknown {
            Some("torch.cuda.is_available() is False (the text does not show which build of PyTorch)".to_owned())
        } else {
            None
        }
    });
    torch.or_else(|| said.map(|l| format!("the text says the work ran on the CPU: {l}")))
}

/// CUDA's `initialization error` (CUDA_ERROR_NOT_INITIALIZED, 3): the driver API answers it to every call after
/// cuInit failed ("or that initialization has failed", cuda.h's CUresult), which is how a program that goes on past
/// a cuInit that found no device meets it (CUDA.jl's `cuDeviceGet` under an empty CUDA_VISIBLE_DEVICES,
/// JuliaGPU/CUDA.jl#1336). Read only beside a value that hides every GPU whatever the machine.
fn not_initialized(cx: &Ctx<'_>) -> Option<String> {
    let m = cx.s.messages.iter().find(|m| m.id == "cuda.initialization_error")?;
    Some(format!("pasted line: {}", m.line))
}

/// Known error lines that mean the process saw no GPU (`assets/compat/errors.toml`).
const NO_DEVICE_MESSAGES: [&str; 2] = ["cuda.no_device", "torch.no_gpus_available"];

/// CUDA_VISIBLE_DEVICES starts with index `first` (1 or more), the GPU list is not known, and the program saw
/// no GPU: most often a script written for a machine with more GPUs than this one.
fn likely_missing_finding(first: u32, evidence: Vec<String>) -> Finding {
    HIDES_ALL
        .finding(
            format!("CUDA_VISIBLE_DEVICES={first} probably names a GPU this machine does not have"),
            format!(
                "CUDA numbers GPUs from 0 and stops reading the list at an index that names no GPU, so on a machine \
                 with {first} GPU(s) or fewer it hides every one, and the program sees none, as it said here. \
                 Scripts written for multi-GPU servers often set it. nvidia-smi lists the GPUs with their indices: \
                 keep only indices it shows, or unset the variable."
            ),
            evidence,
            None,
        )
        .with_plan(fix::change(
            None,
            "CUDA sees the GPUs",
            vec![
                Change::UnsetVar { name: VAR.into() },
                Change::Manual {
                    text: format!(
                        "Check first: `nvidia-smi -L` lists the GPUs with their indices; if it shows GPU {first}, this \
                         variable is not the cause. Where the program sets it itself (an `os.environ` line, a launch \
                         script, a config's GPU id), change that value to 0 there."
                    ),
                },
            ],
        ))
}

/// The plan that sets CUDA_VISIBLE_DEVICES to `list`.
fn visible_devices(list: &str) -> PlanTarget {
    fix::change(None, format!("CUDA sees GPUs {list}"), vec![fix::set_var(VAR, list)])
}

fn hides_all_finding(value: &str, stop: &Stop, entries: &[Entry], gpus: &[Gpu], evidence: Vec<String>) -> Finding {
    let why = match stop {
        _ if let Some(why) = hides_whatever_the_machine(value) => why.to_owned(),
        Stop::Hidden => "-1 as the first entry hides every GPU.".to_owned(),
        Stop::Invalid(what) | Stop::Missing(what) => {
            format!("Its first entry, {what}, names no device, and CUDA stops reading at the first such entry.")
        }
        _ => String::new(),
    };
    let fixed = corrected(entries, Some(gpus));
    let mut changes = vec![Change::UnsetVar { name: VAR.into() }];
    if value == "NoDevFiles" {
        changes.push(Change::Manual {
            text: "Or ask the scheduler for a GPU (Slurm: --gpus=1) and check its GRES File= lines.".into(),
        });
    }
    HIDES_ALL
        .finding(
            "CUDA_VISIBLE_DEVICES hides every GPU",
            format!(
                "{why} CUDA programs see no device (\"no CUDA-capable device is detected\"), though the driver lists \
                 {} GPU(s). Unset, it shows every GPU; to keep a list, set it to {fixed}.",
                gpus.len()
            ),
            evidence,
            None,
        )
        .with_plan(fix::change(None, "CUDA sees the GPUs", changes))
}

/// Why a value hides every GPU on any machine (empty, Slurm's NoDevFiles); `None` for another value.
fn hides_whatever_the_machine(value: &str) -> Option<&'static str> {
    match value {
        "" => Some("An empty CUDA_VISIBLE_DEVICES hides every GPU."),
        "NoDevFiles" => Some(
            "NoDevFiles is the placeholder a batch scheduler (Slurm) sets when it hands the job no GPU device files; \
             it hides every GPU.",
        ),
        _ => None,
    }
}

/// A value that hides every GPU on any machine (empty, NoDevFiles), where the text lists no GPU and a program saw
/// none.
fn hidden_whatever_the_machine(value: &str, evidence: Vec<String>) -> Finding {
    let why = hides_whatever_the_machine(value).unwrap_or_default();
    HIDES_ALL
        .finding(
            "CUDA_VISIBLE_DEVICES hides every GPU",
            format!(
                "{why} CUDA programs started with it see no device (\"no CUDA-capable device is detected\"), whatever \
                 GPUs the machine has; a process meant to run without a GPU must then not be handed GPU work."
            ),
            evidence,
            None,
        )
        .with_plan(fix::change(None, "CUDA sees the GPUs", vec![Change::UnsetVar { name: VAR.into() }]))
}

/// The list as meant: each entry in a form CUDA reads, without devices that do not exist; every GPU when
/// nothing is left.
fn corrected(entries: &[Entry], gpus: Option<&[Gpu]>) -> String {
    let exists = |tok: &str| match (tok.parse::<usize>(), gpus) {
        (Ok(i), Some(g)) => i < g.len(),
        (Err(_), Some(g)) => uuid_matches(tok, g).is_none_or(|n| n == 1),
        (_, None) => true,
    };
    let mut out: Vec<String> = Vec::new();
    for e in entries {
        let text = match e {
            Entry::Index(i) => i.to_string(),
            Entry::Uuid(u) | Entry::Mig(u) => u.clone(),
            _ => String::new(),
        };
        for tok in fixed_tokens(e, &text) {
            if exists(&tok) && !out.contains(&tok) {
                out.push(tok);
            }
        }
    }
    if out.is_empty() {
        let n = gpus.map_or(1, <[Gpu]>::len);
        out = (0..n).map(|i| i.to_string()).collect();
    }
    out.join(",")
}

fn gpu_list(gpus: &[Gpu]) -> String {
    let names: Vec<String> =
        gpus.iter().map(|g| format!("{} {}", g.index, g.name.as_deref().unwrap_or("(name unknown)"))).collect();
    names.join(", ")
}

/// What is wrong with a CUDA_HOME / CUDA_PATH value as a toolkit root, and the root it names; `None` when
/// it is one folder (which may or may not exist: that is for the toolkit probe to say).
fn root_problem(value: &str) -> Option<(&'static str, String)> {
    let v = value.trim();
    // A drive letter (`C:\`, `C:/`) is not a list separator.
    let drive = v.len() >= 2 && v.as_bytes()[0].is_ascii_alphabetic() && v.as_bytes()[1] == b':';
    let first = if drive {
        v.splitn(3, [':', ';']).take(2).collect::<Vec<_>>().join(":")
    } else {
        // The first entry that is not empty: `:/usr/local/cuda-9.0` (`CUDA_HOME=$CUDA_HOME:/usr/local/cuda-9.0`
        // with CUDA_HOME unset) names its one folder after the stray `:`.
        v.split([':', ';']).find(|e| !e.trim().is_empty()).unwrap_or("").to_owned()
    };
    let is_list = first.len() < v.len();
    let root = |p: &str| {
        let p = p.trim_end_matches(['/', '\\']);
        let p = p.strip_suffix("nvcc.exe").or_else(|| p.strip_suffix("nvcc")).unwrap_or(p);
        let p = p.trim_end_matches(['/', '\\']);
        p.strip_suffix("bin").filter(|r| r.ends_with(['/', '\\'])).unwrap_or(p).trim_end_matches(['/', '\\']).to_owned()
    };
    let fixed = root(&first);
    if v.contains('$') {
        Some(("it holds a `$VAR` the shell did not expand", fixed))
    } else if is_list {
        Some((
            "it is a list (a `:` or `;` joins more than one entry, or stands before or after the folder), not one folder",
            fixed,
        ))
    } else if fixed != first.trim_end_matches(['/', '\\']) {
        Some(("it names the toolkit's `bin` folder or nvcc itself, not the folder above them", fixed))
    } else {
        None
    }
}

fn toolkit_roots(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for name in ["CUDA_HOME", "CUDA_PATH"] {
        let Some(value) = cx.s.env.vars.get(name) else { continue };
        let Some((why, fixed)) = root_problem(value) else { continue };
        let plan = (!fixed.is_empty())
            .then(|| fix::change(None, format!("{name} names the toolkit's root"), vec![fix::set_var(name, &fixed)]));
        let finding = TOOLKIT_ROOT.finding(
            format!("{name} is not a CUDA toolkit folder: {why}"),
            format!(
                "Build tools (PyTorch's cpp_extension, CMake, setup.py scripts) take {name} as the toolkit's root and \
                 run {name}/bin/nvcc and read {name}/include, so a value that is not that one folder makes them fail \
                 to find nvcc (\"…/bin/bin/nvcc: No such file\") or the headers."
            ),
            vec![format!("{name}=\"{value}\"")],
            None,
        );
        out.push(finding.with_plan(plan));
    }
}
