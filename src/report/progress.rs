//! Progress on stderr. indicatif hides it when stderr is not a terminal.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::messages::to_stderr;
use crate::runner::rounds::{Measure, Measured, Ratio};
use crate::runner::sequential::RoundsPlan;
use crate::runtime::InstallWatcher;
use crate::supervise::parent::Watcher;
use crate::supervise::{Phase, Whereabouts};
use crate::tune::candidate::Candidate;
use crate::tune::{Row, TuneWatcher};

fn bar(total: Option<u64>, template: &str, message: &'static str, quiet: bool) -> ProgressBar {
    let target = if quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(total, target).with_message(message);
    bar.set_style(ProgressStyle::with_template(template).expect("templates are valid"));
    bar
}

/// `mge runtime install`'s bar over the bytes extracted from the wheel.
pub struct InstallProgress {
    quiet: bool,
    bar: Option<ProgressBar>,
}

impl InstallProgress {
    pub fn new(quiet: bool) -> InstallProgress {
        InstallProgress { quiet, bar: None }
    }
}

impl InstallWatcher for InstallProgress {
    fn extracting(&mut self, total: u64) {
        let template = "{msg} [{bar:30}] {bytes}/{total_bytes} ({eta})";
        self.bar = Some(bar(Some(total), template, "extracting", self.quiet));
    }

    fn extracted(&mut self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    fn finished(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for InstallProgress {
    fn drop(&mut self) {
        self.finished();
    }
}

/// What a supervised run shows: a spinner with the elapsed time while the
/// engine loads (the layout transform can take minutes) and while it
/// profiles algorithms for fast-run (as long), then a bar over the warm-up
/// and the timed runs.
pub struct RunProgress {
    quiet: bool,
    shown: Option<(Phase, ProgressBar)>,
}

impl RunProgress {
    pub fn new(quiet: bool) -> RunProgress {
        RunProgress { quiet, shown: None }
    }

    fn show(&mut self, phase: Phase) -> Option<&ProgressBar> {
        if self.shown.as_ref().map(|(shown, _)| *shown) != Some(phase) {
            self.clear();
            let new = match phase {
                Phase::Load | Phase::Profiling => {
                    let message = match phase {
                        Phase::Load => "loading the model",
                        _ => "profiling algorithms (fast-run)",
                    };
                    let spinner = bar(None, "{spinner} {msg} {elapsed}", message, self.quiet);
                    spinner.enable_steady_tick(Duration::from_millis(120));
                    spinner
                }
                Phase::Warmup { runs } => bar(Some(runs), "{msg} [{bar:30}] {pos}/{len}", "warm-up", self.quiet),
                Phase::Iterations {
                    runs,
                    duration_ms: None,
                } => bar(
                    Some(runs),
                    "{msg} [{bar:30}] {pos}/{len} ({eta})",
                    "running",
                    self.quiet,
                ),
                Phase::Iterations {
                    duration_ms: Some(_), ..
                } => {
                    let spinner = bar(None, "{spinner} {msg} {pos} runs, {elapsed}", "running", self.quiet);
                    spinner.enable_steady_tick(Duration::from_millis(120));
                    spinner
                }
                // The library loads in a fraction of a second; a testcase's runs have their own phases.
                Phase::Runtime | Phase::Testcase { .. } => return None,
            };
            self.shown = Some((phase, new));
        }
        self.shown.as_ref().map(|(_, bar)| bar)
    }

    fn clear(&mut self) {
        if let Some((_, bar)) = self.shown.take() {
            bar.finish_and_clear();
        }
    }
}

impl Watcher for RunProgress {
    fn moved(&mut self, whereabouts: &Whereabouts) {
        match whereabouts.phase {
            Some(phase) => {
                if let Some(bar) = self.show(phase) {
                    bar.set_position(whereabouts.done);
                }
            }
            None => self.clear(),
        }
    }

    fn text(&mut self, line: &str) {
        match &self.shown {
            Some((_, bar)) => bar.suspend(|| to_stderr(line)),
            None => to_stderr(line),
        }
    }
}

impl Drop for RunProgress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// `mge tune`'s bar over the candidates, with the best so far.
pub struct TuneProgress {
    bar: ProgressBar,
    best: String,
}

impl TuneProgress {
    pub fn new(candidates: u64, quiet: bool) -> TuneProgress {
        let bar = bar(
            Some(candidates),
            "{msg}\n[{bar:30}] {pos}/{len} candidates, {elapsed}",
            "",
            quiet,
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        TuneProgress {
            bar,
            best: String::new(),
        }
    }
}

impl TuneWatcher for TuneProgress {
    fn trying(&mut self, candidate: &Candidate) {
        self.bar.set_message(format!("{}\ntrying {candidate}", self.best));
    }

    fn tried(&mut self, row: &Row, best: &Row, baseline_ms: f64) {
        if let Some(measured) = best.safe() {
            let speedup = baseline_ms / measured.median_ms;
            self.best = format!("best so far: {} ({speedup:.2}x)", best.candidate);
            self.bar.set_message(self.best.clone());
        }
        if !row.candidate.0.is_empty() {
            self.bar.inc(1);
        }
    }
}

impl Drop for TuneProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// `compare`'s rounds, as `run` shows its runs: a bar over rounds fixed by
/// `--rounds`, else a spinner with the rounds, the time against the budget,
/// and B/A so far.
pub struct RoundsProgress {
    bar: ProgressBar,
    confidence: f64,
}

impl RoundsProgress {
    /// The rounds of `pair` (a model's name in a folder, or empty) under `plan`.
    pub fn new(pair: &str, plan: &RoundsPlan, quiet: bool) -> RoundsProgress {
        let bar = match plan.budget {
            Some(budget) => {
                let spinner = bar(
                    Some(budget.as_secs()),
                    "{spinner} timing{prefix}: rounds {pos}, {elapsed} of the {len} s --timing-budget{msg}",
                    "",
                    quiet,
                );
                spinner.enable_steady_tick(Duration::from_millis(120));
                spinner
            }
            None => bar(
                Some(plan.looks.most() as u64),
                "timing{prefix} [{bar:30}] {pos}/{len} rounds ({eta}){msg}",
                "",
                quiet,
            ),
        };
        if !pair.is_empty() {
            bar.set_prefix(format!(" {}", crate::text::printable(pair)));
        }
        RoundsProgress {
            bar,
            confidence: plan.looks.confidence,
        }
    }

    /// After each round: their count and B/A so far, on `measure`.
    pub fn round(&mut self, rounds: &[Vec<Measured>], measure: Measure) {
        self.bar.set_position(rounds.len() as u64);
        if let Some(ratio) = Ratio::of(rounds, 0, 1, self.confidence, measure) {
            let on = match measure {
                Measure::Wall => "",
                Measure::Cpu => " on CPU time",
            };
            self.bar.set_message(format!("; b/a {:.3}{on} so far", ratio.estimate));
        }
    }
}

impl Drop for RoundsProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
