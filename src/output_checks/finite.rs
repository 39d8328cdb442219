//! Outputs that hold NaN or infinities: said on stderr whenever they appear,
//! and a failed check (exit 1) under `--check-finite`, as polygraphy's
//! `--validate` and tract's `--assert-sane-floats` make them.

use crate::exit::NonFinite;
use crate::runner::testcase::{TestcaseRun, TestcaseStatus};
use crate::settings::Global;
use crate::tensor::HostTensor;

/// Warns of each of `outputs` that holds NaN or infinities (which, how many),
/// each line after `context`. Returns what was found, in one line, when anything was.
pub fn warn_non_finite(outputs: &[(String, HostTensor)], context: &str, global: &Global) -> Option<String> {
    let found: Vec<String> = outputs
        .iter()
        .filter_map(|(name, value)| {
            let counted = value.non_finite();
            counted.any().then(|| format!("output '{name}' holds {counted}"))
        })
        .collect();
    for line in &found {
        global.warn(format!("{context}{line}"));
    }
    (!found.is_empty()).then(|| found.join("; "))
}

/// Warns of the non-finite outputs of each testcase (`label` and its index
/// before each line); under `--check-finite` such a testcase fails.
pub fn judge_testcases(runs: &mut [TestcaseRun], label: &str, check_finite: bool, global: &Global) {
    for run in runs {
        let Some(found) = warn_non_finite(&run.outputs, &format!("{label}{}: ", run.index), global) else {
            continue;
        };
        if check_finite && matches!(run.status, TestcaseStatus::Passed | TestcaseStatus::Skipped) {
            run.status = TestcaseStatus::Failed;
            run.message = Some(NonFinite(found).to_string());
            run.non_finite = true;
        }
    }
}
