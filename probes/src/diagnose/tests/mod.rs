#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bench;
mod companions;
use crate::testing as builder;
mod containers;
mod cudnn;
mod env_vars;
mod first;
mod fit;
mod health;
mod link;
mod presence;
mod quoting;
mod toolkits;
mod topology;
mod wheels;
mod whole;
mod wsl;

use super::*;

#[test]
fn rule_ids_are_unique_dotted_and_documented() {
    let mut ids: Vec<&str> = rules().map(|r| r.id).collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate rule ids");
    for r in rules() {
        assert!(r.id.contains('.') && r.id.chars().all(|c| c.is_ascii_lowercase() || c == '.' || c == '_'), "{}", r.id);
        assert!(r.trigger.len() > 20 && !r.source.is_empty(), "{} lacks a trigger or source", r.id);
    }
}

#[test]
fn each_family_names_its_rules_alike() {
    for rules in FAMILIES.iter().map(|(rules, _)| *rules).chain([super::bench::RULES]) {
        let family = rules[0].id.split('.').next().unwrap();
        for r in rules {
            assert!(r.id.starts_with(&format!("{family}.")), "{} is listed with the {family} rules", r.id);
            assert!(r.trigger.ends_with('.'), "{}: a trigger is one sentence", r.id);
        }
    }
}

mod never_panics {
    use proptest::prelude::*;

    use crate::compat::Kb;
    use crate::parse::paste::read_pasted;

    /// Lines that look like the formats `diagnose` reads, to be shuffled and cut.
    const PIECES: &[&str] = &[
        "PyTorch version: 2.5.1+cu124",
        "CUDA used to build PyTorch: 12.4",
        "Nvidia driver version: 470.82.01",
        "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090",
        "| NVIDIA-SMI 535.86.05              Driver Version: 535.86.05    CUDA Version: 12.2     |",
        "Cuda compilation tools, release 12.4, V12.4.131",
        "torch==2.9.0+cu130",
        "jax-cuda13-plugin==0.7.2",
        "cupy-cuda12x 13.3.0",
        "RuntimeError: The NVIDIA driver on your system is too old (found version 12080).",
        "CUDA error: no kernel image is available for execution on the device",
        "{\"schema_version\": 1, \"snapshot\": {",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
            crate::test_util::bounded(crate::test_util::CASE_LIMIT, move || {
                let kb = Kb::get().unwrap();
                if let Ok(s) = read_pasted(&text, kb) {
                    let _ = super::diagnose(&s, kb);
                }
            });
        }

        #[test]
        fn shuffled_and_cut_pastes_never_panic(picks in proptest::collection::vec((0..PIECES.len(), 0usize..120), 0..12)) {
            let kb = Kb::get().unwrap();
            let text: String = picks
                .iter()
                .map(|(i, cut)| {
                    let p = PIECES[*i];
                    let end = (*cut).min(p.len());
                    let end = (0..=end).rev().find(|e| p.is_char_boundary(*e)).unwrap_or(0);
                    format!("{}\n", &p[..end])
                })
                .collect();
            let findings = crate::test_util::bounded(crate::test_util::CASE_LIMIT, move || {
                read_pasted(&text, kb).map(|s| super::diagnose(&s, kb)).unwrap_or_default()
            });
            // Every finding is fully formed.
            for f in findings {
                prop_assert!(!f.id.is_empty() && !f.summary.is_empty());
            }
        }
    }
}
