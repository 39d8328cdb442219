//! `mge tune`'s table, its JSON document and the command line of the winner.

use std::fmt::Write;

use serde::Serialize;

use super::table::Table;
use super::Report;
use crate::mge_command::MgeCommand;
use crate::runner::rounds::{Measure, Measured, Ratio};
use crate::runner::sequential::{RoundsNoise, Speed};
use crate::text::number;
use crate::tune::trial::TrialStatus;
use crate::tune::{Confirmation, Contender, HeadlineSource, Row, Searched, Skipped, Tuning};

#[derive(Serialize)]
pub struct TuneReport {
    pub baseline: Baseline,
    pub best: Best,
    /// Where the candidates' figures come from.
    pub search: SearchReport,
    /// Every candidate tried, the baseline first among them.
    pub candidates: Vec<CandidateReport>,
    /// Candidates not tried, and why.
    pub untried: Vec<UntriedReport>,
    pub confirmation: Option<ConfirmationReport>,
    /// The budget and what the search used of it, in seconds.
    pub budget_s: f64,
    pub used_s: f64,
}

#[derive(Serialize)]
pub struct SearchReport {
    /// `measured` by this tune, or `recorded`: the record of an earlier
    /// search of this model with the same runtime, CPU and settings.
    pub source: &'static str,
    /// What the search took.
    pub took_s: f64,
    /// How long ago a recorded search ended.
    pub age_s: Option<f64>,
    /// Why the record of an earlier search was not used, where there was one.
    pub record_unused: Option<String>,
}

impl SearchReport {
    fn new(searched: &Searched) -> SearchReport {
        match searched {
            Searched::Now { took, record_unused } => SearchReport {
                source: "measured",
                took_s: took.as_secs_f64(),
                age_s: None,
                record_unused: record_unused.clone(),
            },
            Searched::Recorded { age, took } => SearchReport {
                source: "recorded",
                took_s: took.as_secs_f64(),
                age_s: Some(age.as_secs_f64()),
                record_unused: None,
            },
        }
    }

    /// The line above the search's table.
    fn title(&self) -> String {
        match self.age_s {
            None => "search (each candidate measured once, in turn; the baseline first):".to_string(),
            Some(age) => format!(
                "search (the record of the search {} ago with this model, runtime, CPU and settings, which took {:.0} s; its winners are run again and measured back to back below; --search-again measures every candidate anew):",
                age_text(age),
                self.took_s
            ),
        }
    }
}

/// `45 s`, `12 min`, `3 h`, `2 days`: how long ago, roughly.
fn age_text(seconds: f64) -> String {
    let seconds = seconds.max(0.0) as u64;
    match seconds {
        0..120 => format!("{seconds} s"),
        120..7_200 => format!("{} min", seconds / 60),
        7_200..172_800 => format!("{} h", seconds / 3_600),
        _ => format!("{} days", seconds / 86_400),
    }
}

#[derive(Serialize)]
pub struct Baseline {
    pub options: String,
    pub median_ms: f64,
    pub ci95_ms: Option<[f64; 2]>,
}

/// The headline: the best options and their speed-up, back to back with the
/// baseline wherever the search measured its winners again.
#[derive(Serialize)]
pub struct Best {
    pub options: String,
    /// Its median and the baseline's, measured as `source` says.
    pub median_ms: f64,
    pub baseline_ms: f64,
    /// The 95% interval of `median_ms` where that is one trial's (the search's).
    pub ci95_ms: Option<[f64; 2]>,
    pub speedup: f64,
    /// The interval of the speed-up over the rounds, and the chance that it
    /// holds the true median ratio.
    pub speedup_interval: Option<[f64; 2]>,
    pub speedup_confidence: Option<f64>,
    pub source: HeadlineSource,
    pub command: String,
}

#[derive(Serialize)]
pub struct CandidateReport {
    pub options: String,
    pub median_ms: Option<f64>,
    /// The median's 95% confidence interval (order statistics of the runs).
    pub ci95_ms: Option<[f64; 2]>,
    pub speedup: Option<f64>,
    pub err: Option<f64>,
    pub status: TrialStatus,
    /// Its interval lies wholly below the baseline's.
    pub beats_baseline: bool,
    /// Its interval lies wholly above the baseline's.
    pub slower_than_baseline: bool,
    pub reason: Option<String>,
    /// What it cost of the budget: its whole process, and within that its
    /// model's load, fast-run's profiling and its timed runs.
    pub seconds: f64,
    pub load_s: Option<f64>,
    pub profiling_s: Option<f64>,
    pub timed_s: Option<f64>,
    /// How noisy its figures were: its runs' spread (10th to 90th
    /// percentile, in percent of the median) and the CPU time other
    /// processes used meanwhile, in cores.
    pub spread_percent: Option<f64>,
    pub other_load_cores: Option<f64>,
}

#[derive(Serialize)]
pub struct UntriedReport {
    pub options: String,
    /// `budget` or `cannot_beat_the_best`.
    pub why: &'static str,
    /// About how long it would have taken.
    pub needs_s: Option<f64>,
    /// What the budget kept for measuring the winners again, when it was not tried for want of time.
    pub kept_s: Option<f64>,
    /// What it would take per run, estimated from its parts.
    pub estimate_ms: Option<f64>,
}

/// The fastest winners and the baseline measured again, back to back.
#[derive(Serialize)]
pub struct ConfirmationReport {
    pub rounds: usize,
    /// The numbers of rounds the verdicts were looked at.
    pub looks: Vec<usize>,
    /// The load other processes put on the machine during the rounds.
    pub noise: RoundsNoise,
    /// What the rounds were held on: `wall` time, or `cpu` time where the
    /// machine was loaded and every contender runs in the baseline's threads.
    pub measure: Measure,
    /// The median of the baseline's rounds.
    pub baseline_ms: f64,
    pub contenders: Vec<ContenderReport>,
    /// The contender kept as the best; `None`: none held, the baseline is kept.
    pub kept: Option<String>,
}

#[derive(Serialize)]
pub struct ContenderReport {
    pub options: String,
    /// The median of its rounds.
    pub median_ms: f64,
    /// The median of the rounds' ratios, the baseline's time over its own.
    pub speedup: f64,
    pub speedup_interval: Option<[f64; 2]>,
    pub speedup_confidence: f64,
    /// Its time over the baseline's: `faster`, `slower`, `same` or `undecided`.
    pub speed: Speed,
    /// Why it is `undecided`.
    pub reason: Option<String>,
    /// Its verdict is `faster`: a winner.
    pub held: bool,
}

impl TuneReport {
    /// `baseline` is the `mge run` command line without the winner's options.
    pub fn new(tuning: &Tuning, baseline: &MgeCommand) -> TuneReport {
        let base = tuning.baseline_measured();
        let headline = tuning.headline();
        let mut candidates: Vec<CandidateReport> = std::iter::once(&tuning.baseline)
            .chain(&tuning.rows)
            .map(|row| CandidateReport::new(row, base))
            .collect();
        // Measured and safe first, fastest first; then the rest in the order tried.
        candidates.sort_by(|a, b| {
            let key = |c: &CandidateReport| (c.status != TrialStatus::Ok, c.median_ms.unwrap_or(f64::INFINITY));
            let (a, b) = (key(a), key(b));
            a.0.cmp(&b.0).then(a.1.total_cmp(&b.1))
        });
        TuneReport {
            baseline: Baseline {
                options: tuning.baseline.candidate.to_string(),
                median_ms: base.median_ms,
                ci95_ms: base.interval_ms,
            },
            best: Best {
                options: headline.row.candidate.to_string(),
                median_ms: headline.best_ms,
                baseline_ms: headline.baseline_ms,
                ci95_ms: match headline.source {
                    HeadlineSource::NoWinner | HeadlineSource::Unconfirmed => {
                        headline.row.safe().and_then(|best| best.interval_ms)
                    }
                    HeadlineSource::BackToBack | HeadlineSource::NoneFaster => None,
                },
                speedup: headline.ratio(),
                speedup_interval: headline.speedup.and_then(|speedup| speedup.interval),
                speedup_confidence: headline.speedup.map(|speedup| speedup.confidence),
                source: headline.source,
                command: baseline.clone().engine(&headline.row.candidate.0).shell_line(),
            },
            search: SearchReport::new(&tuning.searched),
            candidates,
            untried: tuning.untried.iter().map(UntriedReport::new).collect(),
            confirmation: tuning
                .confirmation
                .as_ref()
                .map(|again| ConfirmationReport::new(again, tuning)),
            budget_s: tuning.budget.as_secs_f64(),
            used_s: tuning.used.as_secs_f64(),
        }
    }
}

impl Report for TuneReport {
    fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(why) = &self.search.record_unused {
            let _ = writeln!(out, "the record of the last search of this model was not used: {why}");
        }
        let _ = writeln!(out, "{}", self.search.title());
        out += &self.candidates_table();
        if let Some(noise) = self.search_noise() {
            let _ = writeln!(out, "{noise}");
        }
        for untried in &self.untried {
            let _ = writeln!(out, "not tried: {}: {}", untried.options, untried.why_text());
        }
        let _ = writeln!(out, "budget: {:.0} s of {:.0} s used", self.used_s, self.budget_s);
        if let Some(again) = &self.confirmation {
            out += &again.lines();
        }
        let _ = writeln!(out, "{}", self.best.headline());
        let _ = writeln!(out, "{}", self.best.command);
        out
    }
}

impl TuneReport {
    /// The candidates tried, a row each, the baseline first.
    fn candidates_table(&self) -> String {
        let mut table = Table::new(
            &[
                "options",
                "median ms",
                "95% interval",
                "speed-up",
                "err",
                "took s (load + profiling + timed)",
                "noise (spread, load)",
                "status",
            ],
            &[1, 3, 4, 5],
        );
        for candidate in &self.candidates {
            table.row(vec![
                candidate.options.clone(),
                candidate.median_ms.map_or("-".into(), |ms| format!("{ms:.3}")),
                candidate
                    .ci95_ms
                    .map_or("-".into(), |[low, high]| format!("{low:.3} - {high:.3}")),
                candidate.speedup.map_or("-".into(), |x| format!("{x:.2}x")),
                candidate.err.map_or("-".into(), number),
                candidate.took(),
                candidate.noise(),
                candidate.status_text(&self.baseline.options),
            ]);
        }
        table.render("")
    }
}

impl CandidateReport {
    /// `ok, faster`, `rejected: REASON`: how its trial ended and, where it
    /// ran and is not the baseline, how its interval lies beside the baseline's.
    fn status_text(&self, baseline_options: &str) -> String {
        let mut status = status_word(self.status).to_string();
        if self.status == TrialStatus::Ok && self.options != baseline_options {
            status += match (self.beats_baseline, self.slower_than_baseline) {
                (true, _) => ", faster",
                (false, true) => ", slower",
                (false, false) => ", within the noise",
            };
        }
        if let Some(reason) = &self.reason {
            let _ = write!(status, ": {reason}");
        }
        status
    }
}

impl UntriedReport {
    /// Why it was not tried, in words.
    fn why_text(&self) -> String {
        match (self.needs_s, self.estimate_ms) {
            (Some(needs), _) => format!(
                "needs about {needs:.0} s, more than the budget had left beside the {:.0} s kept for measuring the winners again",
                self.kept_s.unwrap_or_default()
            ),
            (_, Some(estimate)) => format!("cannot beat the best: about {estimate:.3} ms from its parts"),
            _ => self.why.to_string(),
        }
    }
}

impl ConfirmationReport {
    /// The rounds back to back: a line for them and the baseline, one for
    /// each contender and its verdict, and one where none held.
    fn lines(&self) -> String {
        let mut out = String::new();
        let looks: Vec<String> = self.looks.iter().map(usize::to_string).collect();
        let load = self.noise.other_load_cores.map_or(String::new(), |load| {
            format!("; other processes used {load:.2} of {} cores", self.noise.cores)
        });
        let _ = writeln!(
            out,
            "measured again, back to back ({} rounds on {}, looked at {}{load}): the baseline at {:.3} ms",
            self.rounds,
            self.measure.said(),
            looks.join(", "),
            self.baseline_ms
        );
        for contender in &self.contenders {
            let verdict = match (contender.speed, self.kept.as_ref() == Some(&contender.options)) {
                (Speed::Faster, true) => "faster: the best".to_string(),
                (Speed::Undecided, _) => format!("undecided: {}", contender.reason.as_deref().unwrap_or("")),
                (speed, _) => speed.word().to_string(),
            };
            let _ = writeln!(
                out,
                "  {}: {:.3} ms, {} ({verdict})",
                contender.options,
                contender.median_ms,
                speedup_text(contender.speedup, contender.speedup_interval)
            );
        }
        if self.kept.is_none() {
            let _ = writeln!(out, "  no decided winner: the baseline is kept");
        }
        out
    }
}

impl Best {
    /// The last line but the command: the best and its speed-up, saying how they were measured.
    fn headline(&self) -> String {
        let rounds = |confidence: Option<f64>| match (self.speedup_interval, confidence) {
            (Some([low, high]), Some(confidence)) => format!(
                "; per round {low:.2}x to {high:.2}x, a {:.0}% interval of the median",
                confidence * 100.0
            ),
            _ => String::new(),
        };
        match self.source {
            HeadlineSource::BackToBack => format!(
                "best: {} at {:.3} ms, {} the baseline's {:.3} ms, back to back{}",
                self.options,
                self.median_ms,
                speedup_text(self.speedup, None),
                self.baseline_ms,
                rounds(self.speedup_confidence)
            ),
            HeadlineSource::NoneFaster => format!(
                "best: the baseline, at {:.3} ms back to back: no candidate was decidedly faster",
                self.baseline_ms
            ),
            HeadlineSource::NoWinner => format!(
                "best: the baseline, at {:.3} ms: no candidate beat it beyond the noise",
                self.baseline_ms
            ),
            HeadlineSource::Unconfirmed => format!(
                "best: the baseline, at {:.3} ms: the budget left no time to measure the search's winners again, back to back, so none is confirmed",
                self.baseline_ms
            ),
        }
    }
}

/// `1.42x`, with its interval where it has one: `1.42x [1.38x - 1.47x]`.
fn speedup_text(speedup: f64, interval: Option<[f64; 2]>) -> String {
    match interval {
        Some([low, high]) => format!("{speedup:.2}x [{low:.2}x - {high:.2}x]"),
        None => format!("{speedup:.2}x"),
    }
}

impl CandidateReport {
    fn new(row: &Row, baseline: &Measured) -> CandidateReport {
        let measured = row.measured.as_ref();
        CandidateReport {
            options: row.candidate.to_string(),
            median_ms: measured.map(|m| m.median_ms),
            ci95_ms: measured.and_then(|m| m.interval_ms),
            speedup: measured.map(|m| baseline.median_ms / m.median_ms),
            err: row.err,
            status: row.status,
            beats_baseline: row.safe().is_some_and(|m| m.beats(baseline)),
            slower_than_baseline: row.safe().is_some_and(|m| baseline.beats(m)),
            reason: row.reason.clone(),
            seconds: row.took.as_secs_f64(),
            load_s: measured.map(|m| m.load.as_secs_f64()),
            profiling_s: measured
                .and_then(|m| m.profiling)
                .map(|profiling| profiling.as_secs_f64()),
            timed_s: measured.map(|m| m.timing.as_secs_f64()),
            spread_percent: measured.and_then(|m| m.spread_percent),
            other_load_cores: measured.and_then(|m| m.other_load_cores),
        }
    }

    /// `4%, 0.10`: its runs' spread and the load meanwhile.
    fn noise(&self) -> String {
        match (self.spread_percent, self.other_load_cores) {
            (Some(spread), Some(load)) => format!("{spread:.0}%, {load:.2}"),
            (Some(spread), None) => format!("{spread:.0}%"),
            (None, Some(load)) => format!("-, {load:.2}"),
            (None, None) => "-".to_string(),
        }
    }
}

impl TuneReport {
    /// How noisy the search's figures were, in one line: the spreads and loads of its trials.
    fn search_noise(&self) -> Option<String> {
        let range = |values: Vec<f64>| {
            let low = values.iter().copied().reduce(f64::min)?;
            let high = values.iter().copied().reduce(f64::max)?;
            Some((low, high))
        };
        let spreads = range(self.candidates.iter().filter_map(|c| c.spread_percent).collect());
        let (low, high) = range(self.candidates.iter().filter_map(|c| c.other_load_cores).collect())?;
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let mut line = format!("noise: other processes used {low:.2} to {high:.2} of {cores} cores during the trials");
        if let Some((least, most)) = spreads {
            let _ = write!(
                line,
                "; runs spread {least:.0}% to {most:.0}% of their median (10th to 90th percentile)"
            );
        }
        if high >= cores as f64 / 4.0 {
            line.push_str(": the search's figures are noisy, only the back-to-back rounds decide");
        }
        Some(line)
    }
}

impl CandidateReport {
    /// Its whole time, and where it went where it was measured.
    fn took(&self) -> String {
        let (Some(load), Some(timed)) = (self.load_s, self.timed_s) else {
            return format!("{:.1}", self.seconds);
        };
        match self.profiling_s {
            Some(profiling) => format!("{:.1} ({load:.1} + {profiling:.1} + {timed:.1})", self.seconds),
            None => format!("{:.1} ({load:.1} + {timed:.1})", self.seconds),
        }
    }
}

impl ConfirmationReport {
    fn new(again: &Confirmation, tuning: &Tuning) -> ConfirmationReport {
        let options = |contender: &Contender| tuning.rows[contender.row].candidate.to_string();
        ConfirmationReport {
            rounds: again.baseline.len(),
            looks: again.looked.clone(),
            noise: again.noise,
            measure: again.measure,
            baseline_ms: again.baseline_ms(),
            contenders: again
                .contenders
                .iter()
                .map(|contender| {
                    let Ratio {
                        estimate,
                        interval,
                        confidence,
                    } = contender.speedup();
                    ContenderReport {
                        options: options(contender),
                        median_ms: contender.median_ms(),
                        speedup: estimate,
                        speedup_interval: interval,
                        speedup_confidence: confidence,
                        speed: contender.verdict.speed,
                        reason: contender.verdict.reason.clone(),
                        held: contender.held(),
                    }
                })
                .collect(),
            kept: again.kept.map(|at| options(&again.contenders[at])),
        }
    }
}

impl UntriedReport {
    fn new(untried: &crate::tune::Untried) -> UntriedReport {
        let (why, needs_s, kept_s, estimate_ms) = match untried.why {
            Skipped::Budget { needs, kept } => ("budget", Some(needs.as_secs_f64()), Some(kept.as_secs_f64()), None),
            Skipped::CannotBeatTheBest { estimate_ms } => ("cannot_beat_the_best", None, None, Some(estimate_ms)),
        };
        UntriedReport {
            options: untried.candidate.to_string(),
            why,
            needs_s,
            kept_s,
            estimate_ms,
        }
    }
}

fn status_word(status: TrialStatus) -> &'static str {
    match status {
        TrialStatus::Ok => "ok",
        TrialStatus::Rejected => "rejected",
        TrialStatus::Crashed => "crashed",
        TrialStatus::Failed => "failed",
        TrialStatus::TimedOut => "timed out",
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::tune::scripted::{record_of, search, search_from, Outcome, Scripted};

    fn report(machine: &mut Scripted) -> (TuneReport, serde_json::Value, String) {
        let tuning = search(machine, &[], 300);
        let report = TuneReport::new(&tuning, &MgeCommand::run(Path::new("m.mge")));
        let json = serde_json::to_value(&report).unwrap();
        let text = report.to_text();
        (report, json, text)
    }

    /// As on a 16-core Xeon: the baseline measured first and alone
    /// took 31.087 ms, back to back with the winner about 20.445 ms; the
    /// winner 15 ms alone, 14.4 ms back to back. The headline is 1.42x, not
    /// the search's 2.07x, in text and JSON alike.
    #[test]
    fn the_headline_is_the_back_to_back_figure() {
        let mut machine = Scripted::new(1, |options, before| {
            let fast_run = options.iter().any(|option| option == "--fast-run");
            Outcome::Runs(match (options.is_empty(), fast_run, before) {
                // The calibration and the search's trial, then one per round.
                (true, _, 0 | 1) => 31.087,
                (true, _, round) => [20.0, 20.445, 21.0][round % 3],
                (false, true, 0) => 15.0,
                (false, true, _) => 14.4,
                (false, false, _) => 31.087,
            })
        });
        let (report, json, text) = report(&mut machine);
        let again = report.confirmation.as_ref().expect("the winners were measured again");
        // Two contenders (fast-run, and fast-run with another option): looks
        // at 8, 16 and 32 rounds, each at 1 - 0.05/6. Decided at the first.
        assert_eq!((again.rounds, again.looks.clone()), (8, vec![8]));
        let kept = again
            .contenders
            .iter()
            .find(|contender| Some(&contender.options) == again.kept.as_ref())
            .expect("one was faster");
        assert_eq!(kept.speed, Speed::Faster);
        let back_to_back = 20.445 / 14.4;
        assert!((kept.speedup - back_to_back).abs() < 1e-9, "{}", kept.speedup);
        assert_eq!(json["best"]["speedup"].as_f64(), Some(kept.speedup));
        assert_eq!(json["best"]["source"], "back_to_back");
        assert_eq!(json["best"]["median_ms"].as_f64(), Some(14.4));
        assert_eq!(json["best"]["baseline_ms"].as_f64(), Some(20.445));
        assert_eq!(json["confirmation"]["contenders"][0]["speed"], "faster");
        let [low, high] = report.best.speedup_interval.expect("eight rounds give an interval");
        assert!((low - 20.0 / 14.4).abs() < 1e-9 && (high - 21.0 / 14.4).abs() < 1e-9);
        assert_eq!(report.best.speedup_confidence, Some(0.95));
        let headline = text.lines().find(|line| line.starts_with("best: ")).unwrap();
        assert!(
            headline.contains(" at 14.400 ms, 1.42x the baseline's 20.445 ms, back to back")
                && headline.ends_with("; per round 1.39x to 1.46x, a 95% interval of the median"),
            "{text}"
        );
        // The search's figures stay in the table, labelled as such, with their noise.
        assert!(text.starts_with("search (each candidate measured once"), "{text}");
        assert!(text.contains("2.07x"), "{text}");
        assert!(text.contains("noise (spread, load)"), "{text}");
        assert!(text.contains("noise: other processes used 0.00 to 0.00 of "), "{text}");
    }

    /// A search taken from a record says so above its table, and in JSON;
    /// one measured anew says why the record was not used.
    #[test]
    fn the_title_says_where_the_search_comes_from() {
        let script = |options: &[String], _: usize| {
            Outcome::Runs(if options.iter().any(|option| option == "--fast-run") {
                30.0
            } else {
                60.0
            })
        };
        let cold = search(&mut Scripted::new(1, script), &[], 300);
        let warm = search_from(&mut Scripted::new(1, script), &[], 300, Some(record_of(&cold, &[])));
        let report = TuneReport::new(&warm, &MgeCommand::run(Path::new("m.mge")));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["search"]["source"], "recorded");
        assert_eq!(json["search"]["age_s"].as_f64(), Some(0.0));
        let took = json["search"]["took_s"].as_f64().unwrap();
        assert!(
            report.to_text().starts_with(&format!(
                "search (the record of the search 0 s ago with this model, runtime, CPU and settings, which took {took:.0} s; its winners are run again and measured back to back below; --search-again measures every candidate anew):\n"
            )),
            "{}",
            report.to_text()
        );

        let slower = move |options: &[String], before: usize| match options.is_empty() {
            true => Outcome::Runs(90.0),
            false => script(options, before),
        };
        let anew = search_from(&mut Scripted::new(1, slower), &[], 300, Some(record_of(&cold, &[])));
        let text = TuneReport::new(&anew, &MgeCommand::run(Path::new("m.mge"))).to_text();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("the record of the last search of this model was not used: the baseline now takes 90.000 ms, 1.50x the 60.000 ms it took then (beyond 1.2x: the machine, its load or the feeds changed)")
        );
        assert_eq!(
            lines.next(),
            Some("search (each candidate measured once, in turn; the baseline first):")
        );
    }

    /// A winner of the search that does not hold back to back leaves the
    /// baseline as the best, at 1x, and the headline says so.
    #[test]
    fn a_headline_without_a_contender_that_held_is_the_baseline() {
        let mut machine = Scripted::new(1, |options, before| {
            let rcs = options.iter().any(|option| option == "--record-comp-seq");
            Outcome::Runs(if rcs && before == 0 { 50.0 } else { 63.3 })
        });
        let (report, json, text) = report(&mut machine);
        assert_eq!(json["best"]["source"], "none_faster");
        assert_eq!(json["best"]["options"], "(baseline)");
        assert_eq!(report.best.speedup, 1.0);
        assert!(
            text.contains("best: the baseline, at 63.300 ms back to back: no candidate was decidedly faster"),
            "{text}"
        );
        assert!(text.contains("  no decided winner: the baseline is kept"), "{text}");
    }
}
