//! Where `mge tune` spends its budget.
//!
//! 1. The baseline: a short run to learn how long one forward takes, then one
//!    with as many runs as fill about `SECONDS_PER_TRIAL`.
//! 2. Fast-run first, when its profiling (what it cost on this machine
//!    before, as the algorithm cache recorded it, else estimated from the
//!    baseline's forward time) leaves room for a few more trials: on CPU it
//!    is the option that usually wins, the algorithms its profiling keeps
//!    make every later candidate with it cheap, and tried last it is the one
//!    a budget starves. Otherwise it waits until the cheap options are done.
//! 3. The other options alone, likeliest winners first. Each that beats the
//!    baseline beyond the noise is combined with the best at once, and so is
//!    each that interacts with fast-run (record-comp-seq, weight preprocess,
//!    threads, layouts) while fast-run is in the best: there the parts do not
//!    tell what the whole gives.
//! 4. A combination that, estimated from its parts, cannot get below the
//!    best's interval is not tried; nor is any candidate the budget left has
//!    no time for, once the confirmation's first look is set aside (both
//!    listed, with why).
//! 5. The fastest winners (up to `CONTENDERS`) and the baseline measured again,
//!    back to back, in rounds until each one's verdict against the baseline
//!    is decided (`runner::sequential`, as compare times two runs) or the
//!    budget is spent: the best is the fastest whose verdict is `faster`,
//!    with its speed-up's interval within `PRECISION`; if none is, the
//!    baseline is kept.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use super::candidate::{interacts_with_fast_run, Candidate};
use super::cost::{budget_ran_out, Costs};
use super::record::RecordedSearch;
use super::trial::{compare_outputs, Runner, Trial, TrialStatus};
use super::{best_of, Confirmation, Contender, Row, Searched, Skipped, TuneOptions, TuneWatcher, Tuning, Untried};
use crate::options::{cpu_time_fair, EngineOption};
use crate::runner::rounds::{Lineup, Measure, Measured};
use crate::runner::sequential::{rounds_until_decided, Looks, RoundsPlan, MIN_EFFECT_PERCENT};

/// Seconds of timed runs each candidate gets (the run count follows from the
/// baseline): a trial only screens, the confirmation's rounds decide.
const SECONDS_PER_TRIAL: f64 = 1.0;

/// Seconds of timed runs of each trial of the confirmation: rounds, not runs, narrow its interval.
const SECONDS_PER_ROUND_TRIAL: f64 = 0.5;

/// The baseline's first, short run: enough to learn how long one run takes.
const CALIBRATION_RUNS: u64 = 3;

/// Winners measured again at the end, and the looks at their rounds.
const CONTENDERS: usize = 2;
const LOOKS: u32 = 3;

/// A winner's speed-up counts beyond `MIN_EFFECT_PERCENT` (compare's
/// `--min-effect` default), and its interval must lie within a factor of 1.5
/// (high/low): the headline gives the size of the gain.
const PRECISION: f64 = 1.5;

/// Runs per candidate: a 95% interval of the median needs 6 at least.
const MIN_RUNS: u64 = 10;
const MAX_RUNS: u64 = 100_000;

/// Runs per trial of the confirmation: its interval is the rounds', and a
/// round's figure is the median of a few runs.
const MIN_ROUND_RUNS: u64 = 3;

/// Fast-run goes first when, after its profiling, the budget still holds this many plain trials.
const SPARE_TRIALS_AFTER_FAST_RUN: u32 = 3;

pub struct Search<'a> {
    trials: &'a mut dyn Runner,
    /// Timed runs per candidate, from the baseline's time; and per trial of the confirmation.
    runs: u64,
    round_runs: u64,
    options: &'a TuneOptions,
    watcher: &'a mut dyn TuneWatcher,
    started: Instant,
    end: Instant,
    costs: Costs,
    baseline: Row,
    /// The baseline's outputs, that every candidate's must match.
    baseline_outputs: Option<PathBuf>,
    rows: Vec<Row>,
    best: Option<usize>,
    /// Each option tried alone, with its row.
    alone: Vec<(EngineOption, usize)>,
    untried: Vec<Untried>,
    confirmation: Option<Confirmation>,
}

impl<'a> Search<'a> {
    pub fn start(
        trials: &'a mut dyn Runner,
        options: &'a TuneOptions,
        watcher: &'a mut dyn TuneWatcher,
    ) -> Result<Search<'a>> {
        let started = trials.now();
        let end = started + options.budget;
        let baseline = Candidate::default();
        watcher.trying(&baseline);
        let calibration = trials.run(&baseline, CALIBRATION_RUNS, end)?;
        let Some(calibrated) = calibration.measured else {
            bail!(
                "the baseline does not run, so there is nothing to compare with: {}",
                why_unmeasured(&calibration)
            );
        };
        // By the mean: on a busy machine a run's stalls (the engine's worker
        // thread waiting for a core) can cost far more than its median.
        let runs_for = |seconds: f64, least: u64| {
            ((seconds * 1e3 / calibrated.mean_ms.max(1e-3)).ceil() as u64).clamp(least, MAX_RUNS)
        };
        let runs = runs_for(SECONDS_PER_TRIAL, MIN_RUNS);
        let round_runs = runs_for(SECONDS_PER_ROUND_TRIAL, MIN_ROUND_RUNS);
        let trial = trials.run(&baseline, runs, end)?;
        let Some(measured) = trial.measured else {
            bail!("the baseline failed on its second run: {}", why_unmeasured(&trial));
        };
        let baseline_outputs = trial.outputs.clone();
        let baseline = Row {
            candidate: baseline,
            status: TrialStatus::Ok,
            measured: Some(measured),
            err: Some(0.0),
            reason: None,
            took: trial.took,
        };
        watcher.tried(&baseline, &baseline, measured.median_ms);
        let round_timing = Duration::from_secs_f64(round_runs as f64 * measured.mean_ms / 1e3);
        let costs = Costs {
            baseline: trial.took,
            calibrated: trials.now().saturating_duration_since(started),
            baseline_ms: measured.median_ms,
            confirming: trial.took.saturating_sub(measured.timing) + round_timing,
            profiling: None,
        };
        Ok(Search {
            trials,
            runs,
            round_runs,
            options,
            watcher,
            started,
            end,
            costs,
            baseline,
            baseline_outputs,
            rows: Vec::new(),
            best: None,
            alone: Vec::new(),
            untried: Vec::new(),
            confirmation: None,
        })
    }

    /// Tries `singles` (fast-run where it fits, the rest in their order) and
    /// what combines with them, then confirms the best; or, where `recorded`
    /// holds a usable record of that search, confirms the record's winners.
    pub fn run(mut self, singles: Vec<EngineOption>, recorded: Option<RecordedSearch>) -> Result<Tuning> {
        let mut record_unused = None;
        if let Some(recorded) = recorded {
            match recorded.usable(self.baseline_measured()) {
                Ok(()) => return self.confirm_recorded(recorded),
                Err(why) => record_unused = Some(why),
            }
        }
        let mut fast_run = singles.contains(&EngineOption::FastRun);
        let mut queue: VecDeque<EngineOption> = singles
            .into_iter()
            .filter(|option| *option != EngineOption::FastRun)
            .collect();
        loop {
            let alone = Candidate(vec![EngineOption::FastRun]);
            let next = if fast_run && (queue.is_empty() || self.fits_with_spare(&alone)) {
                fast_run = false;
                EngineOption::FastRun
            } else {
                match queue.pop_front() {
                    Some(option) => option,
                    None => break,
                }
            };
            if let Some(index) = self.try_candidate(Candidate(vec![next.clone()]))? {
                self.alone.push((next, index));
                self.combine_after(index)?;
            }
        }
        let searched = Searched::Now {
            took: self.trials.now() - self.started,
            record_unused,
        };
        self.finish(searched)
    }

    /// The search from `recorded`: its rows in place of trials (the
    /// baseline's too, so that the table's figures are of one search). Its
    /// winners, fastest first, run once more until `CONTENDERS` of them hold
    /// the baseline's outputs now (the algorithms the cache holds may have
    /// changed since); one that fails or differs is no winner. Then the
    /// confirmation, measured now.
    fn confirm_recorded(mut self, recorded: RecordedSearch) -> Result<Tuning> {
        self.baseline = recorded.baseline;
        self.rows = recorded.rows;
        self.untried = recorded.untried;
        let mut held = 0;
        for index in self.winners() {
            if held == CONTENDERS {
                break;
            }
            let candidate = self.rows[index].candidate.clone();
            self.watcher.trying(&candidate);
            let trial = self.trial(&candidate, CALIBRATION_RUNS)?;
            let again = self.judge(candidate, trial);
            match again.status {
                TrialStatus::Ok => held += 1,
                status => {
                    let row = &mut self.rows[index];
                    row.status = status;
                    row.reason = Some(format!("run again now: {}", again.reason.unwrap_or_default()));
                }
            }
        }
        self.best = self.winners().first().copied();
        self.finish(Searched::Recorded {
            age: recorded.age,
            took: recorded.took,
        })
    }

    /// The search's best confirmed, and all of it as a `Tuning`.
    fn finish(mut self, searched: Searched) -> Result<Tuning> {
        let search_best = self.best;
        self.confirm()?;
        Ok(Tuning {
            baseline: self.baseline,
            rows: self.rows,
            best: self.best,
            search_best,
            untried: self.untried,
            searched,
            confirmation: self.confirmation,
            budget: self.options.budget,
            used: self.trials.now() - self.started,
        })
    }

    /// The rows that ran with the baseline's outputs and beat it beyond the
    /// noise, fastest first.
    fn winners(&self) -> Vec<usize> {
        let baseline = *self.baseline_measured();
        let median = |index: &usize| self.rows[*index].safe().map_or(f64::INFINITY, |row| row.median_ms);
        let mut winners: Vec<usize> = (0..self.rows.len())
            .filter(|index| self.rows[*index].safe().is_some_and(|row| row.beats(&baseline)))
            .collect();
        winners.sort_by(|a, b| median(a).total_cmp(&median(b)));
        winners
    }

    fn remaining(&self) -> Duration {
        self.end.saturating_duration_since(self.trials.now())
    }

    /// What the search leaves the confirmation: its first look's rounds of
    /// the baseline and the winners so far (one at least, `CONTENDERS` at
    /// most), and never more than half the budget the baseline left: a model
    /// whose trials are slow, or a machine others load, gets a search and
    /// fewer rounds (an undecided verdict keeps the baseline) rather than no search.
    fn kept_for_confirmation(&self) -> Duration {
        let baseline = *self.baseline_measured();
        let winners = self
            .rows
            .iter()
            .filter(|row| row.safe().is_some_and(|measured| measured.beats(&baseline)))
            .count()
            .clamp(1, CONTENDERS);
        let first_look = Looks::doubling(LOOKS, winners).at[0];
        let rounds = self.costs.confirming * (first_look * (1 + winners)) as u32;
        let after_baseline = self.end.saturating_duration_since(self.started + self.costs.calibrated);
        rounds.min(after_baseline / 2)
    }

    /// The time the search may still spend on trials.
    fn left_for_trials(&self) -> Duration {
        self.remaining().saturating_sub(self.kept_for_confirmation())
    }

    /// About how long trying `candidate` takes: with fast-run's profiling
    /// where its algorithms are not in the cache.
    fn estimate(&self, candidate: &Candidate) -> Duration {
        let profiles = candidate.has(&EngineOption::FastRun) && !self.trials.fast_run_cached(candidate);
        self.costs
            .estimate(profiles, self.trials.profiling_on_record(candidate))
    }

    fn fits_with_spare(&self, candidate: &Candidate) -> bool {
        self.estimate(candidate) + self.costs.baseline * SPARE_TRIALS_AFTER_FAST_RUN <= self.left_for_trials()
    }

    fn baseline_measured(&self) -> &Measured {
        self.baseline.measured.as_ref().expect("the baseline was measured")
    }

    fn best_row(&self) -> &Row {
        best_of(self.best, &self.baseline, &self.rows)
    }

    /// Tries `candidate` unless it was tried or the budget has no time for it;
    /// returns its row's index when it was tried.
    fn try_candidate(&mut self, candidate: Candidate) -> Result<Option<usize>> {
        if self.rows.iter().any(|row| row.candidate.same_options(&candidate)) {
            return Ok(None);
        }
        let estimate = self.estimate(&candidate);
        if estimate > self.left_for_trials() {
            self.untried.push(Untried {
                candidate,
                why: Skipped::Budget {
                    needs: estimate,
                    kept: self.kept_for_confirmation(),
                },
            });
            return Ok(None);
        }
        self.watcher.trying(&candidate);
        let profiles = candidate.has(&EngineOption::FastRun) && !self.trials.fast_run_cached(&candidate);
        let trial = self.trial(&candidate, self.runs)?;
        if let Some(profiling) = trial
            .measured
            .and_then(|measured| measured.profiling)
            .filter(|_| profiles)
        {
            // Learned once: later estimates use what profiling really took.
            self.costs.profiling = Some(profiling);
        }
        let row = self.judge(candidate, trial);
        let index = self.rows.len();
        let best_ms = self.best_row().safe().map_or(f64::INFINITY, |best| best.median_ms);
        let new_best = row
            .safe()
            .is_some_and(|measured| measured.beats(self.baseline_measured()) && measured.median_ms < best_ms);
        self.rows.push(row);
        if new_best {
            self.best = Some(index);
        }
        let baseline_ms = self.baseline_measured().median_ms;
        let best = best_of(self.best, &self.baseline, &self.rows);
        self.watcher.tried(&self.rows[index], best, baseline_ms);
        Ok(Some(index))
    }

    /// `candidate` over `runs` timed runs, stopped at its deadline or the
    /// budget's end, whichever comes first (and the reason said).
    fn trial(&mut self, candidate: &Candidate, runs: u64) -> Result<Trial> {
        let deadline = self.end.min(self.trials.now() + self.costs.allowance(candidate));
        let mut trial = self.trials.run(candidate, runs, deadline)?;
        if trial.status == TrialStatus::TimedOut {
            trial.reason = Some(match deadline == self.end {
                true => budget_ran_out(trial.took),
                false => self.costs.overran(candidate),
            });
        }
        Ok(trial)
    }

    /// A finished trial's row: a measured one is checked against the baseline's outputs.
    fn judge(&self, candidate: Candidate, trial: Trial) -> Row {
        let mut row = Row {
            candidate,
            status: trial.status,
            measured: trial.measured,
            err: None,
            reason: trial.reason,
            took: trial.took,
        };
        if let (Some(baseline), Some(outputs)) = (&self.baseline_outputs, &trial.outputs) {
            match compare_outputs(baseline, outputs, &self.options.rules) {
                Ok((err, difference)) => {
                    row.err = Some(err);
                    if let Some(difference) = difference {
                        row.status = TrialStatus::Rejected;
                        row.reason = Some(difference);
                    }
                }
                Err(err) => {
                    row.status = TrialStatus::Rejected;
                    row.reason = Some(format!("{err:#}"));
                }
            }
        }
        row
    }

    /// After an option was tried alone (row `index`): a new best alone takes
    /// in the options tried before it, fastest first; any other joins the best.
    fn combine_after(&mut self, index: usize) -> Result<()> {
        if self.rows[index].safe().is_none() {
            return Ok(());
        }
        if self.best != Some(index) {
            let option = self.rows[index].candidate.0[0].clone();
            return self.combine(option);
        }
        let mut earlier: Vec<(EngineOption, f64)> = self
            .alone
            .iter()
            .filter(|(_, tried)| *tried != index)
            .filter_map(|(option, tried)| Some((option.clone(), self.rows[*tried].safe()?.median_ms)))
            .collect();
        earlier.sort_by(|a, b| a.1.total_cmp(&b.1));
        for (option, _) in earlier {
            self.combine(option)?;
        }
        Ok(())
    }

    /// The best with `option` added (replacing what it clashes with), when
    /// that may beat the best.
    fn combine(&mut self, option: EngineOption) -> Result<()> {
        let best = self.best_row().candidate.clone();
        let combined = best.with_replacing(&option);
        if best.0.is_empty() || combined.0.len() < 2 || combined.same_options(&best) {
            return Ok(());
        }
        let Some(alone) = self.measured_alone(&option) else {
            return Ok(());
        };
        let baseline = *self.baseline_measured();
        let interacts = best.has(&EngineOption::FastRun) && interacts_with_fast_run(&option);
        if !interacts {
            if !alone.beats(&baseline) {
                return Ok(());
            }
            let best = *self.best_row().safe().expect("the best was measured");
            let estimate_ms = best.median_ms * alone.median_ms / baseline.median_ms;
            if estimate_ms >= best.interval_ms.map_or(best.median_ms, |[low, _]| low) {
                self.untried.push(Untried {
                    candidate: combined,
                    why: Skipped::CannotBeatTheBest { estimate_ms },
                });
                return Ok(());
            }
        }
        self.try_candidate(combined)?;
        Ok(())
    }

    fn measured_alone(&self, option: &EngineOption) -> Option<Measured> {
        self.alone
            .iter()
            .find(|(tried, _)| tried == option)
            .and_then(|(_, index)| self.rows[*index].safe().copied())
    }

    /// Measures the fastest winners and the baseline again, back to back,
    /// in rounds until each winner's verdict is decided or the budget is
    /// spent, and keeps as the best the fastest whose verdict is `faster`.
    fn confirm(&mut self) -> Result<()> {
        let mut winners = self.winners();
        if winners.is_empty() {
            return Ok(());
        }
        winners.truncate(CONTENDERS);
        let lineup: Vec<Candidate> = std::iter::once(Candidate::default())
            .chain(winners.iter().map(|index| self.rows[*index].candidate.clone()))
            .collect();
        let plan = RoundsPlan {
            looks: Looks::doubling(LOOKS, winners.len()),
            min_effect_percent: MIN_EFFECT_PERCENT,
            precision: Some(PRECISION),
            budget: None,
            budget_flag: "--budget",
            pairs: (1..lineup.len()).map(|at| (0, at)).collect(),
            measure: Measure::before_rounds(
                lineup.iter().all(|candidate| {
                    let given = &self.options.given;
                    cpu_time_fair(&[given.as_slice(), &candidate.0].concat(), given)
                }),
                || self.trials.machine_loaded(),
            ),
        };
        let round_cost = self.costs.confirming * lineup.len() as u32;
        let mut confirming = Confirming {
            search: self,
            lineup: &lineup,
            round_cost,
        };
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let judged = rounds_until_decided(&mut confirming, &plan, cores, |_| {})?;
        self.best = None;
        if judged.rounds.is_empty() {
            return Ok(());
        }
        let contenders: Vec<Contender> = winners
            .iter()
            .zip(judged.verdicts)
            .enumerate()
            .map(|(at, (row, verdict))| Contender {
                row: *row,
                rounds: judged.rounds.iter().map(|round| round[at + 1]).collect(),
                verdict,
            })
            .collect();
        let kept = (0..contenders.len())
            .filter(|at| contenders[*at].held())
            .min_by(|a, b| contenders[*a].median_ms().total_cmp(&contenders[*b].median_ms()));
        self.best = kept.map(|at| contenders[at].row);
        self.confirmation = Some(Confirmation {
            baseline: judged.rounds.iter().map(|round| round[0]).collect(),
            contenders,
            kept,
            looked: judged.looked,
            noise: judged.noise,
            measure: judged.measure,
        });
        Ok(())
    }
}

/// The lineup of the confirmation: the baseline and the winners, each a
/// trial, rounds only while the budget has room for a whole one.
struct Confirming<'s, 'a> {
    search: &'s mut Search<'a>,
    lineup: &'s [Candidate],
    round_cost: Duration,
}

impl Lineup for Confirming<'_, '_> {
    fn contenders(&self) -> usize {
        self.lineup.len()
    }

    fn now(&self) -> Instant {
        self.search.trials.now()
    }

    fn room_for_a_round(&mut self) -> bool {
        self.round_cost <= self.search.remaining()
    }

    fn hold_on(&mut self, measure: Measure) {
        self.search.trials.hold_on(measure);
    }

    fn measure(&mut self, at: usize) -> Result<Option<Measured>> {
        let search = &mut *self.search;
        let candidate = &self.lineup[at];
        search.watcher.trying(candidate);
        let deadline = search.end.min(search.trials.now() + search.costs.allowance(candidate));
        Ok(search.trials.run(candidate, search.round_runs, deadline)?.measured)
    }
}

/// Why a trial has no measurement: its reason, or the budget's end.
fn why_unmeasured(trial: &Trial) -> String {
    trial.reason.clone().unwrap_or_else(|| budget_ran_out(trial.took))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::sequential::Speed;
    use crate::tune::cost::OnRecord;
    use crate::tune::scripted::{record_of, search, search_from, Outcome, Scripted};

    /// ResNet-18 with 2 threads on an AMD EPYC with AVX-512, by hand:
    /// 63.3 ms plain, 44.0 with fast-run, 33.3 with fast-run and
    /// --record-comp-seq 2; the oneDNN layouts crash. The rest are guesses.
    fn resnet_on_amd(options: &[String], _: usize) -> Outcome {
        let has = |name: &str| options.iter().any(|option| option == name);
        if has("--layout-transform") || has("nchw88") {
            return Outcome::Crashes;
        }
        if has("nchw44") {
            return Outcome::Runs(if has("--fast-run") { 50.0 } else { 68.0 });
        }
        let mut ms = 63.3;
        if has("--fast-run") {
            ms = 44.0;
        }
        if has("--record-comp-seq") {
            ms *= if has("--fast-run") { 33.3 / 44.0 } else { 0.95 };
        }
        if has("--weight-preprocess") {
            ms *= 0.99;
        }
        if has("--graph-opt-level") {
            ms *= 1.3;
        }
        Outcome::Runs(ms)
    }

    fn speedup(tuning: &Tuning) -> f64 {
        tuning.baseline_measured().median_ms / tuning.best_row().safe().unwrap().median_ms
    }

    #[test]
    fn fast_run_goes_first_and_its_pairs_are_measured_within_the_budget() {
        let mut machine = Scripted::new(120, resnet_on_amd);
        let tuning = search(&mut machine, &[EngineOption::Threads(2)], 300);
        assert!(tuning.used <= Duration::from_secs(300), "{:?}", tuning.used);
        assert_eq!(machine.tried[..3], ["(baseline)", "(baseline)", "--fast-run"]);
        let best = tuning.best_row().candidate.to_string();
        assert!(
            best.contains("--fast-run") && best.contains("--record-comp-seq 2"),
            "{best}"
        );
        assert!(speedup(&tuning) >= 1.8, "{}", speedup(&tuning));
        assert!(tuning.confirmation.as_ref().is_some_and(|again| again.kept.is_some()));
        let crashed: Vec<String> = tuning
            .rows
            .iter()
            .filter(|row| row.status == TrialStatus::Crashed)
            .map(|row| row.candidate.to_string())
            .collect();
        assert_eq!(crashed, ["--layout-transform", "--layout nchw88"]);
    }

    /// Fast-run's profiling of ResNet-18 at 2 threads took about 20 s on
    /// this project's machine: on a fresh cache the prior (400 of the
    /// baseline's runs) leaves room for it in the default budget.
    #[test]
    fn a_fresh_cache_tries_fast_run_within_the_default_budget() {
        let mut machine = Scripted::new(20, resnet_on_amd);
        let tuning = search(&mut machine, &[EngineOption::Threads(2)], 120);
        assert_eq!(machine.tried[..3], ["(baseline)", "(baseline)", "--fast-run"]);
        assert!(tuning.used <= Duration::from_secs(120), "{:?}", tuning.used);
        let best = tuning.best_row().candidate.to_string();
        assert!(best.contains("--fast-run"), "{best}");
        assert!(speedup(&tuning) >= 1.4, "{}", speedup(&tuning));
    }

    /// What profiling cost on this machine before, as the algorithm cache
    /// recorded it, is the estimate: 300 s leaves no room in 120.
    #[test]
    fn a_budget_without_room_for_fast_run_says_what_it_would_need() {
        let mut machine = Scripted::new(300, resnet_on_amd);
        machine.on_record = Some(OnRecord::ThisModel(Duration::from_secs(300)));
        let tuning = search(&mut machine, &[EngineOption::Threads(2)], 120);
        assert!(!machine.tried.iter().any(|tried| tried.contains("--fast-run")));
        let untried = tuning
            .untried
            .iter()
            .find(|untried| untried.candidate.to_string() == "--fast-run")
            .expect("fast-run is listed as untried");
        assert!(
            matches!(untried.why, Skipped::Budget { needs, .. } if needs > Duration::from_secs(300)),
            "fast-run's need is what it cost before"
        );
        // Other models' records scale by the baseline's run: 0.5 s of
        // profiling per ms of run is 32 s for 63.3 ms runs, which fits.
        let mut machine = Scripted::new(30, resnet_on_amd);
        machine.on_record = Some(OnRecord::PerForwardMs(0.5));
        search(&mut machine, &[EngineOption::Threads(2)], 120);
        assert_eq!(machine.tried[2], "--fast-run");
    }

    /// ResNet-18 on a machine others load: 322 ms a run, trials of 5 s.
    /// What is kept for the confirmation is at most half the budget: the
    /// search still tries the options (it once tried none).
    #[test]
    fn slow_trials_still_leave_room_for_the_search() {
        let mut machine = Scripted::new(130, |options, _| {
            let cheaper = options.iter().any(|option| option == "--record-comp-seq");
            Outcome::Runs(if cheaper { 290.0 } else { 322.0 })
        });
        let tuning = search(&mut machine, &[EngineOption::Threads(2)], 120);
        assert!(machine.tried.len() >= 8, "{:?}", machine.tried);
        assert!(tuning.used <= Duration::from_secs(120), "{:?}", tuning.used);
        let kept = tuning.untried.iter().find_map(|untried| match untried.why {
            Skipped::Budget { kept, .. } => Some(kept),
            _ => None,
        });
        assert!(kept.is_some_and(|kept| kept <= Duration::from_secs(60)), "{kept:?}");
    }

    /// A second tune finds fast-run's algorithms in the cache the first
    /// kept: fast-run does not profile again, and the search gets further.
    #[test]
    fn a_warm_cache_makes_the_second_tune_cheaper() {
        let mut first = Scripted::new(20, resnet_on_amd);
        let cold = search(&mut first, &[EngineOption::Threads(2)], 120);
        let mut second = Scripted::new(20, resnet_on_amd);
        second.cached = first.cached.clone();
        let warm = search(&mut second, &[EngineOption::Threads(2)], 120);
        // Fast-run alone profiled the first time only; the second tune's
        // spare time goes to candidates the first had none for.
        let fast_run_alone = |tuning: &Tuning| {
            let row = tuning.rows.iter().find(|row| row.candidate.to_string() == "--fast-run");
            row.and_then(|row| row.measured)
                .map(|measured| measured.profiling.is_some())
        };
        assert_eq!(
            (fast_run_alone(&cold), fast_run_alone(&warm)),
            (Some(true), Some(false))
        );
        assert!(second.tried.len() > first.tried.len());
        let untried = |tuning: &Tuning| tuning.untried.len();
        assert!(
            untried(&warm) < untried(&cold),
            "{} against {}",
            untried(&warm),
            untried(&cold)
        );
        assert_eq!(
            warm.best_row().candidate.to_string(),
            cold.best_row().candidate.to_string()
        );
    }

    /// The second tune takes the search from the first's record: it runs the
    /// baseline, the record's two fastest winners once (their outputs), and
    /// the confirmation; no other candidate, and no profiling.
    #[test]
    fn a_recorded_search_measures_only_the_baseline_and_its_winners() {
        let user = [EngineOption::Threads(2)];
        let mut first = Scripted::new(20, resnet_on_amd);
        let cold = search(&mut first, &user, 120);
        let mut second = Scripted::new(20, resnet_on_amd);
        second.cached = first.cached.clone();
        let warm = search_from(&mut second, &user, 120, Some(record_of(&cold, &user)));
        assert!(matches!(warm.searched, Searched::Recorded { .. }));
        let table =
            |tuning: &Tuning| -> Vec<String> { tuning.rows.iter().map(|row| row.candidate.to_string()).collect() };
        assert_eq!(table(&warm), table(&cold));
        let mut winners: Vec<String> = warm
            .confirmation
            .as_ref()
            .expect("measured again")
            .contenders
            .iter()
            .map(|contender| warm.rows[contender.row].candidate.to_string())
            .collect();
        winners.push("(baseline)".into());
        let others: Vec<&String> = second.tried.iter().filter(|tried| !winners.contains(tried)).collect();
        assert!(others.is_empty(), "{others:?}");
        assert_eq!(second.cached, first.cached, "nothing profiled");
        assert!(warm.used * 2 <= cold.used, "{:?} against {:?}", warm.used, cold.used);
        assert!(warm.best_row().candidate.has(&EngineOption::FastRun));
    }

    /// A record whose baseline took another time than the baseline now (the
    /// machine, its load, or the feeds changed): every candidate is measured
    /// anew, and the tune says why.
    #[test]
    fn a_record_whose_baseline_took_another_time_is_measured_anew() {
        let user = [EngineOption::Threads(2)];
        let record = record_of(&search(&mut Scripted::new(20, resnet_on_amd), &user, 120), &user);
        let mut slower = Scripted::new(20, |options, before| match resnet_on_amd(options, before) {
            Outcome::Runs(ms) if options.is_empty() => Outcome::Runs(ms * 1.5),
            outcome => outcome,
        });
        let changed = search_from(&mut slower, &user, 120, Some(record));
        let Searched::Now {
            record_unused: Some(why),
            ..
        } = &changed.searched
        else {
            panic!("the record was used");
        };
        assert_eq!(
            why,
            "the baseline now takes 94.950 ms, 1.50x the 63.300 ms it took then (beyond 1.2x: the machine, its load or the feeds changed)"
        );
        assert!(slower.tried.contains(&"--graph-opt-level 0".to_string()));
    }

    /// The record's fastest winner crashes now: it is no winner (its row
    /// says so), and the next one is measured again in its place.
    #[test]
    fn a_recorded_winner_that_fails_now_is_no_winner() {
        let user = [EngineOption::Threads(2)];
        let cold = search(&mut Scripted::new(20, resnet_on_amd), &user, 120);
        let fastest = cold.rows[cold.search_best.expect("a winner")].candidate.to_string();
        let failing = fastest.clone();
        let mut now = Scripted::new(20, move |options, before| match options.join(" ") == failing {
            true => Outcome::Crashes,
            false => resnet_on_amd(options, before),
        });
        let warm = search_from(&mut now, &user, 120, Some(record_of(&cold, &user)));
        let row = warm
            .rows
            .iter()
            .find(|row| row.candidate.to_string() == fastest)
            .unwrap();
        assert_eq!(row.status, TrialStatus::Crashed);
        assert_eq!(row.reason.as_deref(), Some("run again now: bad err=45 in Xbyak::Error"));
        let again = warm.confirmation.as_ref().expect("measured again");
        assert_eq!(again.contenders.len(), 2);
        assert!(again
            .contenders
            .iter()
            .all(|contender| warm.rows[contender.row].candidate.to_string() != fastest));
        assert_ne!(warm.best_row().candidate.to_string(), fastest);
    }

    /// Two processes burning the CPU: every trial's time anywhere from a
    /// third to three times its own. The search's winners are measured again
    /// until the budget is spent, and none is decidedly faster: the baseline
    /// is kept, with the load said, never a speed-up whose interval spans
    /// two orders of magnitude.
    #[test]
    fn a_loaded_machine_gives_no_decided_winner_and_keeps_the_baseline() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut machine = Scripted::new(20, move |options, _| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let starved = 3f64.powf((state % 2001) as f64 / 1000.0 - 1.0);
            let gain = if options.iter().any(|option| option == "--cpu-inplace") {
                0.97
            } else {
                1.0
            };
            Outcome::Runs(10.0 * gain * starved)
        });
        machine.other_load_cores = 1.9;
        let tuning = search(&mut machine, &[], 120);
        assert!(tuning.best.is_none(), "{}", tuning.best_row().candidate);
        let again = tuning
            .confirmation
            .as_ref()
            .expect("the search's winners were measured again");
        assert!(again.noise.loaded());
        for contender in &again.contenders {
            assert_ne!(contender.verdict.speed, Speed::Faster);
            // Held on wall time or, the sides alike, on CPU time: either way the load is said.
            let reason = contender.verdict.reason.as_deref().unwrap_or_default();
            assert!(reason.contains("other processes used 1.9"), "{reason}");
        }
    }

    #[test]
    fn gains_within_the_noise_are_no_winners() {
        // Every candidate within 0.3% of the baseline, as a tiny model measures.
        let mut machine = Scripted::new(1, |options, _| {
            Outcome::Runs(0.003 * (1.0 + 0.001 * options.len() as f64))
        });
        let tuning = search(&mut machine, &[], 60);
        assert!(tuning.best.is_none(), "{}", tuning.best_row().candidate);
        assert!(tuning.confirmation.is_none());
    }

    #[test]
    fn a_best_the_second_measurement_does_not_confirm_is_not_kept() {
        let mut machine = Scripted::new(1, |options, before| {
            let rcs2 = options.iter().any(|option| option == "--record-comp-seq");
            Outcome::Runs(if rcs2 && before == 0 { 50.0 } else { 63.3 })
        });
        let tuning = search(&mut machine, &[EngineOption::Threads(2)], 300);
        let again = tuning.confirmation.as_ref().expect("measured again");
        assert!(again.kept.is_none() && again.contenders.iter().all(|contender| !contender.held()));
        assert!(tuning.best.is_none());
    }

    #[test]
    fn the_best_is_chosen_back_to_back_not_by_a_lucky_first_trial() {
        // Fast-run's first trial met a quiet machine (30 ms); every later one gives 44 ms.
        let mut quiet = true;
        let mut machine = Scripted::new(120, move |options, _| {
            let has = |name: &str| options.iter().any(|option| option == name);
            Outcome::Runs(match (has("--fast-run"), has("--record-comp-seq")) {
                (true, true) => 33.3,
                (true, false) if std::mem::take(&mut quiet) => 30.0,
                (true, false) => 44.0,
                _ => 63.3,
            })
        });
        let tuning = search(&mut machine, &[EngineOption::Threads(2)], 300);
        let again = tuning.confirmation.as_ref().expect("measured again");
        assert!(again.baseline.len() > 1, "{} rounds", again.baseline.len());
        let best = tuning.best_row().candidate.to_string();
        assert!(best.contains("--record-comp-seq"), "{best}");
        assert!(tuning.used <= Duration::from_secs(300), "{:?}", tuning.used);
    }

    #[test]
    fn a_hung_candidate_costs_its_own_deadline_and_the_search_goes_on() {
        let mut machine = Scripted::new(1, |options, _| {
            match options.iter().any(|option| option == "--cpu-inplace") {
                true => Outcome::Hangs,
                false => Outcome::Runs(10.0),
            }
        });
        let tuning = search(&mut machine, &[], 300);
        let hung = tuning
            .rows
            .iter()
            .find(|row| row.candidate.to_string() == "--cpu-inplace")
            .unwrap();
        assert_eq!(hung.status, TrialStatus::TimedOut);
        let own = tuning.baseline.took.mul_f64(super::super::cost::TRIAL_FACTOR);
        assert_eq!(hung.took, own.max(super::super::cost::TRIAL_FLOOR));
        assert!(hung.reason.as_deref().unwrap().starts_with("stopped at its deadline"));
        assert!(
            machine.tried.last().unwrap() != "--cpu-inplace",
            "tried after it: {:?}",
            machine.tried
        );
        assert!(tuning.untried.is_empty());
    }

    #[test]
    fn a_pair_that_cannot_beat_the_best_is_not_tried() {
        // Fast-run alone is best, measured with a wide spread; fuse-preprocess
        // wins alone by 1.3%, too little to bring the pair below the best's
        // interval (and it does not interact with fast-run, so its gain alone
        // is its gain in the pair).
        let mut machine = Scripted::new(10, |options, _| {
            let has = |name: &str| options.iter().any(|option| option == name);
            match (has("--fast-run"), has("--fuse-preprocess")) {
                (true, _) => Outcome::Noisy(44.0, 0.01),
                (false, true) => Outcome::Runs(62.5),
                _ => Outcome::Runs(63.3),
            }
        });
        let tuning = search(&mut machine, &[EngineOption::Threads(2)], 300);
        assert!(!machine
            .tried
            .iter()
            .any(|tried| tried == "--fast-run --fuse-preprocess"));
        assert!(tuning
            .untried
            .iter()
            .any(|untried| matches!(untried.why, Skipped::CannotBeatTheBest { .. })
                && untried.candidate.to_string() == "--fast-run --fuse-preprocess"));
    }
}
