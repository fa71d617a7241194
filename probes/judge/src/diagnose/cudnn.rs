//! cuDNN: missing where a framework loads it, another version than the framework was built with, the wrong
//! copy loaded, a release that dropped the GPU's architecture.

use super::context::{build_cuda, cudnn_version_text, describe_framework, parent_dir, same_dir, wheel_library};
use super::message_fix::parse_cudnn;
use super::{Ctx, Rule, fix};
use gpu_doctor_kb::{CudnnRelease, PyVersion, families, index_tag};
use gpu_doctor_model::{Category, Change, CudnnVersion, Finding, InstallFlag, ObservedMessage, Probed, Severity};
use gpu_doctor_model::{CudnnCopy, CudnnKind, Framework, LddResolution, OsFamily, PythonEnv};

const CATEGORY: Category = Category::CudnnMissingOrMismatch;

pub(super) const MISSING: Rule = Rule {
    id: "cudnn.missing",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "A TensorFlow GPU build or a JAX CUDA plugin is installed, and no cuDNN library is found where it loads \
              from (the environment's nvidia-cudnn wheel, the loader cache, the toolkits, conda).",
    source: "TensorFlow pip guide (tensorflow[and-cuda]); JAX installation docs (jax[cuda12] pulls the cuDNN wheel)",
};

pub(super) const MISMATCH: Rule = Rule {
    id: "cudnn.version_mismatch",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "The cuDNN a framework loads has another major than it was built with, or the same major with a lower \
              minor (TensorFlow, PyTorch and JAX refuse both); or the framework's own refusal, pasted, names both \
              versions (TensorFlow/XLA's 'Loaded runtime CuDNN library: X but source was compiled with: Y', JAX's \
              'Found cuDNN version X, but JAX was built against version Y', PyTorch's 'cuDNN version \
              incompatibility: PyTorch was compiled against Y but found runtime version X', Caffe2's 'cuDNN compiled \
              (Y) and runtime (X) versions mismatch'); OpenCV's DNN module's \
              warning `cuDNN reports version X which does not match with (is not compatible with) the version Y with \
              which OpenCV was built`, at a warning where X is a newer minor of Y's major. Or a loader's message \
              that a cuDNN library of one major is missing (`cudnn_ops_infer64_8.dll`, `libcudnn_cnn_infer.so.8`) \
              where every copy the text shows is of another major.",
    source: "TensorFlow stream_executor cudnn_version.cc (same major, minor at least the build's); PyTorch \
             torch/backends/cudnn/__init__.py; JAX installation docs (cuDNN >= 9.8, < 10); the messages' rows in \
             assets/compat/errors.toml (xla.cudnn_version_mismatch, jax.cudnn_older_than_build, \
             torch.cudnn_incompatible, caffe2.cudnn_version_mismatch); OpenNMT/CTranslate2:CHANGELOG.md@v4.5.0#L8 \
             (\"now supports CUDNN 9 and is no longer compatible with CUDNN 8\")",
};

/// The catalogue rows of a framework refusing the cuDNN it loaded, with the names of the values
/// that hold the loaded and the built version.
const REFUSALS: [(&str, &str, &str); 5] = [
    ("xla.cudnn_version_mismatch", "runtime", "compiled"),
    ("caffe2.cudnn_version_mismatch", "runtime", "compiled"),
    ("jax.cudnn_older_than_build", "found", "built"),
    ("torch.cudnn_incompatible", "runtime", "compiled"),
    (OPENCV_REFUSAL, "runtime", "compiled"),
];

/// OpenCV's DNN module warning that the cuDNN it loaded is not the one it was built with (`assets/compat/errors.toml`).
const OPENCV_REFUSAL: &str = "opencv.cudnn_version_mismatch";

pub(super) const WRONG_COPY: Rule = Rule {
    id: "cudnn.wrong_copy_loaded",
    category: CATEGORY,
    severity: Severity::Warning,
    trigger: "torch loaded a cuDNN of another version than the environment's nvidia-cudnn wheel, and a copy outside \
              the environment has the loaded version: that copy wins over the wheel. Or the libraries a process \
              loaded (LD_DEBUG=libs's `calling init:`, ldd) put some of cuDNN's files in a pip wheel's folder and \
              others outside it.",
    source: "torch.backends.cudnn.version() (deep tier) against the nvidia-cudnn wheel and the cuDNN copies found; \
             bminor/glibc:elf/dl-init.c@glibc-2.42 (LD_DEBUG=libs: `calling init: %s`); ld.so(8) (search order)",
};

pub(super) const GPU_UNSUPPORTED: Rule = Rule {
    id: "cudnn.gpu_not_supported",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "A framework's cuDNN release no longer supports a GPU here: its lowest supported compute capability is \
              above the GPU's (e.g. cuDNN 9.17 on Pascal 6.1).",
    source: "NVIDIA cuDNN support matrices (https://docs.nvidia.com/deeplearning/cudnn/), reference §7.3",
};

pub(super) const FOR_NEWER_CUDA: Rule = Rule {
    id: "cudnn.built_for_newer_cuda",
    category: CATEGORY,
    severity: Severity::Error,
    trigger: "A cuDNN built for a CUDA major the driver does not run is installed (a distribution package \
              `libcudnn8 …+cuda12.1` or `libcudnn9-cuda-12`, an `nvidia-cudnn-cu12` wheel, a conda `cudnn` of a \
              `cuda12` build) while the driver supports only an older CUDA major: cuDNN calls CUDA of its own major, \
              so it fails to initialise (CUDNN_STATUS_NOT_INITIALIZED) or to run.",
    source: "NVIDIA cuDNN support matrix (each cuDNN build names the CUDA toolkit and the driver it needs: CUDA 12 \
             builds need driver r525 or newer on Linux); cuDNN installation guide, package manager installation \
             (`libcudnn8=<version>-1+cuda<X.Y>`, `libcudnn9-cuda-<X>`); SYSTRAN/faster-whisper#362 (cuDNN 8.9.3 for \
             CUDA 12.1 on driver 470: CUDNN_STATUS_NOT_INITIALIZED until the CUDA 11 build was installed)",
};

pub(super) const RULES: &[Rule] = &[MISSING, MISMATCH, WRONG_COPY, GPU_UNSUPPORTED, FOR_NEWER_CUDA];

/// cuDNN copies built for a CUDA major newer than the driver runs ([`FOR_NEWER_CUDA`]).
fn built_for_newer_cuda(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    // A framework found too new for the driver brought its CUDA's cuDNN with it: the driver is the cause.
    if Ctx::driver_too_old_found(out) {
        return;
    }
    let Some(level) = cx.driver_cuda() else { return };
    let copies = cx.s.cudnn.value().map(Vec::as_slice).unwrap_or_default();
    let newer: Vec<(&CudnnCopy, u32)> = copies
        .iter()
        .filter(|c| matches!(c.kind, CudnnKind::SystemPackage | CudnnKind::CondaPackage | CudnnKind::PipWheel))
        .filter_map(|c| Some((c, c.cuda_major.filter(|m| *m > level.major)?)))
        .collect();
    let Some(&(_, major)) = newer.first() else { return };
    let mut evidence: Vec<String> = newer
        .iter()
        .map(|(c, m)| format!("cuDNN {} built for CUDA {m}: {}", cudnn_version_text(c), c.location))
        .collect();
    evidence.extend(cx.driver.evidence.clone());
    let have = level.major;
    let floor = cx.kb.cuda.floor(major, cx.os).map_or_else(String::new, |d| format!(" (driver {d} or newer)"));
    out.push(FOR_NEWER_CUDA.finding(
        format!("cuDNN built for CUDA {major} is installed, but the driver runs only CUDA {have}"),
        format!(
            "cuDNN calls CUDA {major}, which this driver (CUDA up to {level}) does not run, so it fails to initialise \
             (\"CUDNN_STATUS_NOT_INITIALIZED\") or to run its kernels."
        ),
        evidence,
        Some(format!(
            "Install the cuDNN built for CUDA {have}: from NVIDIA's repository libcudnn9-cuda-{have} (cuDNN 9) or \
             libcudnn8=<version>-1+cuda{have}.<minor> (cuDNN 8, `apt-cache madison libcudnn8` lists them), with pip \
             nvidia-cudnn-cu{have}; or update the driver to one that runs CUDA {major}{floor}."
        )),
    ));
}

/// A cuDNN a framework may load.
struct Candidate {
    version: Option<CudnnVersion>,
    major: u32,
    /// What it is and where, for evidence.
    what: String,
    /// Its library folder, for a copy outside the environment.
    dir: Option<String>,
    /// The wheel's name and version, for an nvidia-cudnn wheel.
    wheel: Option<(String, String)>,
}

/// What a framework needs: this major, and at least `min` within it when the build's minor is known.
struct Need {
    major: u32,
    min: Option<CudnnVersion>,
    cuda_major: u32,
    from: String,
}

impl Need {
    fn accepts(&self, c: &Candidate) -> bool {
        c.major == self.major && !matches!((c.version, self.min), (Some(v), Some(m)) if v.minor < m.minor)
    }

    fn text(&self) -> String {
        match self.min {
            Some(m) => format!("cuDNN {}.{} or a later {}.x", m.major, m.minor, m.major),
            None => format!("cuDNN {}.x", self.major),
        }
    }
}

/// The cuDNN copies an environment's frameworks load: its own nvidia-cudnn wheels, else the copies outside
/// any environment.
fn candidates(cx: &Ctx<'_>, env: &PythonEnv) -> Vec<Candidate> {
    let wheels: Vec<Candidate> = env
        .cuda_wheels
        .iter()
        .filter(|w| wheel_library(&w.name) == "nvidia-cudnn")
        .filter_map(|w| {
            let version = w.version.parse::<CudnnVersion>().ok()?;
            Some(Candidate {
                version: Some(version),
                major: version.major,
                what: format!("{} {}", w.name, w.version),
                dir: None,
                wheel: Some((w.name.clone(), w.version.clone())),
            })
        })
        .collect();
    if !wheels.is_empty() {
        return wheels;
    }
    system_copies(cx)
        .filter_map(|c| {
            let what = format!("cuDNN {} at {}", cudnn_version_text(c), c.location);
            let dir = (c.kind == CudnnKind::Library).then(|| parent_dir(&c.location).to_owned());
            Some(Candidate { version: c.version, major: c.major?, what, dir, wheel: None })
        })
        .collect()
}

/// Library copies outside the Python environments.
fn system_copies<'a>(cx: &Ctx<'a>) -> impl Iterator<Item = &'a CudnnCopy> {
    let copies = cx.s.cudnn.value().map(Vec::as_slice).unwrap_or_default();
    copies.iter().filter(|c| {
        matches!(c.kind, CudnnKind::Library | CudnnKind::CondaPackage | CudnnKind::Dll | CudnnKind::SystemPackage)
    })
}

/// What TensorFlow or a JAX plugin needs, from its build info and the knowledge base.
fn need(cx: &Ctx<'_>, fw: &Framework) -> Option<Need> {
    let from = |what: &str, source: &str| format!("{what} ({source})");
    if families::is_jax_cuda_plugin(&fw.name) {
        let p = cx.kb.jax.plugin.iter().find(|p| p.package == fw.name)?;
        let (min, source) = cx.kb.jax.plugin_cudnn_min(p, &fw.version);
        let what = format!("{} {} needs cuDNN >= {min}, < {}", p.package, fw.version, p.cudnn_major + 1);
        return Some(Need {
            major: p.cudnn_major,
            min: Some(min),
            cuda_major: p.cuda_major,
            from: from(&what, source),
        });
    }
    if !families::is_tensorflow_cuda(&fw.name) {
        return None;
    }
    let (cuda, _) = build_cuda(fw)?;
    let built = fw.cudnn_build.as_deref().and_then(|b| b.parse::<CudnnVersion>().ok());
    let line = PyVersion::new(&fw.version).line();
    let row = cx.kb.tensorflow.release.iter().find(|r| Some(&r.version) == line.as_ref());
    let major = built.map(|b| b.major).or(row.map(|r| r.cudnn.major))?;
    let min = row.map(|r| r.cudnn).filter(|c| c.major == major);
    let from = match (fw.cudnn_build.as_deref(), row) {
        (Some(b), Some(r)) => from(
            &format!("built with cuDNN {b}; TensorFlow {} was tested with cuDNN {}", r.version, r.cudnn),
            &r.source,
        ),
        (Some(b), None) => format!("built with cuDNN {b} (tensorflow/python/platform/build_info.py)"),
        (None, Some(r)) => from(&format!("TensorFlow {} was built with cuDNN {}", r.version, r.cudnn), &r.source),
        (None, None) => return None,
    };
    Some(Need { major, min, cuda_major: cuda.major, from })
}

pub(super) fn run(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if cx.os != OsFamily::Macos {
        built_for_newer_cuda(cx, out);
    }
    from_facts(cx, out);
    refused(cx, out);
    other_major_asked(cx, out);
    split_between_copies(cx, out);
}

/// The loader's default folders (ld.so(8), Debian's multiarch ones), which no variable takes off its path.
fn system_dir(dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    ["/lib", "/usr/lib", "/lib64", "/usr/lib64"].contains(&dir)
        || ["/lib/", "/usr/lib/"]
            .iter()
            .any(|p| dir.strip_prefix(p).is_some_and(|a| a.ends_with("-linux-gnu") && !a.contains('/')))
}

/// cuDNN's libraries a process loaded (LD_DEBUG=libs, ldd) from a pip wheel's folder and from another: cuDNN 9 opens
/// its sub-libraries by name at run time, and the loader takes the first it finds in its search order, so one can come
/// from a system copy of another release (pytorch/pytorch#185512: libcudnn_engines_tensor_ir.so.9 from
/// /lib/x86_64-linux-gnu beside the nvidia-cudnn-cu13 wheel's).
fn split_between_copies(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(t) = cx.s.toolkits.value() else { return };
    let in_wheels = |p: &str| p.contains("site-packages/") || p.contains("dist-packages/");
    let (wheel, other): (Vec<&LddResolution>, Vec<&LddResolution>) =
        t.ldd_resolved.iter().filter(|r| r.library.starts_with("libcudnn")).partition(|r| in_wheels(&r.path));
    let (Some(w), false) = (wheel.first(), other.is_empty()) else { return };
    if out.iter().any(|f| f.id == WRONG_COPY.id) {
        return;
    }
    let outside: Vec<&str> = other.iter().map(|r| r.library.as_str()).collect();
    let mut evidence: Vec<String> =
        other.iter().map(|r| format!("{}: {} from {}", r.caller, r.library, r.path)).collect();
    evidence.push(format!("{}: {} from {}", w.caller, w.library, w.path));
    let dir = parent_dir(&other[0].path);
    out.push(WRONG_COPY.finding(
        format!("cuDNN's libraries were loaded from two copies: {} from {dir}, the rest from a pip wheel", outside.join(", ")),
        format!(
            "cuDNN loads its sub-libraries by name when first used, and the dynamic loader takes the first file of that \
             name in its search order (LD_LIBRARY_PATH, then the cache of /etc/ld.so.conf), so {dir} supplied {} while \
             the others came from the wheel at {}: sub-libraries of two cuDNN releases in one process fail or crash.",
            outside.join(", "),
            parent_dir(&w.path)
        ),
        evidence,
        Some(format!(
            "Load one copy: {}, or put the wheel's folder {} first in LD_LIBRARY_PATH (searched before the system's); \
             then `LD_DEBUG=libs python … 2>&1 | grep 'calling init:.*cudnn'` shows every cuDNN file from one folder.",
            if system_dir(dir) {
                format!(
                    "remove the system cuDNN package that put {} there (`libcudnn9-*` on Debian and Ubuntu; {} names it)",
                    outside.join(", "),
                    fix::command(cx, &gpu_doctor_model::shell::ShellCommand::new("dpkg").args(["-S", other[0].path.as_str()]), true)
                )
            } else {
                format!("take {} off LD_LIBRARY_PATH (or out of /etc/ld.so.conf.d, then `sudo ldconfig`)", fix::word(cx, dir))
            },
            fix::word(cx, parent_dir(&w.path))
        )),
    ));
}

/// The loader messages that name the cuDNN library a program asked for, and the value holding it.
const ASKED: [(&str, &str); 3] = [
    ("cudnn.dll_not_found", "library"),
    ("cudnn.could_not_load_library", "library"),
    ("ld.cudnn_library_missing", "library"),
];

/// A program asks for a cuDNN library of one major where every copy the text shows is of another
/// (m-bain/whisperX#899: CTranslate2 before 4.5 asks for `cudnn_ops_infer64_8.dll`, torch 2.4 and later ship cuDNN 9's
/// DLLs): cuDNN's libraries carry their major in their names, so no copy of the other major stands in.
fn other_major_asked(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.id == MISMATCH.id) {
        return;
    }
    let Some((m, asked, library)) = ASKED.iter().find_map(|(id, key)| {
        let m = cx.s.messages.iter().find(|m| m.id == *id)?;
        let library = m.values.get(*key)?;
        Some((m, CudnnCopy::major_in_file_name(library).filter(|m| (5..=20).contains(m))?, library))
    }) else {
        return;
    };
    let copies = cx.s.cudnn.value().map(Vec::as_slice).unwrap_or_default();
    let others: Vec<&CudnnCopy> = copies.iter().filter(|c| c.major.is_some_and(|h| h != asked)).collect();
    let Some(have) = others.first().and_then(|c| c.major) else { return };
    if copies.iter().any(|c| c.major == Some(asked)) {
        return;
    }
    let mut evidence = vec![format!("pasted line: {}", m.line)];
    evidence.extend(others.iter().map(|c| format!("cuDNN {} copy shown: {}", c.major.unwrap_or(have), c.location)));
    let wheel = fix::command(
        cx,
        &gpu_doctor_model::shell::ShellCommand::new("python").args([
            "-m",
            "pip",
            "install",
            &format!("nvidia-cudnn-cu12=={asked}.*"),
        ]),
        false,
    );
    out.push(MISMATCH.finding(
        format!("The program asks for cuDNN {asked} ({library}); the copies shown are cuDNN {have}'s"),
        format!(
            "cuDNN's libraries carry their major in their names, so a program built with cuDNN {asked} loads only \
             cuDNN {asked}'s files and finds none, while the environment holds cuDNN {have} (PyTorch 2.4 and later \
             ship cuDNN 9's; CTranslate2, under faster-whisper and WhisperX, uses cuDNN 9 from 4.5 on and cuDNN 8 up \
             to 4.4)."
        ),
        evidence,
        Some(format!(
            "Use the program's build for cuDNN {have} (CTranslate2: 4.5 or later for cuDNN 9, 4.4.0 for cuDNN 8), or give \
             it cuDNN {asked} beside the other: {wheel}, with that wheel's library folder on PATH (Windows) or \
             LD_LIBRARY_PATH; or a framework build that ships cuDNN {asked} (PyTorch 2.3 and earlier: cuDNN 8)."
        )),
    ));
}

/// The cuDNN each framework needs against the copies found.
fn from_facts(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !cx.has_nvidia_gpu() || cx.os == OsFamily::Macos {
        return;
    }
    let copies_known = matches!(cx.s.cudnn, Probed::Found { .. } | Probed::Absent { .. });
    for env in cx.envs() {
        let found = candidates(cx, env);
        for fw in &env.frameworks {
            if fw.name == "torch" {
                torch(cx, env, fw, out);
                continue;
            }
            let Some(need) = need(cx, fw) else { continue };
            if found.is_empty() && copies_known {
                out.push(
                    MISSING
                        .finding(
                            format!("{} {} in {} finds no cuDNN", fw.name, fw.version, env.name),
                            format!("It needs {}, and there is none in the environment or on the system.", need.text()),
                            vec![describe_framework(env, fw), need.from.clone(), looked(cx)],
                            None,
                        )
                        .with_plan(fix::change(
                            Some(env),
                            format!("{} in {} finds cuDNN", fw.name, env.name),
                            vec![install(cx, fw)],
                        )),
                );
            } else if !found.is_empty() && !found.iter().any(|c| need.accepts(c)) {
                let mut evidence = vec![describe_framework(env, fw), need.from.clone()];
                evidence.extend(found.iter().map(|c| format!("found: {}", c.what)));
                out.push(MISMATCH.finding(
                    format!("{} {} in {} needs {}, not the cuDNN installed", fw.name, fw.version, env.name, need.text()),
                    "It refuses a cuDNN of another major, or of the same major with a lower minor than it was built with \
                     (\"Loaded runtime CuDNN library: X but source was compiled with: Y\"), and then runs without GPU \
                     convolutions or fails to start.",
                    evidence,
                    None,
                )
                .with_plan(fix::change(
                    Some(env),
                    format!("{} in {} loads cuDNN {}", fw.name, env.name, need.text()),
                    with_path_fix(cx, &found, pip_cudnn(&need)),
                )));
            }
        }
        gpu_support(cx, env, &found, out);
    }
}

/// A framework's own refusal of the cuDNN it loaded, pasted with both versions: the versions are
/// the facts the rule reads, and the emitter has judged them (its releases differ on a newer minor:
/// TensorFlow before cuDNN 7 wanted the same minor). `message_fix::attach` gives it the row's family fix.
fn refused(cx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.id == MISMATCH.id) {
        return;
    }
    for (id, loaded_name, built_name) in REFUSALS {
        let observed: Vec<&ObservedMessage> = cx.s.messages.iter().filter(|m| m.id == id).collect();
        let Some(known) = cx.kb.errors.message.iter().find(|m| m.id == id) else { continue };
        let version = |m: &ObservedMessage, name: &str| m.values.get(name).and_then(|v| parse_cudnn(v));
        let Some((first, (loaded, built))) = observed.iter().find_map(|m| {
            Some((m, version(m, loaded_name)?)).zip(version(m, built_name)).map(|((m, l), b)| (m, (l, b)))
        }) else {
            continue;
        };
        let program = known.emitter.split([' ', '/']).next().unwrap_or("The framework");
        if id == OPENCV_REFUSAL {
            if loaded != built {
                out.push(opencv_mismatch(first, loaded, built));
            }
            continue;
        }
        out.push(MISMATCH.finding(
            format!(
                "{program} loaded cuDNN {}.{}, but it was built with cuDNN {}.{}",
                loaded.0, loaded.1, built.0, built.1
            ),
            "It refuses a cuDNN of another major, or of the same major with a lower minor than it was built with, \
             and then runs without GPU convolutions or fails to start. The loaded copy is usually an older one found \
             first (LD_LIBRARY_PATH, PATH on Windows, another environment, a library imported earlier).",
            vec![format!("pasted line: {}", first.line)],
            None,
        ));
    }
}

/// OpenCV's warning that it runs on another cuDNN than it was built with: an error where cuDNN's own compatibility
/// does not hold (another major, an older minor), else a warning, since cuDNN keeps newer minors of a major binary
/// compatible while OpenCV before 4.5.2 warned on any difference (dusty-nv/jetson-inference#1409: its maintainer had
/// OpenCV rebuilt for the image's cuDNN).
fn opencv_mismatch(m: &ObservedMessage, loaded: (u32, u32), built: (u32, u32)) -> Finding {
    let compatible = loaded.0 == built.0 && loaded.1 >= built.1;
    let mut finding = MISMATCH.finding(
        format!(
            "OpenCV's DNN module loaded cuDNN {}.{}, but it was built with cuDNN {}.{}",
            loaded.0, loaded.1, built.0, built.1
        ),
        if compatible {
            "cuDNN keeps a newer minor release binary compatible with programs built against an older one of its \
             major, so OpenCV usually runs; OpenCV before 4.5.2 warned on any difference. Where its DNN module's CUDA \
             backend fails or falls back to the CPU, OpenCV must be built against the cuDNN that is installed."
        } else {
            "cuDNN of another major, or an older minor than the build's, is not binary compatible: OpenCV's DNN \
             module's CUDA backend fails or falls back to the CPU."
        },
        vec![format!("pasted line: {}", m.line)],
        Some(format!(
            "Rebuild OpenCV (with -DWITH_CUDNN=ON, -DOPENCV_DNN_CUDA=ON) against the cuDNN installed ({}.{}), or \
             install the cuDNN {}.{} it was built with and keep the other off the loader's path; in a container, use \
             the image whose OpenCV was built for its own cuDNN.",
            loaded.0, loaded.1, built.0, built.1
        )),
    );
    if compatible {
        finding.severity = Severity::Warning;
    }
    finding
}

fn looked(cx: &Ctx<'_>) -> String {
    match &cx.s.cudnn {
        Probed::Absent { reason } => reason.clone(),
        _ => "only headers or other environments' wheels were found".to_owned(),
    }
}

/// The framework installed again with the cuDNN wheel it pins (`jax[cuda12]`, `tensorflow[and-cuda]`).
fn install(cx: &Ctx<'_>, fw: &Framework) -> Change {
    if let Some(p) = cx.kb.jax.plugin.iter().find(|p| p.package == fw.name) {
        fix::install(&[InstallFlag::Upgrade], [format!("jax[{}]", p.extra)])
    } else {
        fix::install(&[], [format!("tensorflow[and-cuda]=={}", fw.version)])
    }
}

fn pip_cudnn(need: &Need) -> Change {
    let floor = need.min.map_or_else(|| format!("{}", need.major), |m| format!("{}.{}", m.major, m.minor));
    fix::install(&[], [format!("nvidia-cudnn-cu{}>={floor},<{}", need.cuda_major, need.major + 1)])
}

/// `install`, then the candidates' folders dropped from LD_LIBRARY_PATH (the old copy found first).
fn with_path_fix(cx: &Ctx<'_>, found: &[Candidate], install: Change) -> Vec<Change> {
    let dirs: Vec<&str> = found
        .iter()
        .filter_map(|c| c.dir.as_deref())
        .filter(|d| cx.s.env.ld_library_path.iter().any(|p| same_dir(p, d)))
        .collect();
    let mut changes = vec![install];
    if !dirs.is_empty() {
        changes.push(fix::ld_library_path_without(cx, &dirs, None));
    }
    changes
}

/// torch: the loaded cuDNN (deep tier) against the variant's pin and the environment's wheel.
fn torch(cx: &Ctx<'_>, env: &PythonEnv, fw: &Framework, out: &mut Vec<Finding>) {
    let deep = env.deep_torch();
    let Some(loaded) = deep.and_then(|t| t.cudnn_version).and_then(CudnnVersion::from_encoded) else { return };
    let wheel = candidates(cx, env).into_iter().find_map(|c| c.wheel.zip(c.version));
    let source = system_copies(cx).find(|c| c.version == Some(loaded));
    let mut evidence = vec![describe_framework(env, fw), format!("torch.backends.cudnn.version() = {loaded} (loaded)")];
    evidence.extend(wheel.as_ref().map(|((name, version), _)| format!("environment wheel: {name} {version}")));
    evidence.extend(source.map(|c| format!("a copy of cuDNN {loaded} outside the environment: {}", c.location)));
    let drop_dir =
        source.map(|c| parent_dir(&c.location)).filter(|d| cx.s.env.ld_library_path.iter().any(|p| same_dir(p, d)));
    let restore = |name: &str, pin: &str| {
        let mut changes: Vec<Change> =
            drop_dir.map(|d| fix::ld_library_path_without(cx, &[d], None)).into_iter().collect();
        changes.push(fix::install(&[InstallFlag::Reinstall], [format!("{name}=={pin}")]));
        fix::change(Some(env), format!("torch in {} loads the cuDNN its wheel pins", env.name), changes)
    };
    let variant = build_cuda(fw).and_then(|(c, _)| cx.kb.pytorch.variant(&fw.version, c));
    if let Some(v) = variant
        && let Some(pin) = v.cudnn.as_deref()
        && let Ok(built) = pin.parse::<CudnnVersion>()
        && built.major != loaded.major
    {
        evidence.push(format!("torch {} {} wheels pin cuDNN {pin} ({})", v.torch, index_tag(v.cuda), v.source));
        out.push(
            MISMATCH
                .finding(
                    format!("torch {} loaded cuDNN {loaded}, but it was built for cuDNN {}", fw.version, built.major),
                    "PyTorch refuses a cuDNN of another major (\"cuDNN version incompatibility\"); convolutions fail.",
                    evidence,
                    None,
                )
                .with_plan(restore(
                    &wheel.map_or_else(|| format!("nvidia-cudnn-cu{}", v.cuda.major), |((n, _), _)| n),
                    pin,
                )),
        );
        return;
    }
    if let (Some(((name, pin), version)), Some(_)) = (&wheel, source)
        && *version != loaded
    {
        out.push(WRONG_COPY.finding(
            format!("torch in {} loads cuDNN {loaded} from outside the environment, not its wheel", env.name),
            "The environment's nvidia-cudnn wheel is the copy torch was installed with; another copy found first \
             (through LD_LIBRARY_PATH, LD_PRELOAD or a broken wheel) is used instead, which breaks on version \
             differences.",
            evidence,
            None,
        )
        .with_plan(restore(name, pin)));
    }
}

/// The releases frameworks here load, against the GPUs' capabilities.
fn gpu_support(cx: &Ctx<'_>, env: &PythonEnv, found: &[Candidate], out: &mut Vec<Finding>) {
    if !env.frameworks.iter().any(|f| build_cuda(f).is_some()) {
        return;
    }
    for c in found {
        let Some(v) = c.version else { continue };
        let same_line = |r: &&CudnnRelease| (r.version.major, r.version.minor) == (v.major, v.minor);
        let Some(row) = cx.kb.cudnn.release.iter().find(same_line) else { continue };
        for gpu in &cx.gpus {
            let Some(cc) = gpu.cc.filter(|cc| *cc < row.min_cc) else { continue };
            // The newest release of this major that still lists the GPU, for a wheel.
            let lists = |r: &&CudnnRelease| r.version.major == v.major && r.min_cc <= cc && cc <= r.max_cc;
            let older = cx.kb.cudnn.release.iter().filter(lists).max_by_key(|r| r.version);
            let plan = match (older, &c.wheel) {
                (Some(r), Some((name, _))) => Some(fix::change(
                    Some(env),
                    format!("{} loads a cuDNN that supports {}", env.name, gpu.name),
                    vec![fix::install(&[], [format!("{name}=={}.{}.*", r.version.major, r.version.minor)])],
                )),
                _ => None,
            };
            let fix = plan.is_none().then(|| {
                format!(
                    "Use a cuDNN release whose support matrix still lists compute capability {cc} \
                     (https://docs.nvidia.com/deeplearning/cudnn/), with a framework build that pins it."
                )
            });
            let finding = GPU_UNSUPPORTED.finding(
                format!("cuDNN {v} in {} does not support {}", env.name, gpu.name),
                format!(
                    "cuDNN {}.{} supports compute capability {} to {}; this GPU has {cc}, so cuDNN calls fail \
                     (CUDNN_STATUS_ARCH_MISMATCH).",
                    v.major, v.minor, row.min_cc, row.max_cc
                ),
                vec![
                    gpu.describe(),
                    c.what.clone(),
                    format!(
                        "cuDNN {}: compute capability {} to {} ({})",
                        row.version, row.min_cc, row.max_cc, row.source
                    ),
                ],
                fix,
            );
            out.push(finding.with_plan(plan));
        }
    }
}
