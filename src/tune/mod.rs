//! `mge tune`: the fastest engine options for a model that keep its outputs.
//!
//! Each candidate runs in its own supervised process (`trial`), so a crash or
//! a hang costs only that candidate and its own deadline; one whose outputs
//! differ from the baseline's is rejected, however fast. A candidate wins only
//! when its median's 95% interval lies wholly below the baseline's: a gain
//! within the noise is no gain. How the budget is spent is `search`'s.

pub mod candidate;
mod cost;
mod search;
pub mod trial;

use std::time::Duration;

use anyhow::Result;

use crate::compare::Rules;
use crate::options::EngineOption;
use crate::runner::rounds::{median_of_rounds, Measured};
use candidate::Candidate;
use trial::{Runner, Status};

/// One tried candidate.
pub struct Row {
    pub candidate: Candidate,
    pub status: Status,
    /// Its timed runs, when it ran with the baseline's outputs.
    pub measured: Option<Measured>,
    /// The AssertEqual error of its outputs against the baseline's.
    pub err: Option<f64>,
    pub reason: Option<String>,
    /// Its process, start to end: what it cost of the budget.
    pub took: Duration,
}

impl Row {
    /// Its timed runs, if it is a safe candidate (ran, same outputs).
    pub fn safe(&self) -> Option<&Measured> {
        (self.status == Status::Ok).then_some(self.measured.as_ref()).flatten()
    }
}

/// A candidate the search did not try, and why.
pub struct Untried {
    pub candidate: Candidate,
    pub why: Skipped,
}

pub enum Skipped {
    /// The budget left was less than the candidate would take (about `needs`).
    Budget { needs: Duration },
    /// From its parts, it would take about `estimate_ms`: not below the best's interval.
    CannotBeatTheBest { estimate_ms: f64 },
}

/// The fastest winners and the baseline measured again at the end, back to
/// back in rounds, so that a load that came and went between their first
/// trials does not pick the best.
pub struct Confirmation {
    /// The baseline's trial in each round.
    pub baseline: Vec<Measured>,
    pub contenders: Vec<Contender>,
    /// Index into `contenders` of the one kept as the best, if any held.
    pub kept: Option<usize>,
}

/// A winner measured again.
pub struct Contender {
    /// Index into `Tuning::rows`.
    pub row: usize,
    /// Its trial in each round, beside the baseline's.
    pub rounds: Vec<Measured>,
    /// It beat the baseline's trial of the same round in most rounds.
    pub held: bool,
}

impl Confirmation {
    /// The median of the baseline's rounds.
    pub fn baseline_ms(&self) -> f64 {
        median_of_rounds(&self.baseline)
    }
}

impl Contender {
    /// The median of its rounds: what it gave back to back with the baseline.
    pub fn median_ms(&self) -> f64 {
        median_of_rounds(&self.rounds)
    }
}

/// The row at `best` in `rows`, or the baseline when there is none.
fn best_of<'r>(best: Option<usize>, baseline: &'r Row, rows: &'r [Row]) -> &'r Row {
    best.map_or(baseline, |index| &rows[index])
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
    /// Index into `rows` of the fastest candidate that beat the baseline, or
    /// `None` when none did (or the confirmation did not hold).
    pub best: Option<usize>,
    pub untried: Vec<Untried>,
    pub confirmation: Option<Confirmation>,
    /// The budget, and what the search used of it.
    pub budget: Duration,
    pub used: Duration,
}

impl Tuning {
    pub fn best_row(&self) -> &Row {
        best_of(self.best, &self.baseline, &self.rows)
    }

    pub fn baseline_measured(&self) -> &Measured {
        self.baseline.measured.as_ref().expect("the baseline was measured")
    }
}

/// Runs the search over `singles` (the options to try, each alone first).
pub fn tune(
    trials: &mut dyn Runner,
    singles: Vec<EngineOption>,
    options: &TuneOptions,
    watcher: &mut dyn TuneWatcher,
) -> Result<Tuning> {
    search::Search::start(trials, options, watcher)?.run(singles)
}
