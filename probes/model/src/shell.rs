//! Commands shown to a person, kept as argv and quoted for the shell they will be pasted into.
//!
//! Fixes name paths of the machine (an environment's interpreter, a toolkit's folder), and those
//! paths may come from a pasted report or a hostile environment: `/p;touch${IFS}PWNED;#/.venv`.
//! A command is therefore built as a [`ShellCommand`] (program and arguments, no shell syntax) and
//! only rendered to text for one [`Shell`], every word quoted so that the shell hands the program
//! exactly those arguments. Deliberate shell syntax (`$(uname -r)`, `&&`) belongs only in fixed text
//! that holds no machine data.
//!
//! POSIX sh and PowerShell can quote every string. cmd.exe cannot: `%` expands even inside quotes,
//! `!` does under delayed expansion, a `"` inside a quoted word cannot be escaped, and a line break
//! ends the command; [`quote_cmd`] refuses those rather than emit something unsafe.
//!
//! PowerShell quoting makes each word one literal string, so nothing in it runs. Windows
//! PowerShell 5.1 then passes arguments to native programs without escaping embedded `"` and drops
//! empty ones; Windows paths cannot hold `"`, and no fix passes an empty argument.

use std::fmt;

use crate::OsFamily;

/// The shell a command is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// POSIX sh and its descendants (bash, zsh, dash).
    Posix,
    /// Windows PowerShell 5.1 and PowerShell 7.
    PowerShell,
    /// The Windows command prompt, cmd.exe.
    Cmd,
}

impl Shell {
    /// The shell a person on this OS pastes into: PowerShell on Windows, POSIX sh elsewhere.
    pub fn for_os(os: OsFamily) -> Self {
        if os == OsFamily::Windows { Self::PowerShell } else { Self::Posix }
    }
}

impl fmt::Display for Shell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Posix => "POSIX sh",
            Self::PowerShell => "PowerShell",
            Self::Cmd => "cmd.exe",
        })
    }
}

/// A word a shell cannot be given safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{shell} cannot be given {text:?} safely: {why}")]
pub struct Unquotable {
    /// The shell.
    pub shell: Shell,
    /// The word.
    pub text: String,
    /// Why not.
    pub why: &'static str,
}

/// Characters no shell needs quoted.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '+' | ',' | '=' | '@' | '%')
}

/// One word for POSIX sh: as is when it holds only characters sh leaves alone, else in single
/// quotes, where nothing is special; a `'` inside becomes `'\''`. Never fails: single quotes can
/// hold any byte, a line break included.
pub fn quote_posix(word: &str) -> String {
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The characters PowerShell reads as a single quote.
const POWERSHELL_SINGLE_QUOTES: [char; 5] = ['\'', '\u{2018}', '\u{2019}', '\u{201a}', '\u{201b}'];

/// One word for PowerShell: as is when it holds only letters, digits and `_ - . / : + = \`, else a
/// single-quoted string, where only the quote characters are special (PowerShell
/// also reads the typographic quotes U+2018 to U+201B as quotes) and each is doubled.
pub fn quote_powershell(word: &str) -> String {
    let bare = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '+' | '=' | '\\'))
        && !word.starts_with("--%");
    if bare {
        return word.to_owned();
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if POWERSHELL_SINGLE_QUOTES.contains(&c) {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// One word for cmd.exe: as is when plain, else in double quotes (where `& | < > ^ ( )` and spaces
/// are literal), with trailing backslashes doubled so the program's own parser does not read the
/// closing quote as escaped. Refuses `%`, `!`, `"`, line breaks and other control characters, which
/// cmd.exe expands or cannot quote.
pub fn quote_cmd(word: &str) -> Result<String, Unquotable> {
    let refuse = |why| Err(Unquotable { shell: Shell::Cmd, text: word.to_owned(), why });
    if word.contains('%') {
        return refuse("cmd.exe expands %NAME% even inside quotes");
    }
    if word.contains('!') {
        return refuse("cmd.exe expands !NAME! when delayed expansion is on");
    }
    if word.contains('"') {
        return refuse("a double quote inside a quoted word cannot be escaped in cmd.exe");
    }
    if word.contains(['\r', '\n']) {
        return refuse("a line break ends the command in cmd.exe");
    }
    if word.chars().any(|c| c.is_control() && c != '\t') {
        return refuse("cmd.exe cannot be given control characters");
    }
    if !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '+' | '\\'))
    {
        return Ok(word.to_owned());
    }
    let trailing = word.len() - word.trim_end_matches('\\').len();
    Ok(format!("\"{word}{}\"", "\\".repeat(trailing)))
}

/// One word quoted for `shell`.
pub fn quote(shell: Shell, word: &str) -> Result<String, Unquotable> {
    match shell {
        Shell::Posix => Ok(quote_posix(word)),
        Shell::PowerShell => Ok(quote_powershell(word)),
        Shell::Cmd => quote_cmd(word),
    }
}

/// A program and its arguments, exactly as the program should receive them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    /// The program: a name looked up on PATH or a path.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl ShellCommand {
    /// `program` with no arguments.
    pub fn new(program: impl Into<String>) -> Self {
        Self { program: program.into(), args: Vec::new() }
    }

    /// Adds one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Program and arguments, as one list.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(&self.program).chain(&self.args).cloned().collect()
    }

    /// The line to paste into `shell`. In PowerShell a quoted program needs the call operator `&`;
    /// in POSIX sh a program word with `=` is quoted so it is not read as an assignment.
    pub fn render(&self, shell: Shell) -> Result<String, Unquotable> {
        let program = match shell {
            Shell::Posix if self.program.contains('=') => format!("'{}'", self.program.replace('\'', r"'\''")),
            Shell::PowerShell => {
                let q = quote_powershell(&self.program);
                if q.starts_with('\'') { format!("& {q}") } else { q }
            }
            _ => quote(shell, &self.program)?,
        };
        let mut line = program;
        for a in &self.args {
            line.push(' ');
            line.push_str(&quote(shell, a)?);
        }
        Ok(line)
    }
}

/// True for a name a shell variable may have.
fn var_name_ok(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_name(shell: Shell, name: &str) -> Result<(), Unquotable> {
    if var_name_ok(name) {
        Ok(())
    } else {
        Err(Unquotable { shell, text: name.to_owned(), why: "not a variable name" })
    }
}

/// The line that sets an environment variable for this shell session: `export NAME='value'`,
/// `$env:NAME = 'value'` or `set "NAME=value"`.
pub fn set_var(shell: Shell, name: &str, value: &str) -> Result<String, Unquotable> {
    check_name(shell, name)?;
    match shell {
        Shell::Posix => Ok(format!("export {name}={}", quote_posix(value))),
        Shell::PowerShell => Ok(format!("$env:{name} = {}", powershell_string(value))),
        Shell::Cmd => {
            // Quoted or not, the value must be a word cmd.exe can take as is.
            quote_cmd(value)?;
            Ok(format!("set \"{name}={value}\""))
        }
    }
}

/// A PowerShell string literal: always single-quoted, so it is a value, never a command.
fn powershell_string(value: &str) -> String {
    let q = quote_powershell(value);
    if q.starts_with('\'') { q } else { format!("'{q}'") }
}

/// The line that removes an environment variable from this shell session.
pub fn unset_var(shell: Shell, name: &str) -> Result<String, Unquotable> {
    check_name(shell, name)?;
    Ok(match shell {
        Shell::Posix => format!("unset {name}"),
        Shell::PowerShell => format!("Remove-Item Env:{name}"),
        Shell::Cmd => format!("set {name}="),
    })
}

/// The line that puts `dir` first in the list variable `name` (`PATH`), keeping its current value.
pub fn prepend_var(shell: Shell, name: &str, dir: &str) -> Result<String, Unquotable> {
    check_name(shell, name)?;
    match shell {
        Shell::Posix => Ok(format!("export {name}={}:\"${name}\"", quote_posix(dir))),
        Shell::PowerShell => Ok(format!("$env:{name} = {} + $env:{name}", powershell_string(&format!("{dir};")))),
        Shell::Cmd => {
            quote_cmd(dir)?;
            Ok(format!("set \"{name}={dir};%{name}%\""))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Words that break naive quoting.
    const HOSTILE: &[&str] = &[
        "/home/user/p;touch${IFS}PWNED;#/.venv",
        "/home/o'brien/.venv/bin/python",
        "/x/$(touch PWNED)/y",
        "/x/`id`/y",
        "/with space/and\ttab",
        "/line\nbreak",
        "it's \"quoted\"",
        "a\\b\\",
        "*?[a]{b,c}~!#&|<>()^",
        "",
        "-n",
        "--%",
        "@splat",
        "$env:PATH",
        "\u{2018}curly\u{2019} \u{201a}low\u{201b}",
        "caf\u{e9}/\u{65e5}\u{672c}",
    ];

    #[test]
    fn posix_quoting_reads_back_as_the_same_words() {
        for w in HOSTILE {
            let q = quote_posix(w);
            assert_eq!(shlex::split(&q), Some(vec![(*w).to_owned()]), "{w:?} → {q}");
        }
        let cmd =
            ShellCommand::new("/home/a b/bin/python").args(["-m", "pip", "install"]).args(HOSTILE.iter().copied());
        let line = cmd.render(Shell::Posix).unwrap();
        assert_eq!(shlex::split(&line), Some(cmd.argv()), "{line}");
        assert_eq!(quote_posix("torch==2.5.1"), "torch==2.5.1", "plain words stay readable");
        assert_eq!(quote_posix("torch==2.5.*"), "'torch==2.5.*'");
        assert_eq!(ShellCommand::new("A=b").render(Shell::Posix).unwrap(), "'A=b'");
    }

    #[test]
    fn posix_quoting_is_what_sh_runs() {
        // Where a POSIX shell is at hand, it must hand the program exactly these words.
        let Ok(out) = std::process::Command::new("sh").arg("-c").arg("printf '%s\\0' x").output() else { return };
        if out.stdout != b"x\0" {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let words: Vec<&str> = HOSTILE.to_vec();
        let line = ShellCommand::new("printf").arg("%s\\0").args(words.iter().copied()).render(Shell::Posix).unwrap();
        let out = std::process::Command::new("sh").arg("-c").arg(&line).current_dir(dir.path()).output().unwrap();
        let got: Vec<String> = out.stdout.split(|b| *b == 0).map(|w| String::from_utf8_lossy(w).into_owned()).collect();
        assert_eq!(&got[..words.len()], &words[..], "{line}");
        assert!(!dir.path().join("PWNED").exists());
        let set = set_var(Shell::Posix, "V", HOSTILE[0]).unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{set}; printf '%s' \"$V\""))
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), HOSTILE[0]);
        assert!(!dir.path().join("PWNED").exists());
    }

    #[test]
    fn powershell_quoting_doubles_every_single_quote_and_calls_quoted_programs() {
        assert_eq!(quote_powershell(r"C:\Python312\python.exe"), r"C:\Python312\python.exe");
        assert_eq!(quote_powershell("o'brien"), "'o''brien'");
        assert_eq!(quote_powershell("a\u{2018}b\u{2019}c"), "'a\u{2018}\u{2018}b\u{2019}\u{2019}c'");
        assert_eq!(quote_powershell("$(calc)"), "'$(calc)'");
        assert_eq!(quote_powershell("a;b"), "'a;b'");
        assert_eq!(quote_powershell("--%"), "'--%'");
        assert_eq!(quote_powershell("@x"), "'@x'");
        assert_eq!(quote_powershell("a,b"), "'a,b'");
        assert_eq!(quote_powershell("a`b"), "'a`b'");
        assert_eq!(quote_powershell(""), "''");
        assert_eq!(quote_powershell("line\nbreak"), "'line\nbreak'");
        let line = ShellCommand::new(r"C:\Program Files\Python 3.12\python.exe")
            .args(["-m", "pip", "install", "torch==2.5.*"])
            .render(Shell::PowerShell)
            .unwrap();
        assert_eq!(line, r"& 'C:\Program Files\Python 3.12\python.exe' -m pip install 'torch==2.5.*'");
        assert_eq!(set_var(Shell::PowerShell, "CUDA_HOME", "C:\\a'b").unwrap(), "$env:CUDA_HOME = 'C:\\a''b'");
        assert_eq!(set_var(Shell::PowerShell, "X", "0,1").unwrap(), "$env:X = '0,1'");
        assert_eq!(set_var(Shell::PowerShell, "X", "0").unwrap(), "$env:X = '0'");
        assert_eq!(unset_var(Shell::PowerShell, "X").unwrap(), "Remove-Item Env:X");
        assert_eq!(
            prepend_var(Shell::PowerShell, "PATH", r"C:\c'd\bin").unwrap(),
            r"$env:PATH = 'C:\c''d\bin;' + $env:PATH"
        );
        // Every hostile word comes back as one single-quoted literal with nothing special inside.
        for w in HOSTILE {
            let q = quote_powershell(w);
            if q.starts_with('\'') {
                let inner = &q[1..q.len() - 1];
                let undoubled: String = {
                    let mut s = String::new();
                    let mut it = inner.chars().peekable();
                    while let Some(c) = it.next() {
                        if POWERSHELL_SINGLE_QUOTES.contains(&c) {
                            assert_eq!(it.next(), Some(c), "{w:?}: a lone quote in {q}");
                        }
                        s.push(c);
                    }
                    s
                };
                assert_eq!(&undoubled, w);
            } else {
                assert!(w.chars().all(|c| c.is_ascii_alphanumeric() || "_-./:+=\\".contains(c)), "{w:?}");
            }
        }
    }

    #[test]
    fn cmd_quoting_refuses_what_cmd_cannot_take() {
        assert_eq!(quote_cmd(r"C:\Python312\python.exe").unwrap(), r"C:\Python312\python.exe");
        assert_eq!(quote_cmd(r"C:\Program Files\x").unwrap(), r#""C:\Program Files\x""#);
        assert_eq!(quote_cmd(r"C:\a b\").unwrap(), r#""C:\a b\\""#);
        assert_eq!(quote_cmd("a&b|c<d>e^f(g)").unwrap(), "\"a&b|c<d>e^f(g)\"");
        assert_eq!(quote_cmd("").unwrap(), "\"\"");
        for bad in ["100%", "%PATH%", "wow!", "say \"hi\"", "a\nb", "a\rb", "a\0b"] {
            let err = quote_cmd(bad).unwrap_err();
            assert_eq!(err.shell, Shell::Cmd, "{bad:?}");
        }
        let cmd =
            ShellCommand::new(r"C:\Program Files\Python\python.exe").args(["-m", "pip", "install", "torch==2.5.*"]);
        assert_eq!(
            cmd.render(Shell::Cmd).unwrap(),
            r#""C:\Program Files\Python\python.exe" -m pip install "torch==2.5.*""#
        );
        assert!(ShellCommand::new("python").arg("%USERPROFILE%").render(Shell::Cmd).is_err());
        assert_eq!(set_var(Shell::Cmd, "CUDA_PATH", r"C:\a b").unwrap(), r#"set "CUDA_PATH=C:\a b""#);
        assert!(set_var(Shell::Cmd, "X", "a%b").is_err());
        assert!(set_var(Shell::Cmd, "X", "a\"b").is_err());
        assert_eq!(unset_var(Shell::Cmd, "X").unwrap(), "set X=");
    }

    #[test]
    fn variable_names_are_checked() {
        for shell in [Shell::Posix, Shell::PowerShell, Shell::Cmd] {
            assert!(set_var(shell, "A;B", "x").is_err());
            assert!(unset_var(shell, "$(x)").is_err());
            assert!(set_var(shell, "CUDA_HOME", "x").is_ok());
        }
        assert_eq!(
            set_var(Shell::Posix, "CUDA_HOME", "/usr/local/cuda-12.4").unwrap(),
            "export CUDA_HOME=/usr/local/cuda-12.4"
        );
        assert_eq!(set_var(Shell::Posix, "V", "a'b").unwrap(), r"export V='a'\''b'");
        assert_eq!(prepend_var(Shell::Posix, "PATH", "/a b/bin").unwrap(), "export PATH='/a b/bin':\"$PATH\"");
    }
}
