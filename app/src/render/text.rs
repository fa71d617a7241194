//! The terminal summary of `gpu-doctor check`.

use std::fmt::Write;

use gpu_doctor_model::{Origin, Outcome, Report, Severity};
use gpu_doctor_probes::parse::paste::next_paste;

use super::facts::{Tone, UNKNOWN, sections};
use super::findings::{severity_word, tally};

const LABEL_WIDTH: usize = 11;

/// Text from the machine, a paste or a file, made safe to print on a terminal as one line: line
/// breaks and tabs become spaces; every other control character (ESC, BEL, CR, DEL, the 8-bit
/// CSI) and the bidirectional overrides are shown as their escape (`\u{1b}`), so no screen clear,
/// title change, clipboard write (OSC 52), overwritten line or reordered text gets through.
/// Everything gpu-doctor prints from outside goes through here; its own colours come afterwards.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if is_hidden(c) => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

/// Control characters and the characters that reorder text on screen (embeddings, overrides,
/// isolates): never written as they are.
pub(crate) fn is_hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}
fn paint(text: &str, tone: Tone, color: bool) -> String {
    let text = clean(text);
    if !color {
        return text;
    }
    let code = match tone {
        Tone::Good => "32",
        Tone::Plain => "0",
        Tone::Warn => "33",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// Cuts a long detail line; `--verbose` shows it whole.
fn shorten(line: &str) -> String {
    const MAX_CHARS: usize = 160;
    let line = clean(line);
    if line.chars().count() <= MAX_CHARS {
        return line;
    }
    let cut: String = line.chars().take(MAX_CHARS).collect();
    format!("{cut}… (--verbose shows all)")
}

/// The findings: each with its evidence and fix; details and explanations of notes with `verbose`.
fn findings(out: &mut String, report: &Report, color: bool, verbose: bool) {
    let _ = writeln!(out, "\nFindings: {}", tally(&report.findings));
    for f in &report.findings {
        let tone = match f.severity {
            Severity::Error | Severity::Warning => Tone::Warn,
            Severity::Info => Tone::Plain,
        };
        let _ = writeln!(
            out,
            "\n  {} {}  [{}]",
            paint(severity_word(f.severity), tone, color),
            clean(&f.summary),
            clean(&f.id)
        );
        if verbose || f.severity != Severity::Info {
            let _ = writeln!(out, "    {}", if verbose { clean(&f.detail) } else { shorten(&f.detail) });
        }
        for e in &f.evidence {
            let _ = writeln!(out, "    · {}", if verbose { clean(e) } else { shorten(e) });
        }
        if !f.explains.is_empty() {
            let _ = writeln!(out, "    explains the known messages {}", clean(&f.explains.join(", ")));
        }
        if let Some(fix) = &f.fix {
            let _ = writeln!(out, "    fix: {}", clean(fix));
        }
    }
}

/// The summary: a headline per section with its details indented; with `verbose`, the probe trace.
pub fn summary(report: &Report, color: bool, verbose: bool) -> String {
    let mut out = String::new();
    let s = &report.snapshot;
    let _ = writeln!(out, "{} · snapshot schema {}\n", clean(&report.version_line()), s.schema_version);
    let pasted = matches!(s.origin, Origin::Pasted { .. });
    if let Origin::Pasted { formats } = &s.origin {
        let formats = if formats.is_empty() { "nothing recognised".to_owned() } else { formats.join(", ") };
        let _ = writeln!(out, "Another machine, from pasted text ({}).\n", clean(&formats));
    }
    // What reading the text noted: a cut, a newer report, nothing recognised.
    for note in &s.notes {
        let _ = writeln!(out, "Note: {}\n", clean(note));
    }
    // A paste shows what it held; the parts it did not show are named once, on one line.
    let mut not_shown = Vec::new();
    for sec in sections(report) {
        if pasted && sec.headline == UNKNOWN {
            not_shown.push(sec.label);
            continue;
        }
        let _ = writeln!(out, "{:<LABEL_WIDTH$}{}", sec.label, paint(&sec.headline, sec.tone, color));
        for line in &sec.pre {
            let _ = writeln!(out, "{:<LABEL_WIDTH$}{}", "", clean(line));
        }
        for d in &sec.details {
            let _ = writeln!(out, "{:<LABEL_WIDTH$}{}", "", if verbose { clean(d) } else { shorten(d) });
        }
    }
    if !not_shown.is_empty() {
        let _ = writeln!(out, "{:<LABEL_WIDTH$}{}", "Not shown", not_shown.join(", "));
    }
    findings(&mut out, report, color, verbose);
    if let Some(next) = next_paste(s, &report.findings) {
        let _ = writeln!(out, "\nTo settle this, paste the output of this command too: {}", next.command);
        let _ = writeln!(out, "  (it shows {})", next.shows);
    }
    if !pasted && (s.driver.value().is_none() || s.gpus.value().is_none()) {
        let _ = writeln!(out, "\n`gpu-doctor check --verbose` shows every place that was looked at.");
    }
    if verbose {
        let _ = writeln!(out, "\nProbe trace:");
        for t in &s.trace {
            let mark = match t.outcome {
                Outcome::Ok => "ok  ",
                Outcome::Miss => "miss",
                Outcome::Error => "ERR ",
                Outcome::Unknown => "?   ",
            };
            let _ = writeln!(out, "  {mark} {:<13} {:<40} {}", clean(&t.probe), clean(&t.method), clean(&t.detail));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gpu_doctor_judge::diagnose::diagnose;
    use gpu_doctor_kb::Kb;
    use gpu_doctor_probes::parse::paste::read_pasted;

    use super::*;

    fn pasted_summary(text: &str) -> String {
        let kb = Kb::get().unwrap();
        let snap = read_pasted(text, kb).unwrap();
        let findings = diagnose(&snap, kb);
        summary(&Report::new(snap, findings), false, false)
    }

    /// zai-org/ChatGLM3#100 (tests/corpus/driver_too_old_for_runtime/chatglm3-100-found-11060.txt):
    /// one error line shows the finding, one line for the parts it did not show, and the command
    /// that would show the driver.
    #[test]
    fn one_error_line_names_what_was_not_shown_once_and_what_to_paste() {
        let out = pasted_summary(
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11060). Please update your \
             GPU driver by downloading and installing a new version from the URL: \
             http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a \
             PyTorch version that has been compiled with your version of the CUDA driver.",
        );
        assert!(!out.lines().any(|l| l.trim_end().ends_with(UNKNOWN)), "no line per unknown part:\n{out}");
        let not_shown: Vec<&str> = out.lines().filter(|l| l.starts_with("Not shown")).collect();
        assert_eq!(not_shown.len(), 1, "{out}");
        assert!(not_shown[0].contains("Driver") && not_shown[0].contains("GPUs"), "{out}");
        assert!(out.contains("observed.torch.driver_too_old"), "{out}");
        assert!(out.contains("paste the output of this command too: nvidia-smi\n"), "{out}");
        assert!(!out.contains("gpu-doctor check --verbose"), "a paste was not checked here:\n{out}");
    }

    /// A known message a rule's finding explains is named under it, not as a finding of its own: XLA's
    /// cuDNN refusal (its wording in XLA's cuda_dnn.cc, the catalogue row's sample) is the mismatch finding.
    #[test]
    fn the_known_messages_a_finding_explains_are_named_under_it() {
        let out = pasted_summary(
            "E0430 22:32:43.417007 2493694 cuda_dnn.cc:454] Loaded runtime CuDNN library: 9.1.0 but source was compiled \
             with: 9.8.0. CuDNN library needs to have matching major version and equal or higher minor version.",
        );
        assert!(out.contains("[cudnn.version_mismatch]"), "{out}");
        assert!(out.contains("    explains the known messages observed.xla.cudnn_version_mismatch\n"), "{out}");
        assert!(!out.contains("[observed.xla.cudnn_version_mismatch]"), "{out}");
    }

    /// A paste that shows the driver and GPUs asks for nothing more about them.
    #[test]
    fn a_paste_with_the_driver_does_not_ask_for_nvidia_smi() {
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paste/support_thread.md"));
        let out = pasted_summary(text);
        assert!(!out.contains("this command too: nvidia-smi"), "{out}");
        assert!(out.lines().filter(|l| l.starts_with("Not shown")).count() <= 1, "{out}");
    }
}
