//! `mge tune`'s search: the baseline, each option alone against it, then the
//! winners combined, fastest first, until the budget is spent. Each candidate
//! runs in its own supervised process (`trial`), so a crash or a hang costs
//! only that candidate; one whose outputs differ from the baseline's is
//! rejected, however fast.

pub mod candidate;
pub mod trial;

use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crate::compare::Rules;
use crate::options::EngineOption;
use candidate::Candidate;
use trial::{compare_outputs, Status, Trial, Trials};

/// A candidate must be at least this much faster to count as a win: the
/// machines are noisy.
const MIN_GAIN: f64 = 1.03;

/// Seconds of timed runs each candidate gets (the iteration count follows from the baseline).
const SECONDS_PER_TRIAL: f64 = 1.5;

/// A candidate may take this many times what the baseline's process took
/// (start, load, warm-up and timed runs), and at least `TRIAL_FLOOR`: one that
/// hangs costs that, never the rest of the budget.
const TRIAL_FACTOR: f64 = 10.0;
const TRIAL_FLOOR: Duration = Duration::from_secs(20);

/// Fast-run and the global layout transform profile kernels while the model
/// loads, which the baseline's time does not show: they may take this many of
/// the baseline's forward runs more (ResNet-18's fast-run profiling took about
/// 1500 of them here).
const PROFILING_RUNS: f64 = 4000.0;

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
    /// How a candidate's outputs are held against the baseline's.
    pub rules: Rules,
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
    singles: Vec<EngineOption>,
    options: &TuneOptions,
    watcher: &mut dyn TuneWatcher,
) -> Result<Tuning> {
    let budget = Budget {
        end: Instant::now() + options.budget,
    };
    // A short first run to learn how long one forward takes.
    let baseline = Candidate::default();
    watcher.trying(&baseline);
    let calibration = trials.run(&baseline, budget.end)?;
    let Some(calibrated_ms) = calibration.median_ms else {
        bail!(
            "the baseline does not run, so there is nothing to compare with: {}",
            calibration.reason.unwrap_or_else(|| Budget::ran_out(calibration.took))
        );
    };
    trials.iterations = ((SECONDS_PER_TRIAL * 1e3 / calibrated_ms.max(1e-3)).ceil() as u64).clamp(5, 1000);
    let measured = trials.run(&baseline, budget.end)?;
    let (Some(baseline_ms), Some(baseline_outputs)) = (measured.median_ms, measured.outputs.clone()) else {
        bail!(
            "the baseline failed on its second run: {}",
            measured.reason.unwrap_or_else(|| Budget::ran_out(measured.took))
        );
    };
    let allowance = Allowance {
        baseline: measured.took,
        baseline_ms,
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
        if Instant::now() >= budget.end {
            tuning.untried.push(candidate);
            return Ok(None);
        }
        watcher.trying(&candidate);
        let deadline = budget.end.min(Instant::now() + allowance.of(&candidate));
        let mut trial = trials.run(&candidate, deadline)?;
        if trial.status == Status::TimedOut {
            trial.reason = Some(match deadline == budget.end {
                true => Budget::ran_out(trial.took),
                false => allowance.timed_out(&candidate),
            });
        }
        let row = judge(candidate, trial, &baseline_outputs, &options.rules);
        let median = row.measured();
        let best_ms = tuning.best_row().measured().unwrap_or(baseline_ms);
        tuning.rows.push(row);
        if median.is_some_and(|ms| ms * MIN_GAIN < best_ms) {
            tuning.best = Some(tuning.rows.len() - 1);
        }
        watcher.tried(tuning.rows.last().expect("pushed"), tuning.best_row(), baseline_ms);
        Ok(median)
    };

    let mut winners: Vec<(EngineOption, f64)> = Vec::new();
    for option in singles {
        if let Some(ms) = try_one(&mut tuning, Candidate(vec![option.clone()]))? {
            if ms * MIN_GAIN < baseline_ms {
                winners.push((option, ms));
            }
        }
    }
    // Grow the best candidate with each other winner, fastest first; keep what helps.
    winners.sort_by(|a, b| a.1.total_cmp(&b.1));
    for (option, _) in winners {
        let best = tuning.best_row().candidate.clone();
        let Some(combined) = best.with(option) else {
            continue;
        };
        try_one(&mut tuning, combined)?;
    }
    Ok(tuning)
}

/// The end of `--budget`.
struct Budget {
    end: Instant,
}

impl Budget {
    /// Why a trial the budget's end stopped was not measured.
    fn ran_out(took: Duration) -> String {
        format!("stopped after {:.1} s, when the --budget ran out", took.as_secs_f64())
    }
}

/// How long one candidate may take, from what the baseline took.
struct Allowance {
    /// The baseline's measured process, start to end.
    baseline: Duration,
    baseline_ms: f64,
}

impl Allowance {
    fn of(&self, candidate: &Candidate) -> Duration {
        let plain = self.baseline.mul_f64(TRIAL_FACTOR).max(TRIAL_FLOOR);
        match candidate.profiles_at_load() {
            true => plain + Duration::from_secs_f64(PROFILING_RUNS * self.baseline_ms / 1e3),
            false => plain,
        }
    }

    fn timed_out(&self, candidate: &Candidate) -> String {
        let mut reason = format!(
            "stopped at its deadline, {:.1} s: {TRIAL_FACTOR}x the baseline's {:.1} s (at least {} s)",
            self.of(candidate).as_secs_f64(),
            self.baseline.as_secs_f64(),
            TRIAL_FLOOR.as_secs()
        );
        if candidate.profiles_at_load() {
            reason += &format!(", plus {PROFILING_RUNS} forward runs for profiling at load");
        }
        reason
    }
}

/// The row of a finished trial: a measured one is checked against the baseline's outputs.
fn judge(candidate: Candidate, trial: Trial, baseline_outputs: &std::path::Path, rules: &Rules) -> Row {
    let mut row = Row {
        candidate,
        status: trial.status,
        median_ms: trial.median_ms,
        err: None,
        reason: trial.reason,
    };
    if let Some(outputs) = &trial.outputs {
        match compare_outputs(baseline_outputs, outputs, rules) {
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
