//! The help texts and the options, as people see them.

#![allow(clippy::unwrap_used)]

use clap::{CommandFactory, Parser};

use super::*;

/// Every command's long help at `width` columns.
fn helps(width: usize) -> Vec<(String, String)> {
    let mut cmd = Cli::command().term_width(width);
    cmd.build();
    let mut out = vec![("gpu-doctor".to_owned(), cmd.render_long_help().to_string())];
    for sub in cmd.get_subcommands_mut() {
        let name = sub.get_name().to_owned();
        out.push((name, sub.clone().term_width(width).render_long_help().to_string()));
    }
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// A line break in running text that the width did not call for: the next line of the same
/// paragraph would have fitted its first word on this one. Running text starts at the margin;
/// indented lines (examples, the list of tests) are broken by hand and must fit 80 columns as
/// they are.
#[test]
fn help_text_has_no_stray_line_breaks() {
    for width in [80, 100, 120] {
        for (name, help) in helps(width) {
            let lines: Vec<&str> = help.lines().collect();
            for pair in lines.windows(2) {
                let (this, next) = (pair[0].trim_end(), pair[1].trim_end());
                let prose = |l: &str| !l.is_empty() && indent(l) == 0 && !l.contains("  ") && !l.ends_with(':');
                if !prose(this) || !prose(next) {
                    continue;
                }
                let word = next.split_whitespace().next().unwrap_or_default();
                let room = this.chars().count() + 1 + word.chars().count() > width;
                assert!(room, "`{name} --help` at {width} columns breaks {this:?} before {word:?}");
            }
        }
    }
    let helps = helps(80);
    for text in [AFTER_HELP, EXIT_HELP, crate::bench::AFTER_HELP, crate::certify::AFTER_HELP] {
        for line in text.lines().filter(|l| indent(l) > 0) {
            assert!(line.chars().count() <= 80, "{line:?} is wider than 80 columns");
            assert!(helps.iter().any(|(_, h)| h.lines().any(|l| l == line)), "{line:?} was wrapped at 80 columns");
        }
    }
}

#[test]
fn bench_help_offers_only_what_bench_accepts() {
    for (name, help) in helps(100) {
        let offers = help.contains("--replay <DIR>");
        match name.as_str() {
            "gpu-doctor" | "check" | "report" => assert!(offers, "{name} takes --replay"),
            "bench" | "diagnose" => assert!(!offers, "`{name} --help` offers --replay:\n{help}"),
            _ => {}
        }
    }
    assert!(Cli::try_parse_from(["gpu-doctor", "bench", "--replay", "dir"]).is_err());
    // --replay before or after the command that reads it.
    for args in [&["gpu-doctor", "--replay", "dir", "check"][..], &["gpu-doctor", "check", "--replay", "dir"]] {
        assert_eq!(Cli::try_parse_from(args).unwrap().replay_dir(), Some(PathBuf::from("dir")).as_ref(), "{args:?}");
    }
    let report = Cli::try_parse_from(["gpu-doctor", "report", "--replay", "dir"]).unwrap();
    assert_eq!(report.replay_dir(), Some(&PathBuf::from("dir")));
}

#[test]
fn the_window_takes_python_and_deep() {
    let cli = Cli::try_parse_from(["gpu-doctor", "--python", "/opt/py/bin/python3", "--deep"]).unwrap();
    let probe = cli.window_probe();
    assert!(probe.deep);
    assert_eq!(probe.pythons, [PathBuf::from("/opt/py/bin/python3")]);
    // The commands keep their own.
    let cli = Cli::try_parse_from(["gpu-doctor", "check", "--python", "/p", "--deep"]).unwrap();
    let Some(Command::Check(args)) = &cli.command else { panic!("{cli:?}") };
    assert!(args.probe.deep && args.probe.pythons == [PathBuf::from("/p")]);
}

/// The help texts word the exit codes; the numbers come from `exit.rs`, so they must say the same.
#[test]
fn help_texts_name_the_exit_codes_of_exit_rs() {
    use crate::exit;
    let words = [
        (EXIT_HELP, exit::OK, "no error-level finding"),
        (EXIT_HELP, exit::FINDINGS, "at least one error-level finding"),
        (EXIT_HELP, exit::USAGE, "the command line was wrong"),
        (EXIT_HELP, exit::INPUT, "the input could not be read"),
        (EXIT_HELP, exit::INTERNAL, "gpu-doctor itself failed"),
        (AFTER_HELP, exit::OK, "no error found"),
        (AFTER_HELP, exit::FINDINGS, "at least one error-level finding"),
        (AFTER_HELP, exit::USAGE, "the command line was wrong"),
        (AFTER_HELP, exit::INPUT, "the input could not be read"),
        (AFTER_HELP, exit::INTERNAL, "gpu-doctor itself failed"),
        (crate::bench::AFTER_HELP, exit::OK, "every requested test ran"),
        (crate::bench::AFTER_HELP, exit::INCOMPLETE, "some test did not run"),
        (crate::bench::AFTER_HELP, exit::USAGE, "the command line was wrong"),
        (crate::bench::AFTER_HELP, exit::INPUT, "an input could not be read"),
        (crate::bench::AFTER_HELP, exit::INTERNAL, "an internal error"),
        (crate::certify::AFTER_HELP, exit::OK, "PASS"),
        (crate::certify::AFTER_HELP, exit::FINDINGS, "FAIL"),
        (crate::certify::AFTER_HELP, exit::CERTIFY_WARNINGS, "PASS WITH WARNINGS"),
        (crate::certify::AFTER_HELP, exit::CERTIFY_INCOMPLETE, "INCOMPLETE"),
        (crate::certify::AFTER_HELP, exit::OK, "intact and this machine"),
        (crate::certify::AFTER_HELP, exit::FINDINGS, "altered"),
        (crate::certify::AFTER_HELP, exit::VERIFY_OTHER_MACHINE, "intact but another machine"),
        (crate::certify::AFTER_HELP, exit::USAGE, "the command line was wrong"),
        (crate::certify::AFTER_HELP, exit::INPUT, "an input"),
        (crate::certify::AFTER_HELP, exit::INTERNAL, "gpu-doctor itself failed"),
        (COMPARE_EXIT_HELP, exit::OK, "no error-level fleet finding"),
        (COMPARE_EXIT_HELP, exit::FINDINGS, "at least one"),
        (COMPARE_EXIT_HELP, exit::USAGE, "the command line was wrong"),
        (COMPARE_EXIT_HELP, exit::INPUT, "no report could be read"),
        (COMPARE_EXIT_HELP, exit::INTERNAL, "gpu-doctor itself failed"),
    ];
    for (text, code, what) in words {
        let said = format!("{code} {what}");
        assert!(text.replace('\n', " ").contains(&said), "the help text does not say {said:?}");
    }
}

#[test]
fn color_follows_the_option_no_color_and_the_terminal() {
    let set = Some(OsStr::new("1"));
    let empty = Some(OsStr::new(""));
    for (when, no_color, terminal, colour) in [
        (ColorWhen::Auto, None, true, true),
        (ColorWhen::Auto, None, false, false),
        (ColorWhen::Auto, set, true, false),
        // NO_COLOR counts when it is set to something (no-color.org).
        (ColorWhen::Auto, empty, true, true),
        (ColorWhen::Always, set, false, true),
        (ColorWhen::Never, None, true, false),
    ] {
        assert_eq!(when.enabled(no_color, terminal), colour, "{when:?} NO_COLOR={no_color:?} terminal={terminal}");
    }
}

#[test]
fn color_and_quiet_are_global_and_seen_before_the_parse() {
    let parse = |args: &[&str]| Cli::try_parse_from(args).unwrap();
    let cli = parse(&["gpu-doctor", "check", "--color", "never", "-q"]);
    assert_eq!((cli.color, cli.quiet), (ColorWhen::Never, true));
    let cli = parse(&["gpu-doctor", "--color=always", "--quiet", "bench", "--quick"]);
    assert_eq!((cli.color, cli.quiet), (ColorWhen::Always, true));
    assert_eq!((parse(&["gpu-doctor"]).color, parse(&["gpu-doctor"]).quiet), (ColorWhen::Auto, false));
    assert!(Cli::try_parse_from(["gpu-doctor", "--color", "sometimes"]).is_err());

    let os = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
    for (args, choice) in [
        (&["gpu-doctor", "--help"][..], clap::ColorChoice::Auto),
        (&["gpu-doctor", "--color", "never", "--help"], clap::ColorChoice::Never),
        (&["gpu-doctor", "check", "--color=always", "--nope"], clap::ColorChoice::Always),
        (&["gpu-doctor", "--color=always", "--color", "never"], clap::ColorChoice::Never),
        (&["gpu-doctor", "--color", "sometimes"], clap::ColorChoice::Auto),
        (&["gpu-doctor", "diagnose", "--from", "-", "--", "--color=never"], clap::ColorChoice::Auto),
    ] {
        assert_eq!(clap_color(&os(args)), choice, "{args:?}");
    }
}

#[test]
fn completions_and_man_pages_name_every_command() {
    let cmd = Cli::command();
    let visible: Vec<&str> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(clap::Command::get_name).collect();
    assert!(visible.contains(&"bench") && !visible.contains(&"completions"), "{visible:?}");
    for shell in <clap_complete::Shell as clap::ValueEnum>::value_variants() {
        let script = String::from_utf8(generate::completions(*shell)).unwrap();
        for name in &visible {
            assert!(script.contains(name), "the {shell} completions do not name {name}");
        }
    }
    let pages = generate::man_pages().unwrap();
    let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
    let mut wanted = vec!["gpu-doctor.1".to_owned()];
    wanted.extend(visible.iter().map(|c| format!("gpu-doctor-{c}.1")));
    assert_eq!(names, wanted);
    let main = String::from_utf8(pages[0].1.clone()).unwrap().replace("\\-", "-");
    for name in &visible {
        assert!(main.contains(&format!("gpu-doctor-{name}(1)")), "gpu-doctor.1 does not point to {name}");
    }
}
