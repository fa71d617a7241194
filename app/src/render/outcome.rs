//! What an applied plan leaves, as text: the files of the environment's packages checked against
//! their `RECORD`, and whether the findings the plan answers are gone, which is said only where
//! the plan ran to its end and left every package's files whole (a failed run that removed a
//! library also takes away the finding about it).

use gpu_doctor_installers::apply::{FilesState, Outcome, StepStatus};

use super::text::clean;

/// Whether every step gpu-doctor runs ran to its end: done, left to the person, or a check that
/// could not prove GPU use; not a failed, cancelled or unreached one.
pub fn completed(outcome: &Outcome) -> bool {
    outcome.steps.iter().all(|s| matches!(s, StepStatus::Done | StepStatus::LeftToYou | StepStatus::Unproven { .. }))
}

/// Whether the files of a package that was whole before the run are missing or changed now.
pub fn files_broken(outcome: &Outcome) -> bool {
    outcome.files.as_ref().is_some_and(FilesState::is_broken)
}

/// The files of the environment's packages after the run, one paragraph; `None` where they were
/// not checked (no existing environment).
pub fn files(outcome: &Outcome) -> Option<String> {
    outcome.files.as_ref().map(|files| clean(&files.describe()))
}

/// What the check after the run says of the findings `answers` the plan answers, `still` of them
/// found again; `None` for a plan that answers none.
pub fn answers(answers: &[String], still: &[String], outcome: &Outcome) -> Option<String> {
    if answers.is_empty() {
        return None;
    }
    let joined = answers.join(", ");
    Some(if !still.is_empty() {
        format!("Checked again: still found: {}.", still.join(", "))
    } else if !completed(outcome) {
        format!(
            "Checked again: the finding(s) it answers ({joined}) are not found now, but the plan did not run to its \
             end, so that is no fix: a run that stops halfway can remove what the finding was about. Undo it, or run \
             the plan again."
        )
    } else if files_broken(outcome) {
        format!(
            "Checked again: the finding(s) it answers ({joined}) are not found now, but files of packages that were \
             whole before are missing or changed (above), so that is no fix."
        )
    } else {
        format!("Checked again: the finding(s) it answers are gone ({joined}).")
    })
}

/// The state a failed cuDNN fix can leave: two files of `nvidia-cudnn-cu12` gone (tests of the
/// summaries that read it).
#[cfg(test)]
pub(crate) fn cudnn_missing() -> FilesState {
    FilesState::Broken {
        broken: vec![gpu_doctor_installers::apply::BrokenDist {
            name: "nvidia-cudnn-cu12".into(),
            version: "9.1.0.70".into(),
            missing: 2,
            changed: 0,
            examples: vec!["nvidia/cudnn/lib/libcudnn.so.9".into()],
            shared_with: Vec::new(),
        }],
        repaired: Vec::new(),
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn outcome(steps: Vec<StepStatus>, files: Option<FilesState>) -> Outcome {
        Outcome { steps, files, ..Outcome::default() }
    }

    /// Issue 29: a failed offline cuDNN fix left no cuDNN and its summary said the finding was gone.
    /// A finding not found again is "gone" only after a run that ended and left every file whole.
    #[test]
    fn a_finding_is_gone_only_after_a_run_that_ended_whole() {
        let finding = ["wheels.duplicate_cudnn".to_owned()];
        let failed = StepStatus::Failed { reason: "pip: no such wheel".into() };
        let whole = FilesState::Whole { dists: 3, files: 9, repaired: Vec::new() };
        let broken = cudnn_missing();
        let said = |o: &Outcome| answers(&finding, &[], o).unwrap();
        let gone = "are gone (wheels.duplicate_cudnn).";
        assert!(said(&outcome(vec![StepStatus::Done], Some(whole.clone()))).ends_with(gone));
        assert!(
            said(&outcome(vec![StepStatus::Done, StepStatus::Unproven { summary: "no GPU".into() }], None))
                .ends_with(gone)
        );
        for not_done in [
            outcome(vec![StepStatus::Done, failed.clone(), StepStatus::NotRun], Some(whole)),
            outcome(vec![StepStatus::Cancelled, StepStatus::NotRun], None),
        ] {
            let text = said(&not_done);
            assert!(!text.contains("gone") && text.contains("did not run to its end, so that is no fix"), "{text}");
        }
        let text = said(&outcome(vec![StepStatus::Done], Some(broken.clone())));
        assert!(!text.contains("gone") && text.contains("missing or changed (above), so that is no fix"), "{text}");
        assert_eq!(
            answers(&finding, &finding, &outcome(vec![failed], None)).unwrap(),
            "Checked again: still found: wheels.duplicate_cudnn."
        );
        assert_eq!(answers(&[], &[], &outcome(vec![], None)), None);
        let text = files(&outcome(vec![StepStatus::Done], Some(broken))).unwrap();
        assert!(
            text.contains(
                "nvidia-cudnn-cu12==9.1.0.70: 2 file(s) missing, 0 changed (e.g. nvidia/cudnn/lib/libcudnn.so.9)"
            ),
            "{text}"
        );
    }
}
