//! Testcase verdicts: the lines and the document of `mge check`, and the
//! pieces `mge run` shares when it runs a container's testcases.

use std::fmt::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::junit::{JunitCase, Outcome, Suite};
use super::Report;
use crate::runner::testcase::{OutputCheck, TestcaseRun, TestcaseStatus};
use crate::text::{number, path_text, printable};

/// `mge check`'s result: as text only the closing count, since each model's
/// lines were printed as it was checked (`ModelCheck::to_text`).
#[derive(Serialize)]
pub struct CheckReport {
    pub models: Vec<ModelCheck>,
    #[serde(flatten)]
    pub tally: Tally,
    /// Plain models, which neither passed nor failed (see `ModelCheck::no_testcases`).
    pub without_testcases: usize,
}

impl CheckReport {
    pub fn new(models: Vec<ModelCheck>) -> CheckReport {
        CheckReport {
            tally: Tally::of_models(&models),
            without_testcases: models
                .iter()
                .filter(|model| model.no_testcases && model.error.is_none())
                .count(),
            models,
        }
    }
}

impl Report for CheckReport {
    fn to_text(&self) -> String {
        match self.without_testcases {
            0 => format!("{}\n", self.tally),
            plain => format!("{}, {plain} without testcases\n", self.tally),
        }
    }
}

/// Every testcase of one model, or why none could run. Also the line a
/// `check` worker process sends back.
#[derive(Serialize, Deserialize)]
pub struct ModelCheck {
    pub model: String,
    /// Set when the model could not be checked at all (counted as one failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Set when the engine took its process down or overran `--timeout` on
    /// this model: the model fails the check, where an error before the engine
    /// ran it is one of the command's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub engine_failed: bool,
    /// A plain model, which embeds no testcases: it neither passes nor fails,
    /// unless `--require-testcases` made that its `error`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_testcases: bool,
    /// Seconds to read the model and load it into the engine; absent when it did not load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_s: Option<f64>,
    pub testcases: Vec<TestcaseCheck>,
}

impl ModelCheck {
    /// A model none of whose testcases could run.
    pub fn unchecked(model: &Path, error: String) -> ModelCheck {
        ModelCheck {
            model: path_text(model),
            error: Some(error),
            engine_failed: false,
            no_testcases: false,
            load_s: None,
            testcases: Vec::new(),
        }
    }

    /// A plain model: no testcases to check, and nothing wrong with that.
    pub fn plain(model: &Path) -> ModelCheck {
        ModelCheck {
            error: None,
            no_testcases: true,
            ..ModelCheck::unchecked(model, String::new())
        }
    }

    /// With `required` (`--require-testcases`), a plain model fails.
    pub fn require_testcases(mut self, required: bool) -> ModelCheck {
        if required && self.no_testcases && self.error.is_none() {
            self.error = Some(format!("{NO_TESTCASES} (--require-testcases)"));
        }
        self
    }

    /// A model on which the engine failed: `failure` says how.
    pub fn engine_failed(model: &Path, failure: String) -> ModelCheck {
        ModelCheck {
            engine_failed: true,
            ..ModelCheck::unchecked(model, failure)
        }
    }

    /// Did the engine take its process down or overrun `--timeout` on this
    /// model, or a testcase fail its outputs? What `--repro` reproduces.
    pub fn failed_in_the_run(&self) -> bool {
        self.engine_failed
            || self
                .testcases
                .iter()
                .any(|testcase| testcase.status == TestcaseStatus::Failed)
    }

    /// What failed, in one line: the engine's failure, or each failed testcase's message.
    pub fn failure_line(&self) -> String {
        if let Some(error) = &self.error {
            return error.clone();
        }
        let failed: Vec<String> = self
            .testcases
            .iter()
            .filter(|testcase| testcase.status == TestcaseStatus::Failed)
            .map(|testcase| match &testcase.message {
                Some(message) => format!("testcase {} failed: {message}", testcase.index),
                None => format!("testcase {} failed", testcase.index),
            })
            .collect();
        failed.join("; ")
    }

    /// Did the engine get to run this model (whatever came of it)?
    pub fn reached_the_engine(&self) -> bool {
        self.engine_failed
            || self
                .testcases
                .iter()
                .any(|testcase| testcase.status != TestcaseStatus::Error)
    }
}

#[derive(Serialize, Deserialize)]
pub struct TestcaseCheck {
    pub index: usize,
    pub status: TestcaseStatus,
    pub outputs: Vec<OutputCheck>,
    pub message: Option<String>,
    /// Wall time of the testcase, for JUnit.
    pub time_s: f64,
    /// It failed `--check-finite`, which the report says in its message's
    /// words; a worker's answer carries it apart (`commands::check::workers`).
    #[serde(skip)]
    pub non_finite: bool,
}

impl TestcaseCheck {
    pub fn new(run: &TestcaseRun) -> TestcaseCheck {
        TestcaseCheck {
            index: run.index,
            status: run.status,
            outputs: run.checks.clone(),
            message: run.message.clone(),
            time_s: run.seconds,
            non_finite: run.non_finite,
        }
    }
}

/// The closing count. A model that could not be checked, and a testcase that
/// could not run, count as failed: neither is a pass.
#[derive(Clone, Copy, Default, Serialize)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Tally {
    pub fn add(&mut self, status: TestcaseStatus) {
        match status {
            TestcaseStatus::Passed => self.passed += 1,
            TestcaseStatus::Failed | TestcaseStatus::Error => self.failed += 1,
            TestcaseStatus::Skipped => self.skipped += 1,
        }
    }

    pub fn of_models(models: &[ModelCheck]) -> Tally {
        let mut tally = Tally::default();
        for model in models {
            if model.error.is_some() {
                tally.failed += 1;
            }
            model.testcases.iter().for_each(|testcase| tally.add(testcase.status));
        }
        tally
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)?;
        if self.skipped > 0 {
            write!(f, ", {} skipped", self.skipped)?;
        }
        Ok(())
    }
}

/// What a plain model is in `check`'s report.
const NO_TESTCASES: &str = "no testcases: a plain model, not a container dumped with input_data";

/// `passed`, `FAILED`, ... then each checked output's error against its
/// tolerance, then the message: the rest of a testcase's line.
pub fn check_summary(status: TestcaseStatus, checks: &[OutputCheck], message: Option<&str>) -> String {
    let mut text = match status {
        TestcaseStatus::Passed => "passed",
        TestcaseStatus::Failed => "FAILED",
        TestcaseStatus::Skipped => "skipped",
        TestcaseStatus::Error => "ERROR",
    }
    .to_string();
    for check in checks {
        let err = check.err.map_or("not printed".to_string(), number);
        let left_out = check
            .left_out
            .map(|left_out| format!(", {left_out}"))
            .unwrap_or_default();
        let _ = write!(
            text,
            "  '{}' err {err} (maxerr {}{left_out})",
            printable(&check.name),
            number(check.maxerr)
        );
    }
    if let Some(message) = message {
        let _ = write!(text, ": {}", printable(message));
    }
    text
}

impl ModelCheck {
    /// Its JUnit suite: a `testcase` for loading it (its time the load time;
    /// its error when it could not be checked), then one per embedded testcase.
    pub fn junit_suite(&self) -> Suite {
        let load = JunitCase {
            name: "load".to_string(),
            time_s: self.load_s.unwrap_or(0.0),
            outcome: match &self.error {
                Some(error) => Outcome::Error(error.clone()),
                None if self.no_testcases => Outcome::Skipped(NO_TESTCASES.to_string()),
                None => Outcome::Passed,
            },
        };
        let testcases = self.testcases.iter().map(|testcase| {
            let message = testcase.message.clone().unwrap_or_default();
            JunitCase {
                name: format!("testcase {}", testcase.index),
                time_s: testcase.time_s,
                outcome: match testcase.status {
                    TestcaseStatus::Passed => Outcome::Passed,
                    TestcaseStatus::Failed => Outcome::Failure(message),
                    TestcaseStatus::Error => Outcome::Error(message),
                    TestcaseStatus::Skipped => Outcome::Skipped(message),
                },
            }
        });
        Suite {
            name: self.model.clone(),
            cases: std::iter::once(load).chain(testcases).collect(),
        }
    }

    /// One line per testcase (or one for a model that could not be checked),
    /// whatever characters the model's path and names hold.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let model = printable(&self.model);
        match &self.error {
            Some(error) => {
                let _ = writeln!(out, "{model}: ERROR: {}", printable(error));
            }
            None if self.no_testcases => {
                let _ = writeln!(out, "{model}: {NO_TESTCASES}");
            }
            None => {}
        }
        for testcase in &self.testcases {
            let summary = check_summary(testcase.status, &testcase.outputs, testcase.message.as_deref());
            let _ = writeln!(out, "{model} #{}: {summary}", testcase.index);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_errors_as_failures_and_shows_skips_only_when_any() {
        let mut tally = Tally::default();
        [TestcaseStatus::Passed, TestcaseStatus::Failed, TestcaseStatus::Error]
            .into_iter()
            .for_each(|s| tally.add(s));
        assert_eq!(tally.to_string(), "1 passed, 2 failed");
        tally.add(TestcaseStatus::Skipped);
        assert_eq!(tally.to_string(), "1 passed, 2 failed, 1 skipped");
    }

    #[test]
    fn summarises_checks() {
        let checks = [
            OutputCheck {
                name: "feat".into(),
                err: Some(3.86273e-05),
                maxerr: 1e-4,
                left_out: None,
            },
            OutputCheck {
                name: "y".into(),
                err: None,
                maxerr: 0.5,
                left_out: None,
            },
        ];
        assert_eq!(
            check_summary(TestcaseStatus::Failed, &checks, Some("'feat': got 1, expected 2")),
            "FAILED  'feat' err 3.86273e-5 (maxerr 1e-4)  'y' err not printed (maxerr 0.5): 'feat': got 1, expected 2"
        );
        assert_eq!(check_summary(TestcaseStatus::Passed, &checks[..0], None), "passed");
    }

    /// A line break in a path or a name cannot make a second line of the report.
    #[test]
    fn a_model_is_one_line_per_testcase_whatever_its_names() {
        let check = ModelCheck {
            model: "m\n#0: passed.mge".into(),
            error: None,
            engine_failed: false,
            no_testcases: false,
            load_s: None,
            testcases: vec![TestcaseCheck {
                index: 0,
                status: TestcaseStatus::Failed,
                outputs: vec![OutputCheck {
                    name: "line1\nline2\x1b[0m".into(),
                    err: Some(0.5),
                    maxerr: 1e-4,
                    left_out: None,
                }],
                message: Some("got\r1".into()),
                time_s: 0.0,
                non_finite: false,
            }],
        };
        assert_eq!(
            check.to_text(),
            "m\\n#0: passed.mge #0: FAILED  'line1\\nline2\\x1b[0m' err 0.5 (maxerr 1e-4): got\\r1\n"
        );
    }
}
