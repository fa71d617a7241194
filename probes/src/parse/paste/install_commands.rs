//! An install command as the installed build, where nothing else in the text gives that framework's
//! version: `pip install torch==1.10.0+cu113 …` (the local tag), `pip3 install torch==2.1.0
//! --index-url https://download.pytorch.org/whl/cu118` (PyTorch's index serves that version only as
//! `2.1.0+cu118`), `pip install jaxlib==0.1.65+cuda112 -f …`, a wheel's URL, and `conda install
//! pytorch==1.12.1 cudatoolkit=11.3 -c pytorch` (its version; the build only for `cpuonly`, for
//! conda's solver may give the CPU build where the CUDA one asked for is missing). Only
//! torch, TensorFlow, jax/jaxlib, PaddlePaddle and ONNX Runtime, pinned to one version (`==`, conda's
//! `=`), and torch unpinned from PyTorch's index (the build is the index's, the version only its tag:
//! `+cu121`). A version a program printed, a package list or an answer wins; commands that name two
//! versions of one framework, or text saying pip or conda found no such package, read as none.
//!
//! Samples (threads that are not corpus cases): Vchitect/SEINE#9 (`python -m pip install
//! torch==2.0.1+cu118 torchvision torchaudio --index-url https://download.pytorch.org/whl/cu118`),
//! rsxdalv/chatterbox#16 (`pip install torch==2.9.0 torchvision==0.24.0 torchaudio==2.9.0
//! --index-url https://download.pytorch.org/whl/cu130`), NVIDIA/cuda-python#34 (an install that
//! failed: `No matching distribution found for torch==1.12.1+cu113`).

use gpu_doctor_kb::families;

use super::facts::Facts;
use super::packages;
use super::pkg::{CONDA_COMMAND, PIP_COMMAND};

/// The format name of an install command that asks for CUDA.
const CUDA_WANTED: &str = "an install command asking for CUDA";

/// The most characters of one line read: commands are shorter.
const MAX_LINE: usize = 4096;

/// The frameworks read from a command, by their PyPI (or conda) name.
const FRAMEWORKS: [&str; 11] = [
    "torch",
    "pytorch",
    "tensorflow",
    "tensorflow-gpu",
    "tensorflow-cpu",
    "jax",
    "jaxlib",
    "paddlepaddle",
    "paddlepaddle-gpu",
    "onnxruntime",
    "onnxruntime-gpu",
];

/// Words saying an install did not happen: pip's resolver and conda's solver.
const FAILED: [&str; 4] = [
    "no matching distribution found",
    "could not find a version that satisfies",
    "packagesnotfounderror",
    "resolvepackagenotfound",
];

/// One framework pinned by a command.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pinned {
    name: String,
    version: String,
    /// conda's CUDA level beside it, as a build string's word (`cuda11.3`, `cpu`).
    conda_build: Option<String>,
    source: &'static str,
}

/// The frameworks an install command pins, from its arguments and whether the tool is conda.
fn command(conda: bool, args: &[&str]) -> Vec<Pinned> {
    if conda { conda_command(args) } else { pip_command(args) }
}

/// An install command's arguments, to a shell separator, and whether the tool is conda (or mamba); `None` for a
/// line that holds no `pip install` or `conda install`.
fn arguments(line: &str) -> Option<(bool, Vec<&str>)> {
    tool_arguments(line, &["install"])
}

/// The arguments of pip's or conda's (mamba's) subcommand of `verbs`, to a shell separator, and whether the tool is
/// conda; `None` for a line that holds none.
fn tool_arguments<'a>(line: &'a str, verbs: &[&str]) -> Option<(bool, Vec<&'a str>)> {
    let line = line.get(..line.floor_char_boundary(MAX_LINE)).unwrap_or("");
    let words: Vec<&str> = line
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | ',' | ';')))
        .filter(|w| !w.is_empty())
        .collect();
    let at = words.windows(2).position(|w| {
        let tool = w[0].rsplit(['/', '\\']).next().unwrap_or(w[0]).to_ascii_lowercase();
        let tool = tool.strip_suffix(".exe").unwrap_or(&tool);
        matches!(tool, "pip" | "pip3" | "conda" | "mamba" | "micromamba") && verbs.contains(&w[1])
    })?;
    let conda = !words[at].to_ascii_lowercase().contains("pip");
    let args = &words[at + 2..];
    // A command ends at a shell separator.
    let end = args.iter().position(|w| ["&&", "||", "|", ";"].contains(w)).unwrap_or(args.len());
    Some((conda, args[..end].to_vec()))
}

/// Whether a command's arguments ask for CUDA: a package of [`names_cuda`], and not the CPU build as well
/// (`cpuonly`, PyTorch's cpu index, a `+cpu` pin).
fn wants_cuda(args: &[&str]) -> bool {
    args.iter().any(|a| names_cuda(a) || pytorch_cuda_index(a))
        && !args.iter().any(|a| *a == "cpuonly" || a.ends_with("/whl/cpu") || a.contains("+cpu"))
}

/// PyTorch's own download pages for its CUDA builds: an index of one CUDA level (`…/whl/cu118`, `…/whl/nightly/cu128`)
/// or the find-links page of every build (`-f https://download.pytorch.org/whl/torch_stable.html`, which pytorch.org
/// gave for the CUDA builds up to 1.x; PyPI serves the CPU build without it), or a pin of a CUDA build (`+cu118`).
fn pytorch_cuda_index(arg: &str) -> bool {
    let lower = arg.to_ascii_lowercase();
    index_tag(&lower).is_some_and(|t| t.starts_with("cu"))
        || lower.contains("download.pytorch.org/whl/torch_stable.html")
        || lower.split_once("+cu").is_some_and(|(_, d)| d.starts_with(|c: char| c.is_ascii_digit()))
}

/// The packages that install CUDA itself or a framework's CUDA build and nothing else: conda's toolkit packages
/// (`cudatoolkit`, `cuda-toolkit`, `cuda-nvcc`, `cuda-runtime`, `cuda-cudart`, `cuda-version`, PyTorch's channel
/// `pytorch-cuda`), NVIDIA's pip wheels (`nvidia-cuda-runtime-cu12`, `nvidia-cudnn-cu11` …) and the CUDA extras
/// (`jax[cuda12]`, `tensorflow[and-cuda]`). NVIDIA's conda channel and PyPI name them so; the frameworks' install
/// pages give these commands.
fn names_cuda(arg: &str) -> bool {
    let lower = arg.to_ascii_lowercase();
    let name = lower.split(['=', '<', '>', '~', '!']).next().unwrap_or("");
    let (base, extra) = name.split_once('[').map_or((name, ""), |(b, e)| (b, e));
    let conda_name = ["cudatoolkit", "cuda-toolkit", "cuda-nvcc", "cuda-runtime", "cuda-cudart", "cuda-version"];
    conda_name.contains(&base)
        || base == "pytorch-cuda"
        || (base.starts_with("nvidia-") && (base.contains("-cu1") || base.ends_with("-cu")))
        || (["jax", "tensorflow"].contains(&base) && extra.contains("cuda"))
        // conda's build pin on jaxlib or pytorch (`jaxlib=*=*cuda*`).
        || (["jaxlib", "pytorch"].contains(&base) && lower.split('=').nth(2).is_some_and(|b| b.contains("cuda")))
}

/// `name==version` (extras dropped) for a framework of [`FRAMEWORKS`].
fn pin(word: &str, sep: &str) -> Option<(String, String)> {
    let (name, version) = word.split_once(sep)?;
    let name = name.split('[').next()?.to_ascii_lowercase().replace('_', "-");
    let version = version.trim_start_matches('=');
    let ok = FRAMEWORKS.contains(&name.as_str())
        && version.starts_with(|c: char| c.is_ascii_digit())
        && version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+'))
        && version.len() <= 40;
    ok.then(|| (if name == "pytorch" { "torch".to_owned() } else { name }, version.to_owned()))
}

/// The CUDA level of PyTorch's package index (`https://download.pytorch.org/whl/cu118`,
/// `…/whl/nightly/cu128`, `…/whl/cpu`) as a local tag (`cu118`, `cpu`).
fn index_tag(url: &str) -> Option<String> {
    let rest = url.split_once("download.pytorch.org/whl/")?.1;
    let tag = rest.trim_start_matches("nightly/").split(['/', '?', '#']).next()?;
    let cuda =
        tag.strip_prefix("cu").is_some_and(|d| (2..=3).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit()));
    (cuda || tag == "cpu" || tag.starts_with("rocm")).then(|| tag.to_owned())
}

/// A wheel's URL or file name (`…/cu111/torch-1.8.0%2Bcu111-cp38-cp38-linux_x86_64.whl`): its
/// framework and version.
fn wheel(word: &str) -> Option<(String, String)> {
    let file = word.rsplit('/').next()?.replace("%2B", "+").replace("%2b", "+");
    let stem = file.strip_suffix(".whl")?;
    let mut parts = stem.split('-');
    let (name, version) = (parts.next()?.to_ascii_lowercase().replace('_', "-"), parts.next()?);
    let ok = FRAMEWORKS.contains(&name.as_str()) && version.starts_with(|c: char| c.is_ascii_digit());
    ok.then(|| (name, version.to_owned()))
}

fn pip_command(args: &[&str]) -> Vec<Pinned> {
    let mut tag = None;
    let mut out: Vec<Pinned> = Vec::new();
    for (i, w) in args.iter().enumerate() {
        let url = match w.split_once('=') {
            Some((opt, url)) if opt.starts_with("--") && opt.ends_with("url") => Some(url),
            _ if ["-i", "--index-url", "--extra-index-url", "-f", "--find-links"].contains(w) => {
                args.get(i + 1).copied()
            }
            _ => None,
        };
        if let Some(t) = url.and_then(index_tag) {
            tag = Some(t);
        }
        if let Some((name, version)) = pin(w, "==").or_else(|| wheel(w)) {
            out.push(Pinned { name, version, conda_build: None, source: PIP_COMMAND });
        }
    }
    // `torch` not pinned, from PyTorch's index (`pip3 install torch torchvision --index-url …/whl/cu121`, the
    // command pytorch.org gives): which release is not said, but every torch on that index carries its tag, so
    // the build is known. The version is then the tag alone (`+cu121`), which no release comparison reads.
    if let Some(tag) = &tag
        && !out.iter().any(|p| p.name == "torch")
        && args.iter().any(|w| matches!(*w, "torch" | "pytorch") || w.starts_with("torch["))
    {
        out.push(Pinned {
            name: "torch".to_owned(),
            version: format!("+{tag}"),
            conda_build: None,
            source: PIP_COMMAND,
        });
    }
    // PyTorch's own index serves torch only with the index's local tag.
    for p in &mut out {
        if p.name == "torch"
            && !p.version.contains('+')
            && let Some(tag) = &tag
        {
            p.version = format!("{}+{tag}", p.version);
        }
    }
    out
}

/// A conda command's pinned frameworks. The CUDA package beside torch (`cudatoolkit=11.3`,
/// `pytorch-cuda=11.6`) is what was asked, not what the solver chose: where the channel has no build
/// of that torch for it, conda installs the CPU build without a word, so the build is left unknown;
/// `cpuonly` is a CPU build whatever else is asked.
fn conda_command(args: &[&str]) -> Vec<Pinned> {
    let cpu = args.contains(&"cpuonly");
    let mut out = Vec::new();
    for w in args {
        if let Some((name, version)) = pin(w, "=") {
            let conda_build = (name == "torch" && cpu).then(|| "cpu".to_owned());
            out.push(Pinned { name, version, conda_build, source: CONDA_COMMAND });
        }
    }
    out
}

/// Whether the text already gives the version of the framework family of `name`.
fn known(facts: &Facts, name: &str) -> bool {
    fn family(n: &str) -> &str {
        if families::is_tensorflow(n) {
            "tensorflow"
        } else if n.starts_with("paddlepaddle") {
            "paddlepaddle"
        } else if n.starts_with("onnxruntime") {
            "onnxruntime"
        } else {
            n
        }
    }
    let deep = &facts.deep;
    let printed = match family(name) {
        "torch" => deep.torch.as_ref().is_some_and(|t| t.version.is_some()) || facts.torch_build.is_some(),
        "tensorflow" => deep.tensorflow.as_ref().is_some_and(|t| t.version.is_some()) || facts.tf_build_info.is_some(),
        "jax" => deep.jax.as_ref().is_some_and(|j| j.version.is_some()),
        "jaxlib" => deep.jax.as_ref().is_some_and(|j| j.jaxlib_version.is_some()),
        "onnxruntime" => deep.onnxruntime.as_ref().is_some_and(|o| o.version.is_some()),
        _ => false,
    };
    printed || facts.packages.iter().any(|p| family(&p.name) == family(name))
}

/// The format name of a conda command installing from conda-forge.
const CONDA_FORGE: &str = "a conda command installing from conda-forge";

/// A conda (or mamba) `install` or `create` from the conda-forge channel (`-c conda-forge`, `--channel conda-forge`,
/// `conda-forge::name`) that asks for no CUDA build: no `pytorch-gpu`, no CUDA package or `cuda` build string, not the
/// pytorch channel. conda-forge's pytorch is its CPU build unless a CUDA one is asked for or the solver sees the
/// driver (conda-forge/pytorch-cpu-feedstock's README: `pytorch-gpu`, `pytorch=*=cuda*`), and installing another
/// package there can swap a CUDA pytorch for it (vocalpy/vak#470, opencv/opencv#24293).
fn conda_forge_without_cuda(line: &str) -> bool {
    let Some((true, args)) = tool_arguments(line, &["install", "create"]) else { return false };
    let channels: Vec<&str> = args.windows(2).filter(|w| matches!(w[0], "-c" | "--channel")).map(|w| w[1]).collect();
    let forge = channels.contains(&"conda-forge") || args.iter().any(|a| a.starts_with("conda-forge::"));
    let other = channels.iter().any(|c| matches!(*c, "pytorch" | "nvidia"));
    let gpu_build = args.iter().any(|a| a.to_ascii_lowercase().contains("gpu"));
    forge && !other && !gpu_build && !wants_cuda(&args)
}

/// Reads the frameworks the text's install commands pin, where nothing else gave their versions.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    // Only a line with `install` can hold a command: one prebuilt search, not a split of every line.
    static INSTALL: super::Needle = super::Needle::new("install");
    let mut pinned: Vec<(usize, Pinned)> = Vec::new();
    let mut differ: Vec<String> = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if facts.stated_conda_forge_install.is_none() && conda_forge_without_cuda(line) {
            facts.saw(at, CONDA_FORGE);
            facts.stated_conda_forge_install = Some(line.trim().chars().take(300).collect());
        }
        if !INSTALL.in_line(line) {
            continue;
        }
        let Some((conda, args)) = arguments(line) else { continue };
        if facts.stated_cuda_wanted.is_none() && wants_cuda(&args) {
            facts.saw(at, CUDA_WANTED);
            facts.stated_cuda_wanted = Some(line.trim().chars().take(300).collect());
        }
        for p in command(conda, &args) {
            match pinned.iter().find(|(_, q)| q.name == p.name) {
                Some((_, q)) if q.version != p.version || q.conda_build != p.conda_build => differ.push(p.name),
                Some(_) => {}
                None if pinned.len() < FRAMEWORKS.len() => pinned.push((at, p)),
                None => {}
            }
        }
    }
    if pinned.is_empty() {
        return;
    }
    let failed = lines.iter().any(|l| {
        let lower = l.get(..l.floor_char_boundary(MAX_LINE)).unwrap_or("").to_ascii_lowercase();
        FAILED.iter().any(|f| lower.contains(f))
    });
    if failed {
        return;
    }
    for (at, p) in pinned {
        if differ.contains(&p.name) || known(facts, &p.name) {
            continue;
        }
        facts.saw(at, p.source);
        packages::add(facts, &p.name, &p.version, p.conda_build.as_deref(), p.source);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_model::FrameworkBuild;

    fn read_text(text: &str) -> Vec<(String, String, Option<String>)> {
        Facts::read_by(read, text).packages.into_iter().map(|p| (p.name, p.version, p.conda_build)).collect()
    }

    fn one(name: &str, version: &str) -> Vec<(String, String, Option<String>)> {
        vec![(name.to_owned(), version.to_owned(), None)]
    }

    /// A command naming a CUDA package asks for CUDA: jax-ml/jax#24604's (verbatim, JAX's install page's conda
    /// command), the pip and conda packages of `names_cuda` and PyTorch's CUDA pages; a framework alone, a CPU pin or
    /// index, or ROCm's, does not.
    #[test]
    fn a_command_naming_a_cuda_package_asks_for_cuda() {
        let wanted = |t: &str| Facts::read_by(read, t).stated_cuda_wanted;
        assert_eq!(
            wanted("`conda install jaxlib=*=*cuda* jax cuda-nvcc -c conda-forge -c nvidia`").as_deref(),
            Some("`conda install jaxlib=*=*cuda* jax cuda-nvcc -c conda-forge -c nvidia`")
        );
        for yes in [
            "conda install pytorch torchvision cudatoolkit=11.3 -c pytorch",
            "conda install pytorch pytorch-cuda=12.1 -c pytorch -c nvidia",
            "pip install -U \"jax[cuda12]\"",
            "pip install tensorflow[and-cuda]",
            "pip install nvidia-cudnn-cu12==9.1.0.70",
            "conda install 'jaxlib=*=*cuda*' jax",
            // PyTorch's CUDA index, its find-links page (pytorch/pytorch#52662's command), a CUDA build's pin.
            "pip3 install torch torchvision --index-url https://download.pytorch.org/whl/cu121",
            "python -m pip install torch===1.7.1 -f https://download.pytorch.org/whl/torch_stable.html --no-cache",
            "pip install torch==1.8.0+cu111 torchvision==0.9.0+cu111",
        ] {
            assert!(wanted(yes).is_some(), "{yes}");
        }
        for no in [
            "pip install jax",
            "conda install pytorch cpuonly -c pytorch",
            "conda install pytorch cudatoolkit=10.2 cpuonly -c pytorch",
            "pip install cuda-python",
            "install cuda-nvcc",
            "pip3 install torch --index-url https://download.pytorch.org/whl/cpu",
            "pip install torch==1.7.1+cpu -f https://download.pytorch.org/whl/torch_stable.html",
            "pip install torch --index-url https://download.pytorch.org/whl/rocm6.2",
        ] {
            assert!(wanted(no).is_none(), "{no}");
        }
    }

    /// torch not pinned, from PyTorch's index (the command pytorch.org gives; turboderp/exllama#65's nightly): the
    /// build is the index's, the version only its tag. Another index, or torch not in the command, gives none.
    #[test]
    fn an_unpinned_torch_from_pytorchs_index_gives_the_index_build() {
        assert_eq!(
            read_text("pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu118"),
            one("torch", "+cu118")
        );
        assert_eq!(
            read_text("pip3 install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu121"),
            one("torch", "+cu121")
        );
        let f = Facts::read_by(read, "pip3 install torch --index-url https://download.pytorch.org/whl/cpu");
        assert_eq!(f.packages.len(), 1);
        assert_eq!(gpu_doctor_kb::families::build_from_local_tag(&f.packages[0].version), Some(FrameworkBuild::Cpu));
        assert!(read_text("pip install torchvision --index-url https://download.pytorch.org/whl/cu121").is_empty());
        assert!(read_text("pip install torch --index-url https://pypi.org/simple").is_empty());
    }

    #[test]
    fn pip_commands_give_the_version_and_its_build() {
        // Vchitect/SEINE#9 (https://github.com/Vchitect/SEINE/issues/9), the reporter's solution.
        assert_eq!(
            read_text(
                "python -m pip install torch==2.0.1+cu118 torchvision torchaudio --index-url https://download.pytorch.org/whl/cu118"
            ),
            one("torch", "2.0.1+cu118")
        );
        // rsxdalv/chatterbox#16 (https://github.com/rsxdalv/chatterbox/issues/16): the index's tag.
        assert_eq!(
            read_text(
                "pip install torch==2.9.0 torchvision==0.24.0 torchaudio==2.9.0 --index-url https://download.pytorch.org/whl/cu130"
            ),
            one("torch", "2.9.0+cu130")
        );
        assert_eq!(
            read_text("$ pip install torch==1.10.0+cu113 -f https://download.pytorch.org/whl/torch_stable.html"),
            one("torch", "1.10.0+cu113")
        );
        assert_eq!(
            read_text("pip3 install torch==2.1.0 --index-url=https://download.pytorch.org/whl/nightly/cpu"),
            one("torch", "2.1.0+cpu")
        );
        assert_eq!(
            read_text(
                "pip install jaxlib==0.1.65+cuda112 -f https://storage.googleapis.com/jax-releases/jax_releases.html"
            ),
            one("jaxlib", "0.1.65+cuda112")
        );
        assert_eq!(read_text("`pip install paddlepaddle-gpu==2.5.1`"), one("paddlepaddle-gpu", "2.5.1"));
        assert_eq!(read_text("pip install onnxruntime-gpu==1.16.0 && python x.py"), one("onnxruntime-gpu", "1.16.0"));
        assert_eq!(
            read_text(
                "pip install https://download.pytorch.org/whl/cu111/torch-1.8.0%2Bcu111-cp38-cp38-linux_x86_64.whl"
            ),
            one("torch", "1.8.0+cu111")
        );
        let built = families::build_from_local_tag("2.9.0+cu130");
        assert_eq!(built, Some(FrameworkBuild::Cuda { version: Some("13.0".to_owned()) }));
    }

    #[test]
    fn conda_commands_give_the_version_and_cpuonly_its_build() {
        // The CUDA package asked for is no promise: the solver may have chosen the CPU build.
        assert_eq!(
            read_text("conda install pytorch==1.12.1 torchvision==0.13.1 cudatoolkit=11.3 -c pytorch"),
            one("torch", "1.12.1")
        );
        assert_eq!(
            read_text("conda install pytorch=1.6.0 torchvision cpuonly -c pytorch"),
            vec![("torch".to_owned(), "1.6.0".to_owned(), Some("cpu".to_owned()))]
        );
        assert_eq!(read_text("conda install -c conda-forge tensorflow=2.10"), one("tensorflow", "2.10"));
        assert!(read_text("conda install pytorch torchvision pytorch-cuda=11.8 -c pytorch -c nvidia").is_empty());
    }

    #[test]
    fn what_else_says_the_version_wins_and_doubtful_commands_read_none() {
        // A maintainer's suggestion is read where nothing else says the version…
        assert_eq!(read_text("try `pip install torch==2.1+cu121`"), one("torch", "2.1+cu121"));
        // …but never over what the program printed.
        let mut facts = Facts::default();
        packages::add(&mut facts, "torch", "1.13.1+cu117", None, "python prints");
        read(&["try `pip install torch==2.1+cu121`".to_owned()], &mut facts);
        assert_eq!(facts.packages.len(), 1);
        assert_eq!(facts.packages[0].version, "1.13.1+cu117");
        // Two versions of one framework: none.
        assert!(read_text("pip install torch==1.10.0+cu102\nthen try pip install torch==1.10.0+cu113\n").is_empty());
        // NVIDIA/cuda-python#34 (https://github.com/NVIDIA/cuda-python/issues/34): the install failed.
        let failed = "Command: \"C:\\sd\\venv\\Scripts\\python.exe\" -m pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113\n\
                      ERROR: No matching distribution found for torch==1.12.1+cu113\n";
        assert!(read_text(failed).is_empty());
        // Not pinned (outside PyTorch's index), not a framework, not a command.
        assert!(read_text("pip install torch>=2.0").is_empty());
        assert!(read_text("pip install numpy==1.26.0").is_empty());
        assert!(read_text("I will install torch==2.0.1 later").is_empty());
    }

    #[test]
    fn huge_and_odd_input_is_read_in_linear_time() {
        assert!(read_text(&"pip install ".repeat(200_000)).is_empty());
        assert!(read_text(&"pip install torch==".repeat(100_000)).is_empty());
        assert!(read_text(&"-i ".repeat(200_000)).is_empty());
        assert!(read_text("pip install").is_empty());
        assert!(read_text("conda install =").is_empty());
        assert!(read_text("pip install é==1.0 torch==ü").is_empty());
    }
}
