//! Undoes what pasting into an issue or a chat does to program output: Windows line endings,
//! markdown code fences, `>` quote markers, shell and REPL prompts.

/// The text as lines, each without its quote markers and prompt. A fence line becomes an empty
/// line, so the blocks on either side of it stay apart; text glued to a fence (```` ```NVIDIA
/// GeForce RTX 5090 with CUDA capability… ````, `…sm_90.```` `) stays, without the fence.
pub(super) fn lines(text: &str) -> Vec<String> {
    text.split('\n').map(|l| clean_line(l.trim_end_matches('\r'))).collect()
}

fn clean_line(line: &str) -> String {
    unbold(clean_marks(line))
}

/// Markdown's bold around words a person stressed in pasted output (`Device 0: NVIDIA GeForce RTX 4090,
/// **compute capability 8.9**, VMM: yes`) taken off: an opening `**` at the line's start or after a
/// space or opening punctuation, a closing one before the end, a space or closing punctuation, no space
/// just inside either. Python's `**kwargs` and `2**10` stay. One pass over the line.
fn unbold(line: String) -> String {
    // A byte search, not `contains("**")`, which builds a substring searcher for every line.
    let b = line.as_bytes();
    if !memchr::memchr_iter(b'*', b).any(|at| b.get(at + 1) == Some(&b'*')) {
        return line;
    }
    let b = line.as_bytes();
    let opens = |at: usize| at == 0 || matches!(b[at - 1], b' ' | b'\t' | b'(' | b'[' | b':' | b',' | b'"' | b'\'');
    // Also before `-` and a digit: a package named in bold, its version after (`**onnxruntime**-1.15.0-…whl`).
    let closes = |at: usize| {
        at == b.len()
            || matches!(b[at], b' ' | b'\t' | b')' | b']' | b',' | b'.' | b':' | b';')
            || (b[at] == b'-' && b.get(at + 1).is_some_and(u8::is_ascii_digit))
    };
    let mut out = String::with_capacity(line.len());
    let (mut i, mut kept) = (0, 0);
    while let Some(off) = line[i..].find("**") {
        let open = i + off;
        let inner = open + 2;
        i = inner;
        if !opens(open) || b.get(inner).is_none_or(|c| c.is_ascii_whitespace() || *c == b'*') {
            continue;
        }
        let Some(rel) = line[inner..].find('*') else { break };
        let close = inner + rel;
        i = close;
        if !line[close..].starts_with("**") || b[close - 1].is_ascii_whitespace() || !closes(close + 2) {
            continue;
        }
        out.push_str(&line[kept..open]);
        out.push_str(&line[inner..close]);
        kept = close + 2;
        i = kept;
    }
    out.push_str(&line[kept..]);
    out
}

fn clean_marks(line: &str) -> String {
    let line = line.trim_start_matches('\u{feff}');
    let line = strip_quotes(line);
    let trimmed = line.trim_start();
    let (line, trimmed) = match glued_to_fence(trimmed) {
        Some("") => return String::new(),
        Some(text) => (text, text),
        None => (line, trimmed),
    };
    let line = line.trim_end();
    let line = line.strip_suffix("```").map_or(line, |l| l.trim_end_matches('`').trim_end());
    match strip_prompt(trimmed) {
        Some(command) => command.trim_end().strip_suffix("```").map_or(command, str::trim_end).to_owned(),
        None => line.to_owned(),
    }
}

/// For a line that opens or closes a fence (```` ``` ```` or `~~~`): the text glued after it, or
/// `""` when there is none or it is an info string (one word, the block's language: ```` ```text ````,
/// ```` ```python ````); `None` for any other line. In the raw text of an issue people glue the
/// first line of the output to the fence (DreamTechAI/Direct3D-S2#32).
fn glued_to_fence(trimmed: &str) -> Option<&str> {
    let rest = if trimmed.starts_with("```") {
        trimmed.trim_start_matches('`')
    } else if trimmed.starts_with("~~~") {
        trimmed.trim_start_matches('~')
    } else {
        return None;
    };
    let rest = rest.trim();
    Some(if rest.contains(char::is_whitespace) { rest } else { "" })
}

/// `> > text` → `text`; `>>> import torch` → `import torch`. Indentation after the markers is kept
/// (the `nvidia-smi -q` report needs it), less the one space that follows a marker.
fn strip_quotes(mut line: &str) -> &str {
    while let Some(rest) = line.trim_start().strip_prefix('>') {
        line = rest.strip_prefix(' ').unwrap_or(rest);
    }
    line
}

/// The command after a shell prompt: `$ nvidia-smi`, `(base) user@host:~$ nvcc -V`,
/// `PS C:\Users\me> nvidia-smi`; `None` when the line has no prompt.
fn strip_prompt(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix("$ ") {
        return Some(rest);
    }
    let rest = match line.strip_prefix('(') {
        Some(r) => r.split_once(") ").map_or(line, |(_, r)| r),
        None => line,
    };
    if let Some((prompt, command)) = rest.split_once("$ ")
        && !prompt.contains(' ')
        && (prompt.contains('@')
            || prompt.ends_with(":~")
            || prompt.contains(":~/")
            // A bare folder name (`cuda-samples$ which nvcc`), before a command word.
            || (!prompt.is_empty()
                && prompt.chars().all(|c| c.is_ascii_alphanumeric() || "._-~/".contains(c))
                && command.starts_with(|c: char| c.is_ascii_lowercase())))
    {
        return Some(command);
    }
    if let Some(ps) = rest.strip_prefix("PS ")
        && let Some((path, command)) = ps.split_once("> ")
        && path.contains(['\\', ':'])
    {
        return Some(command);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bold_around_stressed_words_comes_off_and_python_stays() {
        // ggml's device line (ggml-cuda.cu's `Device %d: %s, compute capability %d.%d, VMM: %s`) with the
        // capability made bold, as people stress a value in an issue.
        assert_eq!(
            unbold("Device 0: NVIDIA GeForce RTX 4090, **compute capability 8.9**, VMM: yes".to_owned()),
            "Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes"
        );
        assert_eq!(unbold("**Driver Version: 550.54**".to_owned()), "Driver Version: 550.54");
        // A package in bold before its version (danielgatis/rembg#461's pip line).
        assert_eq!(
            unbold("Downloading **onnxruntime**-1.15.0-cp310-cp310-manylinux_2_17_x86_64.whl (5.9 MB)".to_owned()),
            "Downloading onnxruntime-1.15.0-cp310-cp310-manylinux_2_17_x86_64.whl (5.9 MB)"
        );
        for same in
            ["def f(*args, **kwargs):", "x = 2**10 + 3**2", "** not bold **", "a**b**c", "**open only", "**a**-x"]
        {
            assert_eq!(unbold(same.to_owned()), same);
        }
        // Many markers: one pass.
        let long = "**a** ".repeat(20_000);
        assert_eq!(unbold(long).len(), "a ".repeat(20_000).len());
    }

    #[test]
    fn quotes_fences_prompts_and_crlf_go() {
        let text = "> ```\r\n> $ nvidia-smi\r\n>     Product Name : X\r\n```text\n(base) me@box:~$ nvcc -V\n\
            PS C:\\Users\\me> pip list\n>>> import torch\nplain > not a quote\n";
        assert_eq!(
            lines(text),
            [
                "",
                "nvidia-smi",
                "    Product Name : X",
                "",
                "nvcc -V",
                "pip list",
                "import torch",
                "plain > not a quote",
                ""
            ]
        );
    }

    /// A bare folder name as the prompt (NVIDIA/cuda-samples issues' `cuda-samples$ which nvcc`) goes before a
    /// command word; a price or a variable does not look like one.
    #[test]
    fn a_folder_name_prompt_goes() {
        assert_eq!(
            lines(
                "cuda-samples$ which nvcc
/usr/bin/nvcc
"
            ),
            ["which nvcc", "/usr/bin/nvcc", ""]
        );
        for kept in ["PRICE$ 3 each", "echo $HOME", "a b$ c"] {
            assert_eq!(lines(kept)[0], kept);
        }
    }

    /// Output glued to its fences (the shape of DreamTechAI/Direct3D-S2#32's paste; the words here
    /// are pytorch/pytorch#150733's title): the text stays, the fences go; a one-word info string
    /// is still a fence.
    #[test]
    fn text_glued_to_a_fence_stays() {
        let text = "```NVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible.\n\
                    The current PyTorch install supports CUDA capabilities sm_50 sm_90.```\n\
                    ```console\n$ nvidia-smi```\n~~~ Driver Version: 570.86.16\n``` \n";
        assert_eq!(
            lines(text),
            [
                "NVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible.",
                "The current PyTorch install supports CUDA capabilities sm_50 sm_90.",
                "",
                "nvidia-smi",
                "Driver Version: 570.86.16",
                "",
                ""
            ]
        );
    }

    #[test]
    fn dollar_signs_inside_text_stay() {
        assert_eq!(lines("costs $ 5 and more"), ["costs $ 5 and more"]);
        assert_eq!(lines("echo a $ b"), ["echo a $ b"]);
    }
}
