//! One candidate measured: `mge run` with its options in a supervised child,
//! its median time read from the JSON report and its outputs kept for comparison.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::candidate::Candidate;
use super::cost::OnRecord;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, worst, Rules, TensorStatus};
use crate::engine::NetworkOptions;
use crate::mge_command::MgeCommand;
use crate::options::{EngineOption, RuntimeOptions};
use crate::runner::rounds::{machine_loaded_now, timed_child, Measure, Measured};
use crate::runner::timing::median;
use crate::runtime::algo_cache::{model_identity, AlgoCache, Found, Key};
use crate::runtime::Located;
use crate::supervise::parent::{Failure, How};
use crate::text::number;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// What the search needs of its trials: a clock, and a candidate measured by
/// a deadline; and what this machine's algorithm cache knows of fast-run.
pub trait Runner {
    fn now(&self) -> Instant;
    /// Measures `candidate` over `runs` timed runs, stopping it at `deadline`.
    fn run(&mut self, candidate: &Candidate, runs: u64, deadline: Instant) -> Result<Trial>;
    /// Does fast-run find `candidate`'s algorithms profiled already?
    fn fast_run_cached(&self, candidate: &Candidate) -> bool;
    /// What fast-run's profiling under `candidate`'s options cost on this
    /// machine before, as recorded.
    fn profiling_on_record(&self, candidate: &Candidate) -> Option<OnRecord>;
    /// Whether other processes load the machine now (`Measure::before_rounds`).
    fn machine_loaded(&self) -> bool;
    /// Runs every later trial as rounds held on `measure` need (`Lineup::hold_on`).
    fn hold_on(&mut self, measure: Measure);
}

/// The algorithm cache as tune's trials use it: fast-run candidates read and
/// keep their algorithms there (each a child `mge run` under its own key).
pub struct AlgoCacheView {
    pub cache: AlgoCache,
    pub located: Located,
    /// The network options of the baseline, which every candidate's start from.
    pub options: NetworkOptions,
    /// The model file's `model_digest`.
    pub model: String,
    /// The keys whose files were looked at for damage (`set_aside_damaged`).
    pub looked_at: Vec<Key>,
}

impl AlgoCacheView {
    /// The options of `candidate`, and their key.
    fn key_of(&self, candidate: &Candidate) -> Option<(NetworkOptions, Key)> {
        let mut options = self.options.clone();
        let mut runtime = RuntimeOptions::default();
        for option in &candidate.0 {
            option.apply(&mut options, &mut runtime);
        }
        let key = Key::new(&self.located, &options).ok()?;
        Some((options, key))
    }

    fn cached(&self, candidate: &Candidate) -> bool {
        let Some((options, key)) = self.key_of(candidate) else {
            return false;
        };
        self.cache
            .held(&key)
            .is_some_and(|held| held.models.contains_key(&model_identity(&self.model, &options)))
    }

    fn on_record(&self, candidate: &Candidate) -> Option<OnRecord> {
        let (options, key) = self.key_of(candidate)?;
        let held = self.cache.held(&key)?;
        let this = model_identity(&self.model, &options);
        if let Some(profiling) = held.models.get(&this).and_then(|record| record.profiling_s) {
            return Some(OnRecord::ThisModel(Duration::from_secs_f64(profiling)));
        }
        let per_ms: Vec<f64> = held
            .models
            .values()
            .filter_map(|record| Some(record.profiling_s? / record.forward_ms.filter(|ms| *ms > 0.0)?))
            .collect();
        (!per_ms.is_empty()).then(|| OnRecord::PerForwardMs(median(&per_ms)))
    }

    /// Sets aside a damaged or foreign file of `candidate`'s key before its
    /// first trial reads it (the trial then profiles anew): the note that
    /// says so. Each key's file is looked at once a tune, not every round.
    fn set_aside_damaged(&mut self, candidate: &Candidate) -> Option<String> {
        let (_, key) = self.key_of(candidate)?;
        if self.looked_at.contains(&key) {
            return None;
        }
        self.looked_at.push(key.clone());
        match self.cache.read(&key) {
            Ok(Found::SetAside(note)) => Some(note),
            Ok(Found::Nothing | Found::Held(_)) => None,
            Err(err) => Some(format!("the algorithm cache is not used: {err:#}")),
        }
    }

    /// The engine's cache fast-run used under `candidate`'s options.
    fn engine_cache(&self, candidate: &Candidate) -> Option<Vec<u8>> {
        let (_, key) = self.key_of(candidate)?;
        Some(self.cache.held(&key)?.engine_cache)
    }
}

/// Trials as processes: each candidate a supervised `mge run`.
pub struct Trials {
    /// `mge run MODEL` with the user's feeds and fixed engine options.
    pub baseline: MgeCommand,
    pub warmup: usize,
    /// Where fast-run candidates keep their algorithms: the algorithm cache;
    /// else the user's own fast-run cache, or one in the scratch folder
    /// shared by all fast-run candidates, so that only the first one profiles.
    pub algo_cache: Option<AlgoCacheView>,
    pub fast_run_cache: Option<PathBuf>,
    pub scratch: PathBuf,
    pub count: usize,
    /// What the trials found of the algorithm cache that the user should
    /// know (a damaged file set aside), each once, for the command to say.
    pub notes: Vec<String>,
}

impl Trials {
    /// The fast-run cache file fast-run candidates read and update, where
    /// the algorithm cache does not serve them.
    fn cache_path(&self) -> PathBuf {
        self.fast_run_cache
            .clone()
            .unwrap_or_else(|| self.scratch.join("fast-run.cache"))
    }

    /// The fast-run cache `candidate` ran with, as a file to save or pack:
    /// the user's own, or a copy of what the algorithm cache or tune's own held.
    pub fn fast_run_cache_of(&self, candidate: &Candidate) -> Result<PathBuf> {
        if let Some(user) = &self.fast_run_cache {
            return Ok(user.clone());
        }
        let Some(bytes) = self.algo_cache.as_ref().and_then(|view| view.engine_cache(candidate)) else {
            return Ok(self.cache_path());
        };
        let copy = self.scratch.join("algo-cache-copy.cache");
        std::fs::write(&copy, bytes).with_context(|| format!("cannot write {}", copy.display()))?;
        Ok(copy)
    }
}

impl Runner for Trials {
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// The algorithm cache's record of the model under the candidate's
    /// options; else tune's own cache holds anything (an empty one is 4
    /// bytes) and no layout changes the operators.
    fn fast_run_cached(&self, candidate: &Candidate) -> bool {
        if let Some(view) = &self.algo_cache {
            return view.cached(candidate);
        }
        let relayout = candidate
            .0
            .iter()
            .any(|option| matches!(option, EngineOption::Layout(_) | EngineOption::LayoutTransform(_)));
        !relayout && std::fs::metadata(self.cache_path()).is_ok_and(|metadata| metadata.len() > 4)
    }

    fn profiling_on_record(&self, candidate: &Candidate) -> Option<OnRecord> {
        self.algo_cache.as_ref()?.on_record(candidate)
    }

    fn machine_loaded(&self) -> bool {
        machine_loaded_now()
    }

    fn hold_on(&mut self, measure: Measure) {
        self.baseline = measure.timed_command(self.baseline.clone());
    }

    fn run(&mut self, candidate: &Candidate, runs: u64, deadline: Instant) -> Result<Trial> {
        let started = Instant::now();
        self.count += 1;
        let outputs = self.scratch.join(format!("trial-{}", self.count));
        // The trial's own notes are not shown: the parent finds what they would say.
        if let Some(note) = candidate
            .has(&EngineOption::FastRun)
            .then(|| self.algo_cache.as_mut()?.set_aside_damaged(candidate))
            .flatten()
        {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
        let mut command = self.baseline.clone().engine(&candidate.0);
        if candidate.has(&EngineOption::FastRun) && self.fast_run_cache.is_none() && self.algo_cache.is_none() {
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
            Ok(measured) => Trial {
                status: TrialStatus::Ok,
                measured: Some(measured),
                reason: None,
                outputs: Some(outputs),
                took: started.elapsed(),
            },
            Err(outcome) => match outcome.failure() {
                None => unmeasured(TrialStatus::Failed, Some(outcome.to_string())),
                Some(Failure {
                    how: How::TimedOut(_), ..
                }) => unmeasured(TrialStatus::TimedOut, None),
                Some(failure) => {
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
