//! The shell's view of CUDA: `echo $PATH`, `echo $LD_LIBRARY_PATH`, `env | grep -i cuda`, `export`
//! lines, Python's `os.environ["…"] = "…"` and Hydra's `job.env_set` (→ the environment variables, the last
//! two set inside the running program), `which -a nvcc` (→ the
//! nvcc on PATH), and
//! `ls -l /usr/local/cuda*` (→ the toolkit folders and where the `/usr/local/cuda` link points).
//!
//! ```text
//! $ echo $LD_LIBRARY_PATH
//! /usr/local/cuda-11.8/lib64:
//! $ env | grep -i cuda
//! CUDA_HOME=/usr/local/cuda
//! $ which -a nvcc
//! /usr/bin/nvcc
//! /usr/local/cuda-12.1/bin/nvcc
//! $ ls -l /usr/local/ | grep cuda
//! lrwxrwxrwx  1 root root   21 Mar  1 12:00 cuda -> /usr/local/cuda-12.1/
//! drwxr-xr-x 17 root root 4096 Mar  1 12:00 cuda-12.1
//! ```

use super::facts::{Facts, MAX_LIST, version_of_dir};
use crate::probe::env::{cuda_entries, is_relevant};
use gpu_doctor_model::CudaVersion;
use gpu_doctor_model::{Pick, ToolkitInstall, ToolkitKind};

const ENV: &str = "environment variables";
const WHICH: &str = "which nvcc";
const LS: &str = "ls -l /usr/local/cuda*";

/// The most variables read from one paste.
const MAX_VARS: usize = 64;

/// Reads every variable, nvcc path and CUDA folder listing in the text.
pub(super) fn read(lines: &[String], facts: &mut Facts) {
    let mut which = false;
    let mut nvcc_run: Option<&str> = None;
    let mut env_set: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if let Some((name, value)) = hydra_env_set(line, &mut env_set) {
            set_in_process(facts, i, name, value, false);
            continue;
        }
        // The command in backquotes and its answer on the same line: "but `/usr/local/cuda/bin/nvcc --version` shows
        // `Cuda compilation tools, release 11.3, V11.3.58`" (AlexeyAB/darknet#8214).
        if t.contains("Cuda compilation tools, release")
            && let Some(path) = t.split('`').skip(1).step_by(2).find_map(nvcc_command)
        {
            if let Ok(version) = crate::parse::nvcc::parse(t) {
                facts.saw(i, WHICH);
                ran_nvcc(facts, path, version);
            }
            continue;
        }
        if let Some(path) = nvcc_command(t) {
            nvcc_run = Some(path);
            continue;
        }
        if let Some(path) = nvcc_run
            && t.contains("Cuda compilation tools, release")
        {
            nvcc_run = None;
            if let Ok(version) = crate::parse::nvcc::parse(t) {
                facts.saw(i, WHICH);
                ran_nvcc(facts, path, version);
            }
            continue;
        }
        if let Some(name) = echoed(t) {
            if let Some(value) = lines.get(i + 1).map(|l| l.trim()).filter(|v| is_echoed_value(name, v)) {
                set_var(facts, i, name, value);
            }
            continue;
        }
        if let Some((name, value)) = echoed_in_words(t) {
            set_var(facts, i, name, value);
            continue;
        }
        if t.starts_with("which ") || t.starts_with("whereis nvcc") || t.starts_with("type -a nvcc") {
            which = t.contains("nvcc");
            continue;
        }
        if which && let Some(path) = nvcc_path(t) {
            facts.saw(i, WHICH);
            add_nvcc(facts, path);
            continue;
        }
        which = false;
        if let Some(script) = launch_script(t) {
            let scripts = &facts.env.launch_scripts;
            if !scripts.iter().any(|s| s == script) && scripts.len() < MAX_VARS {
                facts.env.launch_scripts.push(script.to_owned());
                facts.saw(i, ENV);
            }
        }
        let assigned = assignment(t)
            .or_else(|| t.split_once("$ ").and_then(|(_, cmd)| assignment(cmd)))
            .or_else(|| windows_assignment(t))
            .or_else(|| device_list_in_words(t));
        // A line may hold both (a sentence quoting the script's `os.environ[…] = …` and the command
        // line that worked): the program's own assignment is what it set in process.
        let in_process = if ENVIRON.in_line(t) { python_assignment(t) } else { None };
        if let Some((name, value)) = in_process {
            set_in_process(facts, i, name, value, assigned.is_some());
        }
        // The nvcc PyTorch's extension builder ran, `<CUDA_HOME>/bin/nvcc`, where CUDA_HOME held a list.
        if BIN_NVCC.in_line(t)
            && let Some(home) = nvcc_under_a_path_list(t)
            && !facts.env.vars.contains_key("CUDA_HOME")
        {
            set_var(facts, i, "CUDA_HOME", home);
        }
        // A container's own variables on its command line: `docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=all …`.
        for (name, value) in container_env_flags(t) {
            if assigned.is_none_or(|(n, _)| n != name) {
                set_var(facts, i, name, value);
            }
        }
        // NCCL's switches said in a sentence (`Setting NCCL_P2P_DISABLE=1 did workaround`), any number.
        for (name, value) in if NCCL.in_line(t) { nccl_settings_in_words(t) } else { Vec::new() } {
            if assigned.is_none_or(|(n, _)| n != name) {
                set_var(facts, i, name, value);
            }
        }
        if let Some((name, value)) = assigned {
            set_var(facts, i, name, value);
        } else if in_process.is_none()
            && let Some((name, target)) = ls_entry(t)
        {
            facts.saw(i, LS);
            add_cuda_dir(facts, &name, target.as_deref());
        }
    }
}

/// A variable the program sets in its own process: recorded as such, and its value where the text gives it (a
/// Python expression, `args.gpu_devices`, does not) and no shell assignment on the same line does.
fn set_in_process(facts: &mut Facts, at: usize, name: &str, value: Option<&str>, assigned: bool) {
    facts.saw(at, ENV);
    let set = &mut facts.env.set_in_process;
    if !set.iter().any(|n| n == name) && set.len() < MAX_VARS {
        set.push(name.to_owned());
    }
    if let Some(value) = value
        && !assigned
    {
        set_var(facts, at, name, value);
    }
}

/// A variable of a Hydra config's `env_set:` block (`hydra: job: env_set: CUDA_VISIBLE_DEVICES: 4,5`), read line
/// by line with `block` holding the indentation of the `env_set:` line while inside it. Hydra sets these in the
/// running process, just before it calls the task function (facebookresearch/hydra `hydra/core/utils.py`,
/// `run_job`: `with env_override(hydra_cfg.hydra.job.env_set): … task_function(task_cfg)`), so after the
/// program's imports. Written from huggingface/optimum-benchmark#27 (a device list set there, and ignored).
fn hydra_env_set<'a>(line: &'a str, block: &mut Option<usize>) -> Option<(&'a str, Option<&'a str>)> {
    let indent = line.len() - line.trim_start().len();
    let t = line.trim();
    if t == "env_set:" {
        *block = Some(indent);
        return None;
    }
    let within = (*block)?;
    if t.is_empty() {
        return None;
    }
    if indent <= within {
        *block = None;
        return None;
    }
    let (name, value) = t.split_once(':')?;
    let value = value.trim().trim_matches(['"', '\'']);
    // An OmegaConf interpolation (`${oc.env:GPUS}`) sets a value the text does not give.
    (is_name(name) && is_relevant(name) && !value.is_empty())
        .then_some((name, (!value.contains("${")).then_some(value)))
}

/// The shell script a command line starts (`bash scripts/train.sh`, `sh run.sh --epochs 3`, `./run.sh`,
/// `CUDA_VISIBLE_DEVICES=0 bash x.sh`, `nohup bash x.sh &`, cmd's `call run.bat`, a prompt in front): the
/// program it runs gets the environment the script sets. `None` for any other line.
fn launch_script(line: &str) -> Option<&str> {
    use super::Needle;
    static SCRIPT: [Needle; 4] = [Needle::new(".sh"), Needle::new(".bat"), Needle::new(".cmd"), Needle::new(".ps1")];
    if !SCRIPT.iter().any(|n| n.in_line(line)) {
        return None;
    }
    // A command quoted as inline code in a sentence (`3. Run the script: `bash ./scripts/train.sh``): each code
    // span is a command line of its own.
    script_of_command(line).or_else(|| line.split('`').skip(1).step_by(2).find_map(script_of_command))
}

/// The script a command line runs ([`launch_script`]).
fn script_of_command(line: &str) -> Option<&str> {
    let line = line.trim_matches(['`', '*']).trim();
    let cmd = ["$ ", "# ", "> "].iter().filter_map(|p| line.rsplit_once(p).map(|(_, c)| c)).next().unwrap_or(line);
    let is_script = |w: &str| {
        let w = w.trim_matches(['`', '"', '\'']);
        [".sh", ".bash", ".bat", ".cmd", ".ps1"].iter().any(|e| w.len() > e.len() && w.ends_with(e))
    };
    let mut words = cmd.split_whitespace().skip_while(|w| w.contains('=') || *w == "nohup" || *w == "time");
    let first = words.next()?;
    let script = if matches!(first, "bash" | "sh" | "zsh" | "source" | "." | "call") {
        words.find(|w| !w.starts_with('-'))?
    } else {
        first
    };
    let starts_right = script.starts_with("./") || script.starts_with('/') || first != script;
    (is_script(script) && starts_right).then(|| script.trim_matches(['`', '"', '\'']))
}

/// `/usr/local/cuda/bin/nvcc -V` (or `--version`): an nvcc run by its full path, whose version the
/// next `Cuda compilation tools` line gives.
fn nvcc_command(line: &str) -> Option<&str> {
    let (path, flag) = line.split_once(' ')?;
    let ok = path.starts_with('/') && path.ends_with("/bin/nvcc") && matches!(flag.trim(), "-V" | "--version");
    ok.then_some(path)
}

/// The install `path` belongs to has nvcc `version`.
fn ran_nvcc(facts: &mut Facts, path: &str, version: CudaVersion) {
    let root = path.trim_end_matches("/bin/nvcc");
    let root = if root.is_empty() { "/" } else { root };
    if let Some(install) = install_for(facts, root) {
        install.nvcc = Some(path.to_owned());
        install.version = Some(version);
        install.version_source = Some(gpu_doctor_model::VersionSource::Nvcc);
    }
}

/// `echo $PATH`, `echo ${LD_LIBRARY_PATH}`, `echo "$CUDA_HOME"` → the variable's name (a shell's prompt before it,
/// `-bash-4.1$ `, is taken off by the cleaning).
fn echoed(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("echo ")?.trim().trim_matches('"');
    let name = rest.strip_prefix('$')?.trim_start_matches('{').trim_end_matches('}');
    (is_name(name) && is_relevant(name)).then_some(name)
}

/// What `echo $NAME` printed, said on the same line: `i echo $CUDA_HOME, it is :/usr/local/cuda-9.0.`,
/// `echo $CUDA_HOME gives /usr/local/cuda`, `` `echo $LD_LIBRARY_PATH` shows /usr/local/cuda/lib64 ``:
/// the variable's name and the value (a path or a `:` list, as [`is_echoed_value`] takes it), after
/// `is`, `gives`, `shows`, `returns`, `prints`, `outputs`, `:` or `->`.
fn echoed_in_words(line: &str) -> Option<(&str, &str)> {
    static ECHO: super::Needle = super::Needle::new("echo $");
    let at = ECHO.find(line)?;
    let rest = &line[at + "echo $".len()..];
    let rest = rest.strip_prefix('{').unwrap_or(rest);
    let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    let (name, after) = rest.split_at(len);
    if !(is_name(name) && is_relevant(name)) {
        return None;
    }
    let words: Vec<&str> = after.split_whitespace().take(6).collect();
    let verb = words.iter().position(|w| {
        let w = w.trim_matches(['`', '}', '"', ',']);
        matches!(
            w,
            "is" | "gives"
                | "gave"
                | "shows"
                | "showed"
                | "returns"
                | "returned"
                | "prints"
                | "printed"
                | "outputs"
                | ":"
                | "->"
        )
    })?;
    let value = words.get(verb + 1)?.trim_matches(['`', '"', '\'']).trim_end_matches(['.', ',', ';']);
    is_echoed_value(name, value).then_some((name, value))
}

/// A line that can be what `echo` printed: no prompt, no spaces (paths with spaces are rare in these); for a
/// variable of devices (`CUDA_VISIBLE_DEVICES`, `NVIDIA_VISIBLE_DEVICES`, misspelt or not), a list of indices
/// (written for cBio/cbio-cluster#1's `echo $CUDA_VISABLE_DEVICES` → `0`).
fn is_echoed_value(name: &str, v: &str) -> bool {
    let devices = name.ends_with("_DEVICES") && v.bytes().all(|b| b.is_ascii_digit() || b == b',');
    !v.is_empty() && !v.contains(' ') && (devices || v.starts_with('/') || v.starts_with(':') || v.contains(":/"))
}

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// `CUDA_HOME=/usr/local/cuda` (env), `export CUDA_HOME="/usr/local/cuda"`, `declare -x …`, the
/// assignment in front of a command (`CUDA_VISIBLE_DEVICES=1 python train.py`), or an `export` quoted
/// inside a sentence (`removing "export CUDA_VISIBLE_DEVICES=2" from the script`): a relevant variable.
/// Markdown code ticks or bold stars around the whole line (`**export CUDA_HOME=…**`) are not part of it, nor
/// quotes around a command quoted whole (` 'CUDA_VISIBLE_DEVICES=  python train_net.py …`, smallcorgi/Faster-RCNN_TF#141's
/// reporter).
fn assignment(line: &str) -> Option<(&str, &str)> {
    if !line.contains('=') {
        return None;
    }
    let line = line.trim().trim_matches(['`', '*', '\'', '"']);
    let mut in_a_sentence = false;
    let rest = match line.strip_prefix("declare -x ") {
        Some(rest) => rest,
        None => match line.find("export ") {
            Some(0) => &line["export ".len()..],
            Some(at) if line[..at].ends_with([' ', '`', '"', '\'', '(']) => {
                in_a_sentence = true;
                &line[at + "export ".len()..]
            }
            _ => line,
        },
    };
    let (name, value) = rest.split_once('=')?;
    if !is_name(name) || !is_relevant(name) {
        return None;
    }
    let value = match value.strip_prefix(['"', '\'']) {
        Some(quoted) => quoted.split(['"', '\'']).next().unwrap_or(""),
        None => value.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`')).next().unwrap_or(""),
    };
    // `… whenever I export CUDA_VISIBLE_DEVICES=1. Here is …` (neuronets/kwyk#17): the sentence's stop, not the
    // value's.
    let value = match value.trim_end_matches(['.', ',', ';', ':']) {
        trimmed if in_a_sentence && !trimmed.is_empty() => trimmed,
        _ => value,
    };
    Some((name, value))
}

/// The commands that start a container with variables of their own (`-e NAME=value`, `--env NAME=value`,
/// `--env=NAME=value`), and `exec`, which sets them for the command it runs.
const CONTAINER_COMMANDS: [&str; 6] =
    ["docker run", "docker container run", "docker create", "docker exec", "podman run", "nerdctl run"];

/// The options of `docker run`/`exec` (and podman's, nerdctl's) that take no value (docker/cli's
/// cli/command/container/opts.go and exec.go: the boolean flags); every other long option written without
/// `=` takes the next word.
const NO_VALUE: [&str; 13] = [
    "--rm",
    "--privileged",
    "--init",
    "--interactive",
    "--tty",
    "--detach",
    "--read-only",
    "--publish-all",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--disable-content-trust",
    "--quiet",
    "--help",
];

/// The short options that take a value (`-e`, `-v`, `-p`, `-w`, `-u`, `-h`, `-m`, `-c`, `-l`, `-a`): in a
/// cluster (`-itv`), only the last letter may take one.
const SHORT_WITH_VALUE: &str = "acehlmpuvw";

/// The relevant variables a container command line sets (`docker run -it -e BNB_CUDA_VERSION="118" image …`,
/// bitsandbytes-foundation/bitsandbytes#760): its options up to the image (`exec`: the container), not the
/// command's own words after it (`docker run img python -e …`).
fn container_env_flags(line: &str) -> Vec<(&str, &str)> {
    let Some(at) = CONTAINER_COMMANDS.iter().filter_map(|c| line.find(c)).min() else { return Vec::new() };
    let mut out = Vec::new();
    let mut words = line[at..].split_whitespace().skip(2);
    while let Some(word) = words.next() {
        let pair = match word {
            "-e" | "--env" => words.next(),
            _ if word.starts_with("--env=") => word.strip_prefix("--env="),
            "--" => break,
            _ if word.starts_with("--") => {
                if !word.contains('=') && !NO_VALUE.contains(&word) {
                    words.next();
                }
                continue;
            }
            _ if word.len() > 1 && word.starts_with('-') => {
                if word.ends_with(|c: char| SHORT_WITH_VALUE.contains(c)) {
                    words.next();
                }
                continue;
            }
            // The image (or the container `exec` runs in): what follows is the command's.
            _ => break,
        };
        let Some((name, value)) = pair.and_then(|p| p.trim_matches(['`', '"', '\'']).split_once('=')) else {
            continue;
        };
        if is_name(name) && is_relevant(name) && out.len() < MAX_VARS {
            out.push((name, value.trim_matches(['`', '"', '\''])));
        }
    }
    out
}

/// `CUDA_VISIBLE_DEVICES=7` written inside a sentence (`in run.sh, CUDA_VISIBLE_DEVICES=7 was used causing
/// …`): the variable's name, then a device list (indices and commas, or `GPU-`/`MIG-` UUIDs), after anything but a
/// name's or a path's character or a comment's `#` (a space, quote, tick, parenthesis, a CJK character). Only this
/// variable: its value's shape says it is one, where other names' values (paths) would not.
fn device_list_in_words(line: &str) -> Option<(&'static str, &str)> {
    const NAME: &str = "CUDA_VISIBLE_DEVICES=";
    static VISIBLE: super::Needle = super::Needle::new(NAME);
    let at = VISIBLE.find(line)?;
    // Not part of a longer name or a path; a sentence in Chinese or Japanese runs into it without a space
    // (`\u{6267}\u{884c}CUDA_VISIBLE_DEVICES=5 python startup.py`, chatchat-space/Langchain-Chatchat#1526).
    if line[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || "_-./${:=#".contains(c)) {
        return None;
    }
    let value = line[at + NAME.len()..]
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ')'))
        .next()?
        .trim_end_matches(['.', ',', ';', ':']);
    let list = !value.is_empty()
        && value.split(',').all(|d| {
            !d.is_empty() && (d.bytes().all(|b| b.is_ascii_digit()) || d.starts_with("GPU-") || d.starts_with("MIG-"))
        });
    list.then_some(("CUDA_VISIBLE_DEVICES", value))
}

static BIN_NVCC: super::Needle = super::Needle::new("/bin/nvcc");
static NCCL: super::Needle = super::Needle::new("NCCL_");
static ENVIRON: super::Needle = super::Needle::new("environ");

/// The folder list before `/bin/nvcc` in a command PyTorch's extension builder printed or failed to run
/// (`unable to execute '/usr/local/cuda:/usr/local/cuda-9.0/bin/nvcc'`, the command line itself):
/// torch.utils.cpp_extension runs `os.path.join(CUDA_HOME, 'bin', 'nvcc')`, so a path with a `:` list
/// in front of `/bin/nvcc` is CUDA_HOME set to a list, or to a folder with a `:` before or after it
/// (`unable to execute ':/usr/local/cuda-8.0/bin/nvcc'`, `'/usr/local/cuda-11.8:/bin/nvcc'`, the shell's
/// `/bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found`: facebookresearch/SparseConvNet#94,
/// IDEA-Research/GroundingDINO#165, chengdazhi/Deformable-Convolution-V2-PyTorch#86). `None` for any
/// other line.
fn nvcc_under_a_path_list(line: &str) -> Option<&str> {
    let end = line.find("/bin/nvcc")?;
    let start = line[..end].rfind([' ', '\'', '"', '`']).map_or(0, |s| s + 1);
    let home = &line[start..end];
    // A list, or one folder with a stray `:` at either end (`export CUDA_HOME=$CUDA_HOME:/usr/local/cuda`
    // with CUDA_HOME unset gives `:/usr/local/cuda`), which the shell and os.path.join keep as it is.
    let listed = home.starts_with(['/', ':']) && home.contains(':') && home.contains('/');
    (listed && !home.contains("://") && home.len() <= 512).then_some(home)
}

/// NCCL's variables written inside a sentence or a quoted command (`Setting \`NCCL_P2P_DISABLE=1
/// NCCL_SHM_DISABLE=1\` resolves it`): `NCCL_<NAME>=<word>` (spaces around `=` allowed, as prose writes it)
/// after the line's start, a space, quote, tick or parenthesis, the value a short word (NCCL's switches are numbers and level names:
/// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html).
fn nccl_settings_in_words(line: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    // Each look ends at the name's end (`=` or a space), and only so many are looked at: linear.
    for _ in 0..64 {
        let Some(at) = line[from..].find("NCCL_").map(|a| a + from) else { break };
        from = at + "NCCL_".len();
        if at > 0 && !line[..at].ends_with([' ', '`', '"', '\'', '(']) {
            continue;
        }
        let tail = &line[at..];
        let Some(end) = tail.find(|c: char| c == '=' || c.is_whitespace()) else { break };
        let (name, rest) = (&tail[..end], &tail[end..]);
        // People space the sign in prose (`setting the variable NCCL_P2P_DISABLE =1`); a shell would not.
        let Some(rest) = rest.trim_start_matches(' ').strip_prefix('=').map(|r| r.trim_start_matches(' ')) else {
            continue;
        };
        if !is_name(name) || name.len() > 40 {
            continue;
        }
        let value = rest
            .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ')' | ',' | ';'))
            .next()
            .unwrap_or("")
            .trim_end_matches('.');
        if !value.is_empty() && value.len() <= 16 && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            out.push((name, value));
        }
        if out.len() >= 8 {
            break;
        }
    }
    out
}

/// Python setting a variable for itself, anywhere in a line: `os.environ["CUDA_VISIBLE_DEVICES"] = '1'`
/// (also inside a sentence that quotes the script's line, and `environ[…]` after `from os import environ`),
/// or `os.environ.setdefault("…", "…")`, which
/// sets it the same way when it is not set yet (Python's os.environ is a mapping:
/// https://docs.python.org/3/library/os.html#os.environ). The value is `None` where the program computes
/// it (`= args.gpu_devices`, `= str(args.gpu)`): the variable is set in process, to a value not in the text.
fn python_assignment(line: &str) -> Option<(&str, Option<&str>)> {
    let quoted = |rest: &str| -> Option<(usize, char)> {
        let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
        Some((1, quote))
    };
    let (name, rest) = if let Some((_, rest)) = line.split_once("environ[") {
        let rest = rest.strip_prefix(['"', '\''])?;
        let (name, rest) = rest.split_once(['"', '\''])?;
        (name, rest.strip_prefix(']')?.trim_start().strip_prefix('=')?.trim_start())
    } else {
        let (_, rest) = line.split_once("os.environ.setdefault(")?;
        let rest = rest.trim_start().strip_prefix(['"', '\''])?;
        let (name, rest) = rest.split_once(['"', '\''])?;
        (name, rest.trim_start().strip_prefix(',')?.trim_start())
    };
    if !(is_name(name) && is_relevant(name)) {
        return None;
    }
    let Some((skip, quote)) = quoted(rest) else {
        return python_expression(rest).then_some((name, None));
    };
    let (value, after) = rest[skip..].split_once(quote)?;
    // A string the expression goes on from (`','.join(str(g) for g in args.gpus)`, `"cuda:" + gpu`) is not the value.
    let computed = after.trim_start().starts_with(['.', '+', '%', '[', '*']);
    Some((name, (!computed).then_some(value)))
}

/// Whether `rest` starts with a Python expression that computes a value: a name, an attribute, a call or a
/// subscript (`args.gpu_devices`, `str(args.gpu)`, `cfg["gpus"]`, `gpu_id`), not a number or prose.
fn python_expression(rest: &str) -> bool {
    let word: &str = rest.split([' ', ')', '\'', '"', '`', ';', ',']).next().unwrap_or_default();
    word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '(' | '[' | ']'))
}

/// A variable set in a Windows shell or a notebook: cmd's `set NAME=value` and `set "NAME=value"`
/// (https://learn.microsoft.com/windows-server/administration/windows-commands/set_1), PowerShell's
/// `$env:NAME = "value"` (https://learn.microsoft.com/powershell/module/microsoft.powershell.core/about/about_environment_variables),
/// IPython's `%env NAME=value` and `%env NAME value` (https://ipython.readthedocs.io/en/stable/interactive/magics.html#magic-env).
/// A prompt in front (`C:\work>`, `PS C:\work>`, `In [3]:`) is not part of it.
fn windows_assignment<'a>(line: &'a str) -> Option<(&'a str, &'a str)> {
    // Each form has a `=` but IPython's `%env NAME value`.
    if !line.contains(['=', '%']) {
        return None;
    }
    let line = line.trim_matches(['`', '*']);
    // PowerShell's `$Env:` is `$env:` (its names are not case-sensitive); ASCII lowering keeps byte offsets.
    let lower = if line.contains(['$', '%']) { line.to_ascii_lowercase() } else { String::new() };
    let after = |word: &str| -> Option<&'a str> { lower.find(word).map(|at| line[at + word.len()..].trim_start()) };
    let (name, value) = if let Some(rest) = after("$env:") {
        let (name, value) = rest.split_once('=')?;
        (name.trim_end(), value)
    } else if let Some(rest) = after("%env ") {
        match rest.split_once('=') {
            Some((name, value)) if !name.contains(' ') => (name, value),
            _ => rest.split_once(' ')?,
        }
    } else {
        let rest = match line.strip_prefix("set ").or_else(|| line.split_once("> set ").map(|(_, r)| r)) {
            Some(rest) => rest.trim_start(),
            None => return None,
        };
        let rest = rest.strip_prefix('"').map_or(rest, |r| r.strip_suffix('"').unwrap_or(r));
        rest.split_once('=')?
    };
    let value = value.trim_start();
    let value = match value.strip_prefix(['"', '\'']) {
        Some(quoted) => quoted.split(['"', '\'']).next().unwrap_or(""),
        None => {
            value.split(|c: char| c.is_whitespace() || matches!(c, '&' | '|' | '"' | '\'' | '`')).next().unwrap_or("")
        }
    };
    // PATH is a `;` list of folders with drive letters there, not the `:` list read here.
    let list = name.eq_ignore_ascii_case("PATH") || name == "LD_LIBRARY_PATH";
    (is_name(name) && is_relevant(name) && !list && !value.contains(' ')).then_some((name, value))
}

fn set_var(facts: &mut Facts, at: usize, name: &str, value: &str) {
    facts.saw(at, ENV);
    // Markdown bold pasted around part of a value (`/usr/local/cuda-10.0**/bin**`) is not part of it.
    let value = &value.replace("**", "");
    let list = |v: &str| -> Vec<String> {
        // `<path_to_cuda_dir/lib64` (bitsandbytes' advice) is a placeholder, no folder.
        v.split(':')
            .filter(|e| !e.is_empty() && !e.contains('$') && !e.starts_with('<'))
            .take(MAX_VARS)
            .map(str::to_owned)
            .collect()
    };
    let env = &mut facts.env;
    match name {
        "PATH" if env.path.is_empty() => {
            env.path = list(value);
            env.path_cuda_entries = cuda_entries(&env.path);
        }
        "LD_LIBRARY_PATH" if env.ld_library_path.is_empty() => env.ld_library_path = list(value),
        "PATH" | "LD_LIBRARY_PATH" => {}
        _ if env.vars.len() < MAX_VARS => {
            env.vars.entry(name.to_owned()).or_insert_with(|| gpu_doctor_model::mask_secret(name, value));
        }
        _ => {}
    }
}

/// `/usr/local/cuda-12.1/bin/nvcc`, or `nvcc is /usr/bin/nvcc` (`type -a`), or whereis's `nvcc: /usr/bin/nvcc …`.
fn nvcc_path(line: &str) -> Option<&str> {
    let path = line.strip_prefix("nvcc is ").or_else(|| line.strip_prefix("nvcc: ")).unwrap_or(line);
    let path = path.split_whitespace().next()?;
    (path.starts_with('/') && path.ends_with("/bin/nvcc")).then_some(path)
}

fn install_for<'a>(facts: &'a mut Facts, root: &str) -> Option<&'a mut ToolkitInstall> {
    if !facts.toolkits.iter().any(|t| t.root == root) {
        if facts.toolkits.len() >= MAX_LIST {
            return None;
        }
        let kind = if root.starts_with("/usr/local/cuda") { ToolkitKind::Local } else { ToolkitKind::Other };
        facts.toolkits.push(ToolkitInstall {
            root: root.to_owned(),
            kind,
            version: version_of_dir(root),
            version_source: None,
            nvcc: None,
            lib_dirs: Vec::new(),
            aliases: Vec::new(),
            python_env: None,
        });
    }
    facts.toolkits.iter_mut().find(|t| t.root == root)
}

fn add_nvcc(facts: &mut Facts, path: &str) {
    let root = path.trim_end_matches("/bin/nvcc");
    let root = if root.is_empty() { "/" } else { root };
    if let Some(install) = install_for(facts, root) {
        install.nvcc = Some(path.to_owned());
    }
    facts.picks.path.get_or_insert_with(|| Pick { named: path.to_owned(), install_root: Some(root.to_owned()) });
}

/// An `ls -l` line of a CUDA folder under /usr/local: its full path, and where it points when it is a
/// link. Also the `/usr/local/cuda-12.1:` header `ls` prints above a folder's listing.
fn ls_entry(line: &str) -> Option<(String, Option<String>)> {
    if let Some(dir) = line.strip_suffix(':').filter(|d| d.starts_with("/usr/local/cuda-") && !d.contains(' ')) {
        return version_of_dir(dir).map(|_| (dir.to_owned(), None));
    }
    let mut words = line.split_whitespace();
    let mode = words.next()?;
    let perms = mode.get(1..10).filter(|_| mode.starts_with(['d', 'l']))?;
    if !perms.chars().all(|c| "rwxsStT-".contains(c)) {
        return None;
    }
    let words: Vec<&str> = words.collect();
    let (name, target) = match words.iter().position(|w| *w == "->") {
        Some(arrow) => (*words.get(arrow.checked_sub(1)?)?, words.get(arrow + 1).copied()),
        None => (*words.last()?, None),
    };
    let full = if name.starts_with('/') { name.to_owned() } else { format!("/usr/local/{name}") };
    let full = full.trim_end_matches('/').to_owned();
    let is_cuda = full == "/usr/local/cuda" || version_of_dir(&full).is_some();
    if !is_cuda || !full.starts_with("/usr/local/") {
        return None;
    }
    let target = target.map(|t| {
        let t = t.trim_end_matches('/');
        if t.starts_with('/') { t.to_owned() } else { format!("/usr/local/{t}") }
    });
    Some((full, target))
}

fn add_cuda_dir(facts: &mut Facts, name: &str, target: Option<&str>) {
    match target {
        Some(target) => {
            let root = if version_of_dir(target).is_some() { target } else { name };
            if let Some(install) = install_for(facts, root)
                && root != name
                && !install.aliases.iter().any(|a| a == name)
            {
                install.aliases.push(name.to_owned());
            }
            if name == "/usr/local/cuda" {
                facts.picks.usr_local_cuda = Some(Pick { named: name.to_owned(), install_root: Some(root.to_owned()) });
            }
        }
        None => {
            let _ = install_for(facts, name);
            if name == "/usr/local/cuda" && facts.picks.usr_local_cuda.is_none() {
                facts.picks.usr_local_cuda = Some(Pick { named: name.to_owned(), install_root: Some(name.to_owned()) });
            }
        }
    }
}
