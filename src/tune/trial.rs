//! One candidate measured: `mge run` with its options in a supervised child,
//! its median time read from the JSON report and its outputs kept for comparison.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use super::setting::{Candidate, Setting};
use crate::compare::sides::Side;
use crate::compare::{compare_sides, Status as CompareStatus, Tolerance};
use crate::supervise::parent::{How, Interrupted, Muted, Next, Supervisor};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured, with the baseline's outputs.
    Ok,
    /// Measured, but its outputs differ from the baseline's beyond `--maxerr`.
    Rejected,
    /// The engine took the process down (a signal, an exit from inside).
    Crashed,
    /// It did not run: the engine refused the options or the model.
    Failed,
    /// Stopped at the deadline: the budget ran out during it.
    TimedOut,
}

/// What a trial gave.
pub struct Trial {
    pub status: Status,
    pub median_ms: Option<f64>,
    /// Why it was not measured (none for a timed-out one: its deadline's owner says why).
    pub reason: Option<String>,
    /// Where its outputs were written (`NAME.npy` each), when it ran.
    pub outputs: Option<PathBuf>,
    /// Its process's whole time, start to end.
    pub took: Duration,
}

/// What every trial shares: the command line of the baseline and a scratch folder.
pub struct Trials {
    /// Global options and `run MODEL` with the user's feeds and fixed engine options.
    pub base_args: Vec<OsString>,
    pub warmup: usize,
    pub iterations: u64,
    /// The user's own fast-run cache; otherwise one in the scratch folder, shared by all
    /// fast-run candidates so that only the first one profiles.
    pub fast_run_cache: Option<PathBuf>,
    pub scratch: PathBuf,
    pub count: usize,
}

impl Trials {
    /// The fast-run cache fast-run candidates read and update.
    pub fn cache_path(&self) -> PathBuf {
        self.fast_run_cache
            .clone()
            .unwrap_or_else(|| self.scratch.join("fast-run.cache"))
    }

    /// Runs `candidate` with `--warmup`/`--iter` of `self`; `deadline` stops it.
    pub fn run(&mut self, candidate: &Candidate, deadline: Instant) -> Result<Trial> {
        let started = Instant::now();
        self.count += 1;
        let outputs = self.scratch.join(format!("trial-{}", self.count));
        let mut args = self.base_args.clone();
        args.extend(candidate.args().into_iter().map(OsString::from));
        if candidate.has(Setting::FastRun) && self.fast_run_cache.is_none() {
            args.extend(["--fast-run-cache".into(), self.cache_path().into()]);
        }
        args.extend(
            [
                "--json".to_string(),
                "--warmup".into(),
                self.warmup.to_string(),
                "--iter".into(),
                self.iterations.to_string(),
                "--outputs".into(),
            ]
            .map(OsString::from),
        );
        args.push(outputs.clone().into());
        let mut child = Supervisor::spawn(args, false, true)?;
        let mut report = String::new();
        let ended = loop {
            // What a candidate prints is summed up in its row, not passed on.
            match child.next(Some((deadline, deadline - started)), &mut Muted) {
                Next::Reply(line) => {
                    report.push_str(&line);
                    report.push('\n');
                }
                ended => break ended,
            }
        };
        let unmeasured = |status, reason| Trial {
            status,
            median_ms: None,
            reason,
            outputs: None,
            took: started.elapsed(),
        };
        Ok(match ended {
            Next::Exited(0) => {
                let median = serde_json::from_str::<serde_json::Value>(&report)
                    .ok()
                    .and_then(|report| report["timing_ms"]["median"].as_f64())
                    .context("the run's JSON report has no timing_ms.median")?;
                Trial {
                    status: Status::Ok,
                    median_ms: Some(median),
                    reason: None,
                    outputs: Some(outputs),
                    took: started.elapsed(),
                }
            }
            Next::Exited(_) => unmeasured(Status::Failed, child.error().map(str::to_string)),
            Next::Failed(failure) => match failure.how {
                How::Interrupted(signal) => return Err(Interrupted(signal).into()),
                How::TimedOut(_) => unmeasured(Status::TimedOut, None),
                _ => {
                    let reason = failure.last_words.clone().unwrap_or_else(|| failure.one_line());
                    unmeasured(Status::Crashed, Some(reason))
                }
            },
            Next::Reply(_) => unreachable!("replies are read in the loop above"),
        })
    }
}

/// A candidate's outputs against the baseline's (`NAME.npy` each, by the one
/// comparison of `mge compare`): the largest AssertEqual error (NaN where an
/// output could not be compared), and what differs beyond `maxerr`, if anything.
pub fn compare_outputs(baseline: &Path, candidate: &Path, maxerr: f64) -> Result<(f64, Option<String>)> {
    let rows = compare_sides(
        &Side::open(baseline)?,
        &Side::open(candidate)?,
        Tolerance::AssertEqual { maxerr },
    )?;
    // NaN is worse than any error (and `max` would drop it).
    let err = rows
        .iter()
        .map(|row| row.err.unwrap_or(f64::NAN))
        .fold(0.0, |worst: f64, err| {
            if worst.is_nan() || err.is_nan() {
                f64::NAN
            } else {
                worst.max(err)
            }
        });
    let difference = rows.iter().find(|row| row.status.failed()).map(|row| {
        let what = match row.status {
            CompareStatus::ShapeMismatch => "has another shape".to_string(),
            CompareStatus::DtypeMismatch => "has another dtype".to_string(),
            CompareStatus::OnlyInA => "is missing".to_string(),
            CompareStatus::OnlyInB => "is new".to_string(),
            _ => match row.err {
                Some(err) => format!("differs: err {err:e} > --maxerr {maxerr:e}"),
                None => "differs: NaN".to_string(),
            },
        };
        format!("output {} {what}", row.name)
    });
    Ok((err, difference))
}
