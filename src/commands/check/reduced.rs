//! `check --repro DIR --reduce`: a failed model's folder also holds the
//! smallest part of its graph found to fail alike, fed the values of the
//! testcase that failed (see `commands::reduce`).

use std::path::Path;

use anyhow::Result;

use super::Reproducing;
use crate::reduce::{Failed, Reducer, NOT_CUT};
use crate::report::check::ModelCheck;
use crate::report::repro::{Folder, Reduction};
use crate::runner::testcase::TestcaseStatus;

impl Reproducing<'_> {
    /// The smaller reproducer of `check`'s failure on `model`, into its `folder`.
    pub(super) fn reduce(&self, check: &ModelCheck, model: &Path, folder: &mut Folder) -> Result<()> {
        let (failed, testcase) = match failure_of(check, &folder.staged()) {
            Ok(found) => found,
            Err(why) => {
                folder.reduced(Reduction::NotReduced(why.to_string()));
                return Ok(());
            }
        };
        let feeds = format!("feeds/{testcase}");
        let reducer = Reducer {
            model,
            feeds: &feeds,
            seed: 0,
            // A testcase runs once.
            warmup: 0,
            iterations: 1,
            check_finite: self.check_finite,
            timeout: self.timeout,
            runtime: self.runtime,
            verbose: self.global.verbose,
        };
        reducer.reduce(folder, failed)
    }
}

/// What `--reduce` looks for in a failed check, and the testcase whose
/// recorded values (`feeds/N` in the folder `staged`) show it; or why it looks for none.
fn failure_of(check: &ModelCheck, staged: &Path) -> Result<(Failed, usize), &'static str> {
    if check.engine_failed {
        // Each testcase's values are recorded before it runs: the last was running.
        let recorded = std::fs::read_dir(staged.join("feeds")).into_iter().flatten().flatten();
        let last = recorded
            .filter_map(|entry| entry.file_name().to_str()?.parse::<usize>().ok())
            .max();
        return last
            .map(|testcase| (Failed::Engine, testcase))
            .ok_or("the engine failed before a testcase was fed: there is no run to cut");
    }
    check
        .testcases
        .iter()
        .find(|testcase| testcase.status == TestcaseStatus::Failed && testcase.non_finite)
        .map(|testcase| (Failed::NonFinite, testcase.index))
        .ok_or(NOT_CUT)
}
