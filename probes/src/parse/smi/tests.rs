use std::sync::LazyLock;

use proptest::prelude::*;
use proptest::sample::Index;

use super::*;
use crate::parse::{smi_csv, smi_table, smi_xml};

use crate::parse::fixtures;

#[test]
fn no_value_spellings_are_none() {
    for s in [
        "N/A",
        "[N/A]",
        " n/a ",
        "Not Supported",
        "[Not Supported]",
        "Requested functionality has been deprecated",
        "[Requested functionality has been deprecated]",
        "[Unknown Error]",
        "Insufficient Permissions",
        "",
        "   ",
        "[]",
    ] {
        assert_eq!(value(s), None, "{s:?}");
    }
    assert_eq!(value(" Default "), Some("Default"));
    assert_eq!(value("[Something]"), Some("[Something]"));
}

#[test]
fn numbers_with_units() {
    assert_eq!(mib("24564 MiB"), Some(24564));
    assert_eq!(mib("59MiB"), Some(59));
    assert_eq!(mib("103"), Some(103));
    assert_eq!(mib("[N/A]"), None);
    assert_eq!(mib("-1 MiB"), None);
    assert_eq!(mib("1.5 MiB"), None);
    assert_eq!(mib("MiB"), None);
    assert_eq!(mib("99999999999999999999999 MiB"), None);
    assert_eq!(int_with_unit::<u32>("16x", "x"), Some(16));
    assert_eq!(int_with_unit::<u32>("36 C", "C"), Some(36));
    assert_eq!(int_with_unit::<u32>("0 %", "%"), Some(0));
    assert_eq!(int_with_unit::<u32>("1410 MHz", "MHz"), Some(1410));
    assert_eq!(int_with_unit::<u32>("+4", ""), None);
}

#[test]
fn watts_become_milliwatts() {
    assert_eq!(watts_to_mw("123.45 W"), Some(123_450));
    assert_eq!(watts_to_mw("400.00 W"), Some(400_000));
    assert_eq!(watts_to_mw("98W"), Some(98_000));
    assert_eq!(watts_to_mw("28.16"), Some(28_160));
    assert_eq!(watts_to_mw("6.5"), Some(6_500));
    assert_eq!(watts_to_mw("1.23456 W"), Some(1_234));
    assert_eq!(watts_to_mw("0.001"), Some(1));
    for bad in ["N/A", "[N/A]", "", ".5", "1.2.3", "-3 W", "NaN", "inf", "1e3", "4294968 W", "W"] {
        assert_eq!(watts_to_mw(bad), None, "{bad:?}");
    }
}

#[test]
fn flags_and_modes() {
    assert_eq!(flag("Enabled"), Some(true));
    assert_eq!(flag("Disabled"), Some(false));
    assert_eq!(flag("Yes"), Some(true));
    assert_eq!(flag("No"), Some(false));
    assert_eq!(flag("On"), Some(true));
    assert_eq!(flag("Off"), Some(false));
    assert_eq!(flag("N/A"), None);
    assert_eq!(flag("Maybe"), None);
    assert_eq!(compute_mode("E. Process").as_deref(), Some("Exclusive_Process"));
    assert_eq!(compute_mode("E. Thread").as_deref(), Some("Exclusive_Thread"));
    assert_eq!(compute_mode("Default").as_deref(), Some("Default"));
    assert_eq!(compute_mode("[N/A]"), None);
    assert_eq!(driver("535.86.05").map(|d| d.to_string()).as_deref(), Some("535.86.05"));
    assert_eq!(driver("N/A"), None);
    assert_eq!(cuda("12.2"), Some(gpu_doctor_model::CudaVersion::new(12, 2)));
    assert_eq!(cuda("N/A"), None);
}

/// Runs all three parsers; the results do not matter, only that none panics.
/// Every nvidia-smi parser on `text`, on a thread with a time limit, so a hang fails the case.
fn parse_all(text: &str) {
    let text = text.to_owned();
    crate::test_util::bounded(crate::test_util::CASE_LIMIT, move || {
        let _ = smi_xml::parse(&text);
        let _ = smi_table::parse(&text);
        let _ = smi_csv::parse(&text);
        let _ = smi_csv::parse_rows(&text);
    });
}

/// Real captures (when the fixtures are there) plus small inline samples of each format.
static CAPTURES: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut all: Vec<String> = ["nvidia-smi-xml", "nvidia-smi-table", "nvidia-smi-csv"]
        .into_iter()
        .filter_map(fixtures)
        .flatten()
        .map(|(_, text)| text)
        .collect();
    all.push(smi_xml::tests::SAMPLE.to_owned());
    all.push(smi_table::tests::SAMPLE.to_owned());
    all.push(smi_csv::tests::SAMPLE.to_owned());
    all
});

/// The byte offset of the `i`-th char boundary of `s` (0..=char count).
fn boundary(s: &str, i: Index) -> usize {
    let n = s.chars().count();
    let k = i.index(n + 1);
    s.char_indices().map(|(b, _)| b).chain(std::iter::once(s.len())).nth(k).unwrap_or(s.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        parse_all(&s);
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..2048)) {
        parse_all(&String::from_utf8_lossy(&b));
    }

    #[test]
    fn box_drawing_noise_never_panics(s in "[|+=\\- a-zA-Z0-9:/%.\\[\\]\n]{0,400}") {
        parse_all(&format!("| NVIDIA-SMI 1.2 Driver Version: 1.2 CUDA Version: 1.2 |\n{s}"));
        parse_all(&format!("name, memory.total [MiB]\n{s}"));
    }

    #[test]
    fn truncated_captures_never_panic(file: Index, at: Index) {
        let text = &CAPTURES[file.index(CAPTURES.len())];
        parse_all(&text[..boundary(text, at)]);
    }

    #[test]
    fn captures_missing_a_line_never_panic(file: Index, line: Index) {
        let text = &CAPTURES[file.index(CAPTURES.len())];
        let mut lines: Vec<&str> = text.lines().collect();
        if !lines.is_empty() {
            lines.remove(line.index(lines.len()));
        }
        parse_all(&lines.join("\n"));
    }

    #[test]
    fn captures_with_a_replaced_slice_never_panic(file: Index, a: Index, b: Index, with in any::<String>()) {
        let text = &CAPTURES[file.index(CAPTURES.len())];
        let (a, b) = (boundary(text, a), boundary(text, b));
        let (from, to) = (a.min(b), a.max(b));
        parse_all(&format!("{}{with}{}", &text[..from], &text[to..]));
    }
}
