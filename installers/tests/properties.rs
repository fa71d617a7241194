//! Properties of applying any plan: a root step is never run, and a file is written only inside
//! the plan's environment or the log folder.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use gpu_doctor_installers::apply::{self, ApplyOptions, StepStatus};
use gpu_doctor_installers::plan::{Plan, Step, StepKind, UserAction};
use proptest::prelude::*;

/// One step of a generated plan: what it is, and where (by number) it would leave a mark.
#[derive(Debug, Clone)]
enum Kind {
    /// A root line that would create `root-N` if anything ran it.
    Root,
    Manual,
    /// `/bin/true` (or `false`): a user step that succeeds (or fails).
    Run(bool),
    /// A file inside the environment.
    WriteInside,
    /// A file beside the environment, or reached through `..`.
    WriteOutside(bool),
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Root),
        Just(Kind::Manual),
        any::<bool>().prop_map(Kind::Run),
        Just(Kind::WriteInside),
        any::<bool>().prop_map(Kind::WriteOutside),
    ]
}

fn step(kind: &Kind, n: usize, dir: &Path) -> Step {
    let write = |path: std::path::PathBuf| Step {
        kind: StepKind::User { action: UserAction::Write { path, text: "x".into() } },
        ..Step::manual("", "")
    };
    match kind {
        Kind::Root => Step::root(format!("touch '{}'", dir.join(format!("root-{n}")).display()), "t", "t", "t"),
        Kind::Manual => Step::manual("reboot", "t"),
        Kind::Run(ok) => Step::run(vec![if *ok { "/bin/true" } else { "/bin/false" }.into()], "t", "t", "t"),
        Kind::WriteInside => write(dir.join(format!("env/etc/hook-{n}"))),
        Kind::WriteOutside(false) => write(dir.join(format!("outside-{n}"))),
        Kind::WriteOutside(true) => write(dir.join(format!("env/../outside-{n}"))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_root_step_runs_and_nothing_is_written_outside(kinds in prop::collection::vec(kind(), 1..8)) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("env")).unwrap();
        let steps: Vec<Step> = kinds.iter().enumerate().map(|(n, k)| step(k, n, dir.path())).collect();
        let plan = Plan {
            id: "p".into(),
            goal: "g".into(),
            answers: Vec::new(),
            env: Some(dir.path().join("env")),
            steps,
            choice: None,
        };
        let opts = ApplyOptions { log_dir: dir.path().join("logs"), step_timeout: Duration::from_secs(60) };
        let outcome = apply::apply(&plan, &opts, &AtomicBool::new(false), &mut |_| {});
        prop_assert_eq!(outcome.steps.len(), kinds.len());
        let mut failed = false;
        for (n, (kind, status)) in kinds.iter().zip(&outcome.steps).enumerate() {
            let (root, outside) = (dir.path().join(format!("root-{n}")), dir.path().join(format!("outside-{n}")));
            prop_assert!(!root.exists() && !outside.exists(), "step {} left a mark", n);
            let expected = match kind {
                _ if failed => StepStatus::NotRun,
                Kind::Root | Kind::Manual => StepStatus::LeftToYou,
                Kind::Run(true) | Kind::WriteInside => StepStatus::Done,
                Kind::Run(false) | Kind::WriteOutside(_) => {
                    failed = true;
                    prop_assert!(matches!(status, StepStatus::Failed { .. }), "{:?}", status);
                    continue;
                }
            };
            prop_assert_eq!(status, &expected);
            if matches!(kind, Kind::WriteInside) {
                prop_assert_eq!(dir.path().join(format!("env/etc/hook-{n}")).exists(), expected == StepStatus::Done);
            }
        }
    }
}
