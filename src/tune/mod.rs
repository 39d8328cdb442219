//! `mge tune`: the fastest engine options for a model that keep its outputs.
//!
//! Each candidate runs in its own supervised process (`trial`), so a crash or
//! a hang costs only that candidate and its own deadline; one whose outputs
//! differ from the baseline's is rejected, however fast. A candidate wins the
//! search only when its median's 95% interval lies wholly below the
//! baseline's (a gain within the noise is no gain), and is the best only when
//! measured again back to back its verdict against the baseline is `faster`
//! (`runner::sequential`, as `compare` judges two runs). How the budget is
//! spent is `search`'s; a later tune of the same model and settings takes the
//! search from its `record` and measures only the confirmation anew.

pub mod candidate;
mod cost;
pub mod record;
#[cfg(test)]
pub mod scripted;
mod search;
pub mod trial;

use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::compare::Rules;
use crate::options::EngineOption;
use crate::runner::rounds::{median_of_rounds, Measure, Measured, Ratio};
use crate::runner::sequential::{RoundsNoise, Speed, Verdict, ALPHA};
use candidate::Candidate;
use record::RecordedSearch;
use trial::{Runner, TrialStatus};

/// One tried candidate.
pub struct Row {
    pub candidate: Candidate,
    pub status: TrialStatus,
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
        (self.status == TrialStatus::Ok)
            .then_some(self.measured.as_ref())
            .flatten()
    }
}

/// A candidate the search did not try, and why.
pub struct Untried {
    pub candidate: Candidate,
    pub why: Skipped,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
pub enum Skipped {
    /// The budget left, beside what was `kept` for the confirmation, was less
    /// than the candidate would take (about `needs`).
    Budget { needs: Duration, kept: Duration },
    /// From its parts, it would take about `estimate_ms`: not below the best's interval.
    CannotBeatTheBest { estimate_ms: f64 },
}

/// The fastest winners and the baseline measured again at the end, back to
/// back in rounds until each winner's verdict is decided, so that a load
/// that came and went between their first trials does not pick the best.
pub struct Confirmation {
    /// The baseline's trial in each round.
    pub baseline: Vec<Measured>,
    pub contenders: Vec<Contender>,
    /// Index into `contenders` of the one kept as the best, if any is `faster`.
    pub kept: Option<usize>,
    /// The numbers of rounds the verdicts were looked at.
    pub looked: Vec<usize>,
    /// The load other processes put on the machine during the rounds.
    pub noise: RoundsNoise,
    /// What the rounds were held on (`runner::sequential`).
    pub measure: Measure,
}

/// A winner measured again.
pub struct Contender {
    /// Index into `Tuning::rows`.
    pub row: usize,
    /// Its trial in each round, beside the baseline's.
    pub rounds: Vec<Measured>,
    /// Its time over the baseline's, round by round, and what that says.
    pub verdict: Verdict,
}

impl Confirmation {
    /// The median of the baseline's rounds.
    pub fn baseline_ms(&self) -> f64 {
        median_of_rounds(&self.baseline, self.measure)
    }
}

impl Contender {
    /// Its verdict against the baseline is `faster` (and its interval narrow enough to say by how much).
    pub fn held(&self) -> bool {
        self.verdict.speed == Speed::Faster
    }

    /// The median of its rounds: what it gave back to back with the baseline.
    pub fn median_ms(&self) -> f64 {
        median_of_rounds(&self.rounds, self.verdict.measure)
    }

    /// Its speed-up over the baseline back to back: its verdict's ratio
    /// (its time over the baseline's in the same round, paired, so that a
    /// load that comes and goes between rounds cancels out) turned over, with
    /// its interval, whose confidence is 95% over every look where the
    /// rounds gave one, the coverage of the ratios' range otherwise.
    pub fn speedup(&self) -> Ratio {
        let ratio = self.verdict.ratio;
        let (interval, confidence) = match self.verdict.interval {
            Some(interval) => (Some(interval), 1.0 - ALPHA),
            None => (ratio.interval, ratio.confidence),
        };
        Ratio {
            estimate: 1.0 / ratio.estimate,
            interval: interval.map(|[low, high]| [1.0 / high, 1.0 / low]),
            confidence,
        }
    }
}

/// What `mge tune` found, as its last line says it: the best and its speed-up,
/// back to back with the baseline.
pub struct Headline<'t> {
    /// The best candidate's row, or the baseline's.
    pub row: &'t Row,
    /// The best's median and the baseline's, measured as `source` says.
    pub best_ms: f64,
    pub baseline_ms: f64,
    /// `None` for the baseline kept.
    pub speedup: Option<Ratio>,
    pub source: HeadlineSource,
}

/// Where the headline's figures come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeadlineSource {
    /// The confirmation's rounds: a contender was `faster`, and is the best.
    BackToBack,
    /// The confirmation's rounds, where no contender was decidedly faster: the baseline is kept.
    NoneFaster,
    /// The search's baseline trial: no candidate beat it beyond the noise.
    NoWinner,
    /// The search's baseline trial: the budget left no time to measure the
    /// winners again, so none is confirmed and the baseline is kept.
    Unconfirmed,
}

impl Headline<'_> {
    /// The speed-up's point figure (1 for the baseline).
    pub fn ratio(&self) -> f64 {
        self.speedup
            .map_or(self.baseline_ms / self.best_ms, |speedup| speedup.estimate)
    }
}

/// The row at `best` in `rows`, or the baseline when there is none.
fn best_of<'r>(best: Option<usize>, baseline: &'r Row, rows: &'r [Row]) -> &'r Row {
    best.map_or(baseline, |index| &rows[index])
}

/// The median of a safe row's one trial in the search.
fn searched_ms(row: &Row) -> f64 {
    row.safe().expect("the best ran with the baseline's outputs").median_ms
}

/// Told about each candidate as it is tried.
pub trait TuneWatcher {
    fn trying(&mut self, candidate: &Candidate);
    fn tried(&mut self, row: &Row, best: &Row, baseline_ms: f64);
}

pub struct TuneOptions {
    pub budget: Duration,
    /// The options the user gave, which the baseline and every candidate keep.
    pub given: Vec<EngineOption>,
    /// How a candidate's outputs are held against the baseline's.
    pub rules: Rules,
}

/// Where the search's figures come from.
pub enum Searched {
    /// This tune measured them, in `took`; `record_unused` says why the
    /// record of an earlier search was not used, where there was one.
    Now {
        took: Duration,
        record_unused: Option<String>,
    },
    /// The record of a search that ended `age` ago and took `took`: only
    /// the baseline and the confirmation were measured now.
    Recorded { age: Duration, took: Duration },
}

pub struct Tuning {
    pub baseline: Row,
    /// Every candidate after the baseline, in the order tried.
    pub rows: Vec<Row>,
    /// Index into `rows` of the fastest candidate confirmed `faster` than the
    /// baseline, or `None` when none was (the baseline is kept).
    pub best: Option<usize>,
    /// Index into `rows` of the search's fastest winner, before the confirmation.
    pub search_best: Option<usize>,
    pub untried: Vec<Untried>,
    pub searched: Searched,
    pub confirmation: Option<Confirmation>,
    /// The budget, and what the tune used of it.
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

    /// The best and its speed-up: the kept contender's rounds against the
    /// baseline's, or the baseline where none was confirmed `faster`.
    pub fn headline(&self) -> Headline<'_> {
        let Some(again) = &self.confirmation else {
            return Headline {
                row: &self.baseline,
                best_ms: searched_ms(&self.baseline),
                baseline_ms: searched_ms(&self.baseline),
                speedup: None,
                source: match self.search_best {
                    Some(_) => HeadlineSource::Unconfirmed,
                    None => HeadlineSource::NoWinner,
                },
            };
        };
        let baseline_ms = again.baseline_ms();
        match again.kept.map(|at| &again.contenders[at]) {
            Some(kept) => Headline {
                row: &self.rows[kept.row],
                best_ms: kept.median_ms(),
                baseline_ms,
                speedup: Some(kept.speedup()),
                source: HeadlineSource::BackToBack,
            },
            None => Headline {
                row: &self.baseline,
                best_ms: baseline_ms,
                baseline_ms,
                speedup: None,
                source: HeadlineSource::NoneFaster,
            },
        }
    }
}

/// Runs the search over `singles` (the options to try, each alone first),
/// or takes it from `recorded` where that record is usable.
pub fn tune(
    trials: &mut dyn Runner,
    singles: Vec<EngineOption>,
    recorded: Option<RecordedSearch>,
    options: &TuneOptions,
    watcher: &mut dyn TuneWatcher,
) -> Result<Tuning> {
    search::Search::start(trials, options, watcher)?.run(singles, recorded)
}
