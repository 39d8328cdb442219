//! Rounds until the rounds decide: contenders taken back to back
//! (`rounds::back_to_back`) and held against a reference, looked at after a
//! few fixed numbers of rounds, each look's interval at a confidence that
//! keeps the whole procedure's at 95%, until every verdict is decided, the
//! last look is reached or the time is spent. `compare`'s timing and tune's
//! confirmation both take their rounds here.
//!
//! The verdict of B/A (`Speed`) is `same` only when the whole interval lies
//! within ±min-effect, `faster` or `slower` only when it lies wholly beyond
//! it, and otherwise `undecided`, with the reason: too few rounds, or the
//! load other processes put on the machine during them.
//!
//! What the rounds measure (`Measure`) is the wall time of each run, unless
//! the machine is loaded as they start (other processes use a quarter of its
//! cores or more) and the sides run alike in what CPU time cannot see: then
//! the least CPU time the child used in any of its runs. The measure is
//! chosen from the load and the sides alone, before the rounds, never from
//! the ratios, so that either measure's interval keeps its coverage. A loaded machine lengthens the wall time by
//! whatever share of the cores others take, round by round (ResNet-18 at 1
//! thread on 2 cores beside two busy processes: wall 186 ms with its runs
//! spread by 32%, where quiet it took 124 ms, spread 5.8%), while the CPU
//! time of the engine's work stays put (125 ms, spread 4.8%): where others
//! take turns with it on the cores, not where they contend for its caches.
//!
//! Looking more than once and stopping at the first decided look would let
//! a 95% interval miss more often than 1 in 20: each look is another chance
//! to stop on a stray interval. The looks are fixed in advance (`Looks`), at
//! most K of them, and each takes its interval at 1 - 0.05/K (Bonferroni):
//! the chance that any look's interval misses the true median is at most
//! K x 0.05/K = 5%, so the interval the rounds stop at holds it with 95% at
//! least, whenever they stop. With C pairs judged at once (tune's winners
//! against the baseline) each look's confidence is 1 - 0.05/(K C).

use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;

use super::noise::loaded;
use super::rounds::{back_to_back, Lineup, Measure, Measured, Ratio};
use super::timing::fewest_for_interval;

/// The chance, at most, that the interval the rounds stop at misses the
/// true median of the ratios (over every look and every pair).
pub const ALPHA: f64 = 0.05;

/// B/A within ±2% is the same speed where the user names no other smallest
/// effect: `compare`'s `--min-effect` (the pair's timing and each
/// operator's), tune's winners.
pub const MIN_EFFECT_PERCENT: f64 = 2.0;

/// B against A: B/A's interval against ±min-effect: a pair's timing, tune's
/// winners, an operator of `compare --by-op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    /// The whole interval lies below 1 - min-effect.
    Faster,
    /// The whole interval lies above 1 + min-effect.
    Slower,
    /// The whole interval lies within 1 ± min-effect.
    Same,
    /// The interval reaches across 1 ± min-effect (or there is none).
    Undecided,
}

impl Speed {
    /// The verdict of `interval` (B/A) against ±`min_effect_percent`.
    pub fn of(interval: Option<[f64; 2]>, min_effect_percent: f64) -> Speed {
        let min_effect = min_effect_percent / 100.0;
        match interval {
            Some([low, high]) if low >= 1.0 - min_effect && high <= 1.0 + min_effect => Speed::Same,
            Some([_, high]) if high < 1.0 - min_effect => Speed::Faster,
            Some([low, _]) if low > 1.0 + min_effect => Speed::Slower,
            _ => Speed::Undecided,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Speed::Faster => "faster",
            Speed::Slower => "slower",
            Speed::Same => "same",
            Speed::Undecided => "undecided",
        }
    }
}

/// When the rounds are looked at, and the confidence of each look's interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Looks {
    /// The numbers of rounds to look at, in order; the last is the most rounds.
    pub at: Vec<usize>,
    /// Each look's interval's confidence: 1 - ALPHA / (looks x pairs).
    pub confidence: f64,
    /// The rounds were fixed by the user (`--rounds`): one look, at the end.
    pub fixed: bool,
}

impl Looks {
    /// One look after `rounds` rounds, for one pair.
    pub fn fixed(rounds: usize) -> Looks {
        Looks {
            at: vec![rounds],
            confidence: 1.0 - ALPHA,
            fixed: true,
        }
    }

    /// `count` looks for `pairs` pairs: the first after the fewest rounds
    /// whose interval exists at each look's confidence, each next one after
    /// twice as many. Should the time end between two looks, the rounds so
    /// far are looked at instead of the next: never more than `count` looks.
    pub fn doubling(count: u32, pairs: usize) -> Looks {
        let confidence = 1.0 - ALPHA / (f64::from(count) * pairs as f64);
        let first = fewest_for_interval(confidence);
        Looks {
            at: (0..count).map(|look| first << look).collect(),
            confidence,
            fixed: false,
        }
    }

    pub fn most(&self) -> usize {
        *self.at.last().expect("one look at least")
    }
}

/// How the rounds are taken and judged.
pub struct RoundsPlan {
    pub looks: Looks,
    /// ±min-effect, in percent (`MIN_EFFECT_PERCENT` unless the user names
    /// another): the verdict's bounds around 1.
    pub min_effect_percent: f64,
    /// A verdict of `faster` or `slower` decides only with its interval
    /// within this factor (high/low) too: tune's headline needs the size of
    /// the gain, not only its direction.
    pub precision: Option<f64>,
    /// The time the rounds may take: a round starts only while the longest
    /// round so far still fits in what is left of it. `None`: the lineup's own room.
    pub budget: Option<Duration>,
    /// The option that set the time, for the reason of an undecided verdict.
    pub budget_flag: &'static str,
    /// The pairs judged: each `(a, b)`, places in the lineup, as B/A.
    pub pairs: Vec<(usize, usize)>,
    /// What the rounds are held on, chosen before them (`Measure::before_rounds`);
    /// wall time after all where a turn could not read its CPU time.
    pub measure: Measure,
}

/// How the rounds ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Every verdict was decided at a look.
    Decided,
    /// The last look's rounds were taken.
    Rounds,
    /// No time was left for another round.
    Budget,
    /// A contender was not measured (its round is dropped).
    Failed,
}

/// One pair's verdict at the last look.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub ratio: Ratio,
    /// The interval at the looks' confidence, where the rounds give one.
    pub interval: Option<[f64; 2]>,
    pub speed: Speed,
    /// Why it is `undecided`.
    pub reason: Option<String>,
    /// What the rounds were held on.
    pub measure: Measure,
}

/// The load on the machine during the rounds' timed runs, as `run` measures it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RoundsNoise {
    /// Cores the machine has online.
    pub cores: usize,
    /// CPU time other processes used during the timed runs, in cores: each
    /// run's figure (`runner::noise`), weighted by its time.
    pub other_load_cores: Option<f64>,
    /// The most of any one side's timed runs in a round.
    pub most_other_load_cores: Option<f64>,
}

impl RoundsNoise {
    fn of(rounds: &[Vec<Measured>], cores: usize) -> RoundsNoise {
        let measured: Vec<(f64, f64)> = rounds
            .iter()
            .flatten()
            .filter_map(|turn| Some((turn.other_load_cores?, turn.window.as_secs_f64())))
            .collect();
        let time: f64 = measured.iter().map(|(_, window)| window).sum();
        let other_load_cores =
            (time > 0.0).then(|| measured.iter().map(|(load, window)| load * window).sum::<f64>() / time);
        let most_other_load_cores = measured.iter().map(|(load, _)| *load).reduce(f64::max);
        RoundsNoise {
            cores,
            other_load_cores,
            most_other_load_cores,
        }
    }

    /// Other processes used a quarter of the cores or more.
    pub fn loaded(&self) -> bool {
        self.other_load_cores.is_some_and(|load| loaded(load, self.cores))
    }
}

/// What the rounds gave.
pub struct Judged {
    pub rounds: Vec<Vec<Measured>>,
    /// What the verdicts were measured on.
    pub measure: Measure,
    /// One per pair of the plan, at the last look.
    pub verdicts: Vec<Verdict>,
    /// The numbers of rounds looked at.
    pub looked: Vec<usize>,
    pub ended: Ended,
    pub noise: RoundsNoise,
    /// The rounds, start to end.
    pub took: Duration,
}

/// Takes `plan`'s rounds of `lineup` until its verdicts are decided, its
/// last look is reached or its time is spent; `after_round` is told of each
/// round (progress). Looks at the rounds at each of the plan's looks, and
/// once more where they stopped between two.
pub fn rounds_until_decided(
    lineup: &mut dyn Lineup,
    plan: &RoundsPlan,
    cores: usize,
    mut after_round: impl FnMut(&[Vec<Measured>]),
) -> Result<Judged> {
    lineup.hold_on(plan.measure);
    let started = lineup.now();
    let mut budgeted = Budgeted {
        lineup,
        started,
        budget: plan.budget,
        turns: 0,
        round_started: started,
        longest_round: Duration::ZERO,
        out_of_time: false,
    };
    let mut looked = Vec::new();
    let mut decided = false;
    let rounds = back_to_back(&mut budgeted, plan.looks.most(), |rounds| {
        after_round(rounds);
        if plan.looks.at.contains(&rounds.len()) {
            looked.push(rounds.len());
            decided = plan.decided(rounds);
        }
        decided
    })?;
    let ended = match (decided, rounds.len() == plan.looks.most(), budgeted.out_of_time) {
        (true, _, _) => Ended::Decided,
        (false, true, _) => Ended::Rounds,
        (false, false, true) => Ended::Budget,
        (false, false, false) => Ended::Failed,
    };
    if !rounds.is_empty() && looked.last() != Some(&rounds.len()) {
        looked.push(rounds.len());
    }
    let noise = RoundsNoise::of(&rounds, cores);
    let measure = plan.measure(&rounds);
    let verdicts = plan
        .pairs
        .iter()
        .filter_map(|&pair| plan.verdict(&rounds, pair, ended, &noise, measure))
        .collect();
    Ok(Judged {
        took: budgeted.lineup.now().saturating_duration_since(started),
        rounds,
        measure,
        verdicts,
        looked,
        ended,
        noise,
    })
}

impl RoundsPlan {
    /// What `rounds` are held on: the plan's measure where every turn read
    /// it, wall time otherwise.
    pub fn measure(&self, rounds: &[Vec<Measured>]) -> Measure {
        match self.measure.read_by(rounds) {
            true => self.measure,
            false => Measure::Wall,
        }
    }

    /// Whether every pair's verdict is decided at this look.
    fn decided(&self, rounds: &[Vec<Measured>]) -> bool {
        let measure = self.measure(rounds);
        self.pairs.iter().all(|&(a, b)| {
            Ratio::of(rounds, a, b, self.looks.confidence, measure).is_some_and(|ratio| {
                let interval = ratio.interval_at(self.looks.confidence);
                self.speed_of(interval).0 != Speed::Undecided
            })
        })
    }

    /// The speed an interval says, with the interval too wide for `precision` said.
    fn speed_of(&self, interval: Option<[f64; 2]>) -> (Speed, Option<String>) {
        let speed = Speed::of(interval, self.min_effect_percent);
        match (speed, interval, self.precision) {
            (Speed::Faster | Speed::Slower, Some([low, high]), Some(factor)) if high > low * factor => (
                Speed::Undecided,
                Some(format!(
                    "its interval [{low:.3}, {high:.3}] spans more than a factor of {factor}"
                )),
            ),
            _ => (speed, None),
        }
    }

    /// Pair `(a, b)`'s verdict over `rounds`; `None` without rounds.
    fn verdict(
        &self,
        rounds: &[Vec<Measured>],
        (a, b): (usize, usize),
        ended: Ended,
        noise: &RoundsNoise,
        measure: Measure,
    ) -> Option<Verdict> {
        let ratio = Ratio::of(rounds, a, b, self.looks.confidence, measure)?;
        let interval = ratio.interval_at(self.looks.confidence);
        let (speed, too_wide) = self.speed_of(interval);
        let reason =
            (speed == Speed::Undecided).then(|| self.reason(rounds.len(), interval, too_wide, ended, noise, measure));
        Some(Verdict {
            ratio,
            interval,
            speed,
            reason,
            measure,
        })
    }

    /// Why a verdict is undecided: the load, else too few rounds, and what ended them.
    fn reason(
        &self,
        rounds: usize,
        interval: Option<[f64; 2]>,
        too_wide: Option<String>,
        ended: Ended,
        noise: &RoundsNoise,
        measure: Measure,
    ) -> String {
        let percent = self.min_effect_percent;
        let counted = rounds_text(rounds);
        let what = match (interval, too_wide) {
            (_, Some(too_wide)) => too_wide,
            (Some([low, high]), None) => format!("its interval [{low:.3}, {high:.3}] reaches across 1 ± {percent}%"),
            (None, None) => format!(
                "{counted} give{} no {}% interval (it needs {})",
                if rounds == 1 { "s" } else { "" },
                trimmed(self.looks.confidence * 100.0),
                fewest_for_interval(self.looks.confidence)
            ),
        };
        let stopped = match ended {
            Ended::Rounds if self.looks.fixed => format!("--rounds fixed {counted}"),
            Ended::Rounds => format!("{counted} are the most"),
            Ended::Budget => match self.budget {
                Some(budget) => format!(
                    "the {} of {} s was spent after {counted}",
                    self.budget_flag,
                    trimmed(budget.as_secs_f64())
                ),
                None => format!("the {} was spent after {counted}", self.budget_flag),
            },
            Ended::Decided | Ended::Failed => format!("it stopped after {counted}"),
        };
        match (noise.loaded(), noise.other_load_cores, measure) {
            (true, Some(load), Measure::Wall) => format!(
                "the machine was loaded: other processes used {load:.1} of its {} cores during the rounds; {what}; {stopped}",
                noise.cores
            ),
            (true, Some(load), Measure::Cpu) => format!(
                "too few rounds on CPU time (other processes used {load:.1} of the machine's {} cores during the rounds): {what}; {stopped}",
                noise.cores
            ),
            _ => format!("too few rounds: {what}; {stopped}"),
        }
    }
}

/// `1 round`, `8 rounds`.
pub fn rounds_text(rounds: usize) -> String {
    match rounds {
        1 => "1 round".to_string(),
        rounds => format!("{rounds} rounds"),
    }
}

/// A number with at most three decimals, without trailing zeros: `98.75`, `60`, `0.5`.
fn trimmed(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A lineup whose rounds stop when the plan's time is spent.
struct Budgeted<'l> {
    lineup: &'l mut dyn Lineup,
    started: Instant,
    budget: Option<Duration>,
    /// Contenders measured so far.
    turns: usize,
    /// When the round under way started, and the longest round so far.
    round_started: Instant,
    longest_round: Duration,
    /// A round did not start for want of time.
    out_of_time: bool,
}

impl Lineup for Budgeted<'_> {
    fn contenders(&self) -> usize {
        self.lineup.contenders()
    }

    fn now(&self) -> Instant {
        self.lineup.now()
    }

    /// The lineup's own room, and the longest round so far left in the
    /// budget: on a machine whose load rises, the rounds' mean would let a
    /// last round start that ends well past it.
    fn room_for_a_round(&mut self) -> bool {
        let spent = self.now().saturating_duration_since(self.started);
        let fits = self.budget.is_none_or(|budget| spent + self.longest_round <= budget);
        let room = fits && self.lineup.room_for_a_round();
        self.out_of_time |= !room;
        room
    }

    fn measure(&mut self, at: usize) -> Result<Option<Measured>> {
        let contenders = self.contenders().max(1);
        if self.turns.is_multiple_of(contenders) {
            self.round_started = self.now();
        }
        self.turns += 1;
        let measured = self.lineup.measure(at)?;
        if self.turns.is_multiple_of(contenders) {
            let took = self.now().saturating_duration_since(self.round_started);
            self.longest_round = self.longest_round.max(took);
        }
        Ok(measured)
    }
}

#[cfg(test)]
mod tests;
