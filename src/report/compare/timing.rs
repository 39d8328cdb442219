//! The speeds of two runs, timed in rounds.

use std::fmt::Write;

use serde::Serialize;

use crate::report::bmf::Latency;
use crate::report::by_op::{by_op_text, ByOp};
use crate::runner::rounds::{median_of_rounds, Measure};
use crate::runner::sequential::{rounds_text, Ended, Judged, RoundsNoise, RoundsPlan, Speed};
use crate::runner::timing::median_interval;

/// The speeds of two runs, timed in rounds.
#[derive(Serialize)]
pub struct TimingComparison {
    pub rounds: usize,
    /// What the rounds were held on: `wall` time, or `cpu` time where the
    /// machine was loaded as they started and the sides run alike (`runner::sequential`).
    pub measure: Measure,
    /// The median of each side's figures of `measure` (`Measure::of`), one per round, over the rounds of the ratio.
    pub a_ms: f64,
    pub b_ms: f64,
    /// `b_ms`'s 95% interval: order statistics of B's rounds (`--bmf`).
    #[serde(skip)]
    pub b_interval_ms: Option<[f64; 2]>,
    /// B/A: the median of the rounds' ratios, with its 95% interval (over
    /// every look: each look's own is at `look_confidence`).
    pub ratio: f64,
    pub ci95: Option<[f64; 2]>,
    /// `faster`, `slower`, `same` or `undecided`, against ±`min_effect_pct`.
    pub speed: Speed,
    /// Why the speed is `undecided`.
    pub reason: Option<String>,
    /// The load other processes put on the machine during the rounds.
    pub noise: RoundsNoise,
    pub min_effect_pct: f64,
    /// The numbers of rounds the verdict was looked at, and each look's confidence.
    pub looks: Vec<usize>,
    pub look_confidence: f64,
    /// Why the rounds stopped: `decided`, `rounds` (the last look's, or
    /// `--rounds`), `budget` (`--timing-budget` was spent).
    pub stopped: Ended,
    pub max_slowdown_pct: Option<f64>,
    /// B is `slower` than A beyond `--max-slowdown`, with the whole interval: a failed check.
    pub too_slow: bool,
    /// The rounds, start to end.
    pub seconds: f64,
    /// `--by-op`: where the time went, from profiled rounds of their own.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub by_op: Option<ByOp>,
}

impl TimingComparison {
    /// A's and B's rounds (A's first in each) as `outcome` holds them,
    /// taken and judged by `plan`, against `--max-slowdown`; `None` for none.
    pub fn new(outcome: &Judged, plan: &RoundsPlan, max_slowdown: Option<f64>) -> Option<TimingComparison> {
        let verdict = outcome.verdicts.first()?;
        let rounds = &outcome.rounds;
        let too_slow = max_slowdown.is_some_and(|percent| {
            verdict.speed == Speed::Slower && verdict.interval.is_some_and(|[low, _]| low > 1.0 + percent / 100.0)
        });
        Some(TimingComparison {
            seconds: outcome.took.as_secs_f64(),
            rounds: rounds.len(),
            measure: outcome.measure,
            a_ms: median_of_rounds(rounds.iter().map(|round| &round[0]), outcome.measure),
            b_ms: median_of_rounds(rounds.iter().map(|round| &round[1]), outcome.measure),
            b_interval_ms: median_interval(
                &rounds
                    .iter()
                    .map(|round| outcome.measure.of(&round[1]))
                    .collect::<Vec<_>>(),
            )
            .map(|(low, high)| [low, high]),
            ratio: verdict.ratio.estimate,
            ci95: verdict.interval,
            speed: verdict.speed,
            reason: verdict.reason.clone(),
            noise: outcome.noise,
            min_effect_pct: plan.min_effect_percent,
            looks: outcome.looked.clone(),
            look_confidence: plan.looks.confidence,
            stopped: outcome.ended,
            max_slowdown_pct: max_slowdown,
            too_slow,
            by_op: None,
        })
    }

    /// B's latency, named `name`, for `--bmf`.
    pub fn b_latency(&self, name: &str) -> Latency {
        Latency {
            name: name.to_string(),
            median_ms: self.b_ms,
            interval_ms: self.b_interval_ms,
        }
    }

    /// `1.615 [1.571, 1.690]`: B/A and its interval.
    pub(super) fn ratio_text(&self) -> String {
        match self.ci95 {
            Some([low, high]) => format!("{:.3} [{low:.3}, {high:.3}]", self.ratio),
            None => format!("{:.3}", self.ratio),
        }
    }

    /// `faster`, `same`, `slower`, `undecided`, or `SLOWER beyond --max-slowdown 10%`.
    pub(super) fn verdict(&self) -> String {
        match self.max_slowdown_pct.filter(|_| self.too_slow) {
            Some(percent) => format!("SLOWER beyond --max-slowdown {percent}%"),
            None => self.speed.word().to_string(),
        }
    }

    /// The verdict with what it means: `same, within ±2%`, `undecided: ...`.
    fn verdict_said(&self) -> String {
        let percent = self.min_effect_pct;
        match (self.speed, self.max_slowdown_pct.filter(|_| self.too_slow)) {
            (_, Some(_)) => self.verdict(),
            (Speed::Same, None) => format!("same, within ±{percent}%"),
            (Speed::Faster, None) => format!("faster, by more than {percent}%"),
            (Speed::Slower, None) => format!("slower, by more than {percent}%"),
            (Speed::Undecided, None) => format!("undecided: {}", self.reason.as_deref().unwrap_or("")),
        }
    }

    /// What fails the check, if anything: `b is 61.5% slower than a ...`.
    pub fn failure(&self) -> Option<String> {
        let percent = self.max_slowdown_pct.filter(|_| self.too_slow)?;
        let [low, high] = self.ci95?;
        Some(format!(
            "b is {:.1}% slower than a (95% interval {:.1}% to {:.1}%), beyond --max-slowdown {percent}%",
            (self.ratio - 1.0) * 100.0,
            (low - 1.0) * 100.0,
            (high - 1.0) * 100.0
        ))
    }

    /// `other processes used 0.12 of 2 cores during the rounds`.
    fn load_text(&self) -> Option<String> {
        let Some(load) = self.noise.other_load_cores else {
            return Some(
                "other processes' load not measured during the rounds: each side's timed runs were \
                 too short for /proc's 10 ms ticks"
                    .to_string(),
            );
        };
        Some(format!(
            "other processes used {load:.2} of {} cores during the rounds{}",
            self.noise.cores,
            if self.noise.loaded() {
                ": the machine was loaded"
            } else {
                ""
            }
        ))
    }

    /// The report's lines: both medians, then B/A and what it says, then the load.
    pub(super) fn to_text(&self) -> String {
        let looks: Vec<String> = self.looks.iter().map(usize::to_string).collect();
        let mut text = format!(
            "timing  a {:.4} ms, b {:.4} ms{} (medians of {} in {:.0} s, each side a fresh process per round)\n        b/a {} (95%, {}, looked at {} {}): {}\n",
            self.a_ms,
            self.b_ms,
            match self.measure {
                Measure::Wall => "",
                Measure::Cpu => " of CPU time",
            },
            rounds_text(self.rounds),
            self.seconds,
            self.ratio_text(),
            self.measure.said(),
            looks.join(", "),
            if self.looks == [1] { "round" } else { "rounds" },
            self.verdict_said()
        );
        if let Some(load) = self.load_text() {
            let _ = writeln!(text, "        {load}");
        }
        if let Some(by_op) = &self.by_op {
            text.push_str(&by_op_text(by_op));
        }
        text
    }
}
