//! Fixes name paths of the machine, which may be hostile: every command a fix shows must hand its
//! program exactly the words meant, whatever the paths hold.

use super::builder::{MARK, Machine, hostile_machines, outside_powershell_quotes};
use gpu_doctor_kb::Kb;

/// The fix with every shown command taken out; what is left is prose and fixed syntax.
fn prose(fix: &str, shown: &[super::super::Shown]) -> String {
    let mut texts: Vec<&str> = shown.iter().map(|s| s.text.as_str()).collect();
    texts.sort_by_key(|t| std::cmp::Reverse(t.len()));
    texts.iter().fold(fix.to_owned(), |acc, t| acc.replace(t, "<cmd>"))
}

/// The fixes still written as prose by the rules, and what each shows (the rest are plans:
/// `gpu-doctor-installers`' `tests/quoting.rs` checks those over the same machines).
const REACHED: &[(&str, &str)] = &[("a Linux driver inside WSL2", "dpkg -S")];

fn check(name: &str, m: &Machine) {
    let (findings, shown) = super::super::diagnose_shown(&m.0, Kb::get().unwrap());
    let fixes: Vec<&str> = findings.iter().filter_map(super::words).collect();
    assert!(fixes.iter().any(|f| f.contains(MARK)), "{name}: no fix shows the hostile path: {findings:#?}");
    let (_, want) = REACHED.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("{name} has no REACHED"));
    assert!(fixes.iter().any(|f| f.contains(want)), "{name}: no fix shows {want}: {fixes:#?}");
    for s in &shown {
        if let Some(argv) = &s.argv {
            assert_eq!(shlex::split(&s.text).as_ref(), Some(argv), "{name}: {:?} does not read back", s.text);
        }
        // PowerShell (the only other shell fixes use): the machine text only inside literals.
        if s.argv.is_none() {
            let bare = outside_powershell_quotes(&s.text);
            assert!(!bare.contains(MARK), "{name}: PowerShell would run part of {:?}: {bare}", s.text);
        }
    }
    for fix in fixes {
        let rest = prose(fix, &shown);
        assert!(!rest.contains(MARK), "{name}: machine text outside a quoted command:\n{fix}\nleft: {rest}");
    }
}

#[test]
fn every_prose_fix_quotes_hostile_paths_for_posix_sh() {
    for (name, m) in hostile_machines().into_iter().filter(|(n, _)| REACHED.iter().any(|(r, _)| r == n)) {
        check(name, &m);
    }
}
