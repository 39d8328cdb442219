//! `mge tune`'s search: the baseline, each option alone against it, then the
//! winners combined, fastest first, until the budget is spent. Each candidate
//! runs in its own supervised process (`trial`), so a crash or a hang costs
//! only that candidate; one whose outputs differ from the baseline's is
//! rejected, however fast.

pub mod setting;
pub mod trial;

use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use setting::{Candidate, Setting};
use trial::{compare_outputs, Status, Trial, Trials};

/// A candidate must be at least this much faster to count as a win: the
/// machines are noisy.
const MIN_GAIN: f64 = 1.03;

/// Seconds of timed runs each candidate gets (the iteration count follows from the baseline).
const SECONDS_PER_TRIAL: f64 = 1.5;

/// One tried candidate.
pub struct Row {
    pub candidate: Candidate,
    pub status: Status,
    pub median_ms: Option<f64>,
    /// The AssertEqual error of its outputs against the baseline's.
    pub err: Option<f64>,
    pub reason: Option<String>,
}

impl Row {
    fn measured(&self) -> Option<f64> {
        (self.status == Status::Ok).then_some(self.median_ms).flatten()
    }
}

/// Told about each candidate as it is tried.
pub trait TuneWatcher {
    fn trying(&mut self, candidate: &Candidate);
    fn tried(&mut self, row: &Row, best: &Row, baseline_ms: f64);
}

pub struct TuneOptions {
    pub budget: Duration,
    pub maxerr: f64,
}

pub struct Tuning {
    pub baseline: Row,
    /// Every candidate after the baseline, in the order tried.
    pub rows: Vec<Row>,
    /// Index into `rows` of the fastest safe candidate, or `None` when the baseline is.
    pub best: Option<usize>,
    /// Candidates left untried when the budget ran out.
    pub untried: Vec<Candidate>,
}

impl Tuning {
    pub fn best_row(&self) -> &Row {
        self.best.map_or(&self.baseline, |index| &self.rows[index])
    }
}

pub fn tune(
    trials: &mut Trials,
    singles: Vec<Setting>,
    options: &TuneOptions,
    watcher: &mut dyn TuneWatcher,
) -> Result<Tuning> {
    let started = Instant::now();
    let deadline = || Some((started + options.budget, options.budget));
    // A short first run to learn how long one forward takes.
    let baseline = Candidate::default();
    watcher.trying(&baseline);
    let calibration = trials.run(&baseline, deadline())?;
    let Some(calibrated_ms) = calibration.median_ms else {
        bail!(
            "the baseline does not run, so there is nothing to compare with: {}",
            calibration
                .reason
                .unwrap_or_else(|| format!("{:?}", calibration.status))
        );
    };
    trials.iterations = ((SECONDS_PER_TRIAL * 1e3 / calibrated_ms.max(1e-3)).ceil() as u64).clamp(5, 1000);
    let measured = trials.run(&baseline, deadline())?;
    let (Some(baseline_ms), Some(baseline_outputs)) = (measured.median_ms, measured.outputs.clone()) else {
        bail!(
            "the baseline failed on its second run: {}",
            measured.reason.unwrap_or_default()
        );
    };
    let mut tuning = Tuning {
        baseline: Row {
            candidate: baseline,
            status: Status::Ok,
            median_ms: Some(baseline_ms),
            err: Some(0.0),
            reason: None,
        },
        rows: Vec::new(),
        best: None,
        untried: Vec::new(),
    };
    watcher.tried(&tuning.baseline, &tuning.baseline, baseline_ms);

    let mut try_one = |tuning: &mut Tuning, candidate: Candidate| -> Result<Option<f64>> {
        if started.elapsed() >= options.budget {
            tuning.untried.push(candidate);
            return Ok(None);
        }
        watcher.trying(&candidate);
        let trial = trials.run(&candidate, deadline())?;
        let row = judge(candidate, trial, &baseline_outputs, options.maxerr);
        let median = row.measured();
        let best_ms = tuning.best_row().measured().unwrap_or(baseline_ms);
        tuning.rows.push(row);
        if median.is_some_and(|ms| ms * MIN_GAIN < best_ms) {
            tuning.best = Some(tuning.rows.len() - 1);
        }
        watcher.tried(tuning.rows.last().expect("pushed"), tuning.best_row(), baseline_ms);
        Ok(median)
    };

    let mut winners: Vec<(Setting, f64)> = Vec::new();
    for setting in singles {
        if let Some(ms) = try_one(&mut tuning, Candidate(vec![setting]))? {
            if ms * MIN_GAIN < baseline_ms {
                winners.push((setting, ms));
            }
        }
    }
    // Grow the best candidate with each other winner, fastest first; keep what helps.
    winners.sort_by(|a, b| a.1.total_cmp(&b.1));
    for (setting, _) in winners {
        let best = tuning.best_row().candidate.clone();
        let Some(combined) = best.with(setting) else {
            continue;
        };
        try_one(&mut tuning, combined)?;
    }
    Ok(tuning)
}

/// The row of a finished trial: a measured one is checked against the baseline's outputs.
fn judge(candidate: Candidate, trial: Trial, baseline_outputs: &std::path::Path, maxerr: f64) -> Row {
    let mut row = Row {
        candidate,
        status: trial.status,
        median_ms: trial.median_ms,
        err: None,
        reason: trial.reason,
    };
    if let Some(outputs) = &trial.outputs {
        match compare_outputs(baseline_outputs, outputs, maxerr) {
            Ok((err, difference)) => {
                row.err = Some(err);
                if let Some(difference) = difference {
                    row.status = Status::Rejected;
                    row.reason = Some(difference);
                }
            }
            Err(err) => {
                row.status = Status::Rejected;
                row.reason = Some(format!("{err:#}"));
            }
        }
    }
    row
}
