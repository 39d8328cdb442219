//! One candidate measured: `mge run` with its options in a supervised child,
//! its median time read from the JSON report and its outputs kept for comparison.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;

use super::candidate::Candidate;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, worst, Rules, TensorStatus};
use crate::mge_command::MgeCommand;
use crate::options::EngineOption;
use crate::runner::rounds::{timed_child, Measured, TimedRun};
use crate::supervise::parent::How;
use crate::text::number;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
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

/// A trial's timed runs stop after this long (twice the time a trial is sized
/// for, `search::SECONDS_PER_TRIAL`) whatever their count: on a busy
/// machine, stalls the few calibration runs did not see can make the runs a
/// trial was sized for take ten times longer.
const TIMED_RUNS_LIMIT: Duration = Duration::from_secs(3);

/// What a trial gave.
pub struct Trial {
    pub status: TrialStatus,
    /// Its timed runs, when it ran.
    pub measured: Option<Measured>,
    /// Why it was not measured (none for a timed-out one: its deadline's owner says why).
    pub reason: Option<String>,
    /// Where its outputs were written (`NAME.npy` each), when it ran.
    pub outputs: Option<PathBuf>,
    /// Its process's whole time, start to end.
    pub took: Duration,
}

/// What the search needs of its trials: a clock, and a candidate measured by a deadline.
pub trait Runner {
    fn now(&self) -> Instant;
    /// Measures `candidate` over `runs` timed runs, stopping it at `deadline`.
    fn run(&mut self, candidate: &Candidate, runs: u64, deadline: Instant) -> Result<Trial>;
    /// Does the fast-run cache hold anything?
    fn fast_run_cached(&self) -> bool;
}

/// Trials as processes: each candidate a supervised `mge run`.
pub struct Trials {
    /// `mge run MODEL` with the user's feeds and fixed engine options.
    pub baseline: MgeCommand,
    pub warmup: usize,
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
}

impl Runner for Trials {
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// An empty cache is 4 bytes.
    fn fast_run_cached(&self) -> bool {
        std::fs::metadata(self.cache_path()).is_ok_and(|metadata| metadata.len() > 4)
    }

    fn run(&mut self, candidate: &Candidate, runs: u64, deadline: Instant) -> Result<Trial> {
        let started = Instant::now();
        self.count += 1;
        let outputs = self.scratch.join(format!("trial-{}", self.count));
        let mut command = self.baseline.clone().engine(&candidate.0);
        if candidate.has(&EngineOption::FastRun) && self.fast_run_cache.is_none() {
            command = command.engine(&[EngineOption::FastRunCache(self.cache_path())]);
        }
        let command = command.measured(self.warmup, runs, TIMED_RUNS_LIMIT).outputs(&outputs);
        let unmeasured = |status, reason| Trial {
            status,
            measured: None,
            reason,
            outputs: None,
            took: started.elapsed(),
        };
        Ok(match timed_child(&command, Some((deadline, deadline - started)))? {
            TimedRun::Measured(measured) => Trial {
                status: TrialStatus::Ok,
                measured: Some(measured),
                reason: None,
                outputs: Some(outputs),
                took: started.elapsed(),
            },
            TimedRun::Failed(reason) => unmeasured(TrialStatus::Failed, Some(reason)),
            TimedRun::Died(failure) => match failure.how {
                How::TimedOut(_) => unmeasured(TrialStatus::TimedOut, None),
                _ => {
                    let reason = failure.last_words.clone().unwrap_or_else(|| failure.one_line());
                    unmeasured(TrialStatus::Crashed, Some(reason))
                }
            },
        })
    }
}

/// A candidate's outputs against the baseline's (`NAME.npy` each, by the one
/// comparison of `mge compare`): the largest AssertEqual error (NaN where an
/// output could not be compared), and what differs beyond the `rules`, if anything.
pub fn compare_outputs(baseline: &Path, candidate: &Path, rules: &Rules) -> Result<(f64, Option<String>)> {
    let rows = compare_sides(&Side::open(baseline)?, &Side::open(candidate)?, rules)?;
    let err = rows.iter().map(|row| row.err.unwrap_or(f64::NAN)).fold(0.0, worst);
    let difference = rows.iter().find(|row| row.status.failed()).map(|row| {
        let what = match row.status {
            TensorStatus::ShapeMismatch => "has another shape".to_string(),
            TensorStatus::DtypeMismatch => "has another dtype".to_string(),
            TensorStatus::OnlyInA => "is missing".to_string(),
            TensorStatus::OnlyInB => "is new".to_string(),
            _ => match row.err {
                Some(err) => format!("differs: err {}, beyond {}", number(err), rules.describe()),
                None => "differs: NaN".to_string(),
            },
        };
        format!("output {} {what}", row.name)
    });
    Ok((err, difference))
}
