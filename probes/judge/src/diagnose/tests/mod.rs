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
