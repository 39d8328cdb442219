//! `compare --by-op`: where the time went. Both sides profiled by the
//! engine's graph profiler (`mge profile`, each side a fresh process per
//! round), in rounds of their own that take turns as the timed rounds do (A
//! B, B A, ...: `runner::rounds::back_to_back`) and come after them, so that
//! the profiler's cost never reaches the timing's verdict.
//!
//! Each round's operators are matched across the sides: by name (the
//! engine's, without the `[id]` it appends, which an operator more shifts),
//! one operator of the type on each side; then by type and input shapes, in
//! execution order (the engine's ids count operators as it creates them).
//! An operator's time in a round is its mean per profiled run; over the
//! rounds, each side's median, and B/A is the median of the rounds' ratios
//! with the order statistics around it (`runner::timing::median_interval_at`).
//! Those intervals hold together for all the operators judged (Bonferroni:
//! each leaves out 5% / their count), and the rounds are as many as that
//! needs: an operator cannot be called slower because one of many intervals
//! missed. Operators under 1% of a side's operator time are listed, not judged.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;

use super::two_runs::TwoRuns;
use crate::mge_command::MgeCommand;
use crate::report::by_op::{ByOp, ByOpTotals, OperatorChange};
use crate::runner::rounds::{back_to_back, Lineup, Measured};
use crate::runner::sequential::Speed;
use crate::runner::timing::{median, median_interval_at, Timing};
use crate::supervise::child_run::{run_child, Watch};
use crate::supervise::parent::Outcome;
use crate::supervise::Scratch;

/// Untimed runs before the profiled ones in each child.
const WARMUP: usize = 2;
/// Profiled runs in each child: up to this many, or this long.
const PROFILED_RUNS: u64 = 20;
const PROFILED_TIME: Duration = Duration::from_millis(500);
/// Operators below this share of both sides' operator time are not judged:
/// the profiler's own cost and the timer's grain are most of what they take.
const SHORTEST_SHARE: f64 = 0.01;
/// The chance that the judged operators' intervals hold all together.
const CONFIDENCE: f64 = 0.95;
/// Every operator's row in a child's report.
const ALL_ROWS: usize = 1_000_000;

/// One operator's row of `mge profile --json --by opr`.
#[derive(Clone, Debug, Deserialize)]
struct Row {
    id: Option<u64>,
    name: String,
    #[serde(rename = "type")]
    op_type: String,
    time_ms: f64,
    in_shapes: Option<Vec<Vec<usize>>>,
}

/// What `mge profile --json` reports that this reads.
#[derive(Deserialize)]
struct ProfiledRun {
    rows: Vec<Row>,
    iteration_ms: Timing,
}

/// Both sides profiled on `models` in at least `rounds` rounds; the `top`
/// operators whose time changed most, against the timed rounds' difference
/// (`timed_difference_ms`), each judged against ±`min_effect_percent` as
/// the pair is. Or the one line that says which side failed.
pub fn attribute(
    two: &TwoRuns,
    models: [&Path; 2],
    rounds: usize,
    top: usize,
    timed_difference_ms: Option<f64>,
    min_effect_percent: f64,
) -> Result<std::result::Result<ByOp, String>> {
    // The traces each child writes: removed with the scratch folder.
    let scratch = Scratch::new()?;
    let mut pair = ProfiledPair {
        commands: [0, 1].map(|at| {
            let trace = scratch.path().join(format!("{}.trace.json", two.runs[at].name));
            two.command(at, MgeCommand::profile_operators(models[at], &trace, ALL_ROWS))
                .no_testcase()
                .verbose(false)
                .runs(WARMUP, PROFILED_RUNS)
                .seconds("--max-duration", Some(PROFILED_TIME))
        }),
        what: [0, 1].map(|at| format!("run {} ({})", two.runs[at].name, two.side(at, models[at]).describe())),
        timeout: two.timeout,
        failure: None,
        profiles: [Vec::new(), Vec::new()],
        least: rounds,
    };
    back_to_back(&mut pair, usize::MAX, |_| false)?;
    if let Some(failure) = pair.failure {
        return Ok(Err(failure));
    }
    let count = pair.profiles[0].len().min(pair.profiles[1].len());
    let judging = Judging {
        top,
        timed_difference_ms,
        min_effect_percent,
    };
    Ok(Ok(summarize(&pair.profiles, count, &judging)))
}

/// The two sides' profiled children, and what each round gave.
struct ProfiledPair {
    commands: [MgeCommand; 2],
    what: [String; 2],
    timeout: Option<Duration>,
    failure: Option<String>,
    /// Per side, per round: its operators.
    profiles: [Vec<Vec<Row>>; 2],
    /// Rounds at the least (the timed rounds').
    least: usize,
}

impl Lineup for ProfiledPair {
    fn contenders(&self) -> usize {
        2
    }

    /// As many rounds as the timed ones, and as the intervals of the
    /// operators any round so far found worth judging need: on a loaded
    /// machine a later round may find more than the first, and the rounds
    /// must hold their intervals together.
    fn room_for_a_round(&mut self) -> bool {
        let done = self.profiles[0].len().min(self.profiles[1].len());
        done < rounds_needed(&self.profiles, self.least)
    }

    fn measure(&mut self, at: usize) -> Result<Option<Measured>> {
        let ran = run_child(&self.commands[at], Watch::reporting(self.timeout, false))?;
        if !matches!(ran.outcome, Outcome::Ran) {
            self.failure = Some(format!("{}, profiled: {}", self.what[at], ran.outcome));
            return Ok(None);
        }
        let run: ProfiledRun = serde_json::from_str(&ran.report)
            .context("the profile's JSON report has no rows as `mge profile --json` writes them")?;
        self.profiles[at].push(run.rows);
        Ok(Some(Measured::of(&run.iteration_ms)))
    }
}

/// The rounds the profiles so far need: at least `least`, and as many as
/// the most operators any one round found worth judging need.
fn rounds_needed(profiles: &[Vec<Vec<Row>>; 2], least: usize) -> usize {
    profiles[0]
        .iter()
        .zip(&profiles[1])
        .map(|(a, b)| rounds_for(judged(a, b)))
        .fold(least, usize::max)
}

/// The rounds whose order statistics can hold `judged` intervals together
/// with `CONFIDENCE`: the extreme ratios leave out 2^(1-n) of the median.
fn rounds_for(judged: usize) -> usize {
    let tail = (1.0 - CONFIDENCE) / 2.0 / judged.max(1) as f64;
    (1.0 / tail).log2().ceil() as usize
}

/// How many of the operators matched in one round are worth judging.
fn judged(a: &[Row], b: &[Row]) -> usize {
    let (total_a, total_b) = (total(a), total(b));
    match_rows(a, b)
        .0
        .iter()
        .filter(|&&(x, y)| a[x].time_ms >= SHORTEST_SHARE * total_a || b[y].time_ms >= SHORTEST_SHARE * total_b)
        .count()
}

fn total(rows: &[Row]) -> f64 {
    rows.iter().map(|row| row.time_ms).sum()
}

/// The engine's name for an operator without the numbers in brackets it
/// puts in (`conv(RELU[1],conv3.weight)[21]`: a var's counter, the
/// operator's id), which an operator more shifts.
fn base_name(name: &str) -> String {
    let mut base = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(open) = rest.find('[') {
        let (before, after) = rest.split_at(open);
        base.push_str(before);
        match after[1..].find(']') {
            Some(close) if close > 0 && after[1..1 + close].bytes().all(|b| b.is_ascii_digit()) => {
                rest = &after[close + 2..];
            }
            _ => {
                base.push('[');
                rest = &after[1..];
            }
        }
    }
    base.push_str(rest);
    base
}

/// One round's operators matched (A's index, B's), and those of each side alone.
fn match_rows(a: &[Row], b: &[Row]) -> (Vec<(usize, usize)>, Vec<usize>, Vec<usize>) {
    let by_id = |rows: &[Row]| {
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&at| (rows[at].id.unwrap_or(u64::MAX), at));
        order
    };
    let (order_a, order_b) = (by_id(a), by_id(b));
    let mut partner_a: HashMap<usize, usize> = HashMap::new();
    let mut partner_b: HashMap<usize, usize> = HashMap::new();
    // By name: one operator of the type so named on each side.
    let key = |row: &Row| (base_name(&row.name), row.op_type.clone());
    let mut names: BTreeMap<(String, String), [Vec<usize>; 2]> = BTreeMap::new();
    for (side, rows) in [a, b].into_iter().enumerate() {
        for (at, row) in rows.iter().enumerate() {
            names.entry(key(row)).or_default()[side].push(at);
        }
    }
    for [mine, theirs] in names.values() {
        if let ([x], [y]) = (mine.as_slice(), theirs.as_slice()) {
            partner_a.insert(*x, *y);
            partner_b.insert(*y, *x);
        }
    }
    // By type and input shapes, in execution order.
    for &y in &order_b {
        if partner_b.contains_key(&y) {
            continue;
        }
        let found = order_a
            .iter()
            .copied()
            .find(|x| !partner_a.contains_key(x) && a[*x].op_type == b[y].op_type && a[*x].in_shapes == b[y].in_shapes);
        if let Some(x) = found {
            partner_a.insert(x, y);
            partner_b.insert(y, x);
        }
    }
    let mut pairs: Vec<(usize, usize)> = partner_a.into_iter().collect();
    pairs.sort_unstable();
    let only_a = order_a
        .into_iter()
        .filter(|at| !pairs.iter().any(|p| p.0 == *at))
        .collect();
    let only_b = order_b.into_iter().filter(|at| !partner_b.contains_key(at)).collect();
    (pairs, only_a, only_b)
}

/// One operator's times over the rounds: on both sides, or one.
#[derive(Default)]
struct Series {
    op_type: String,
    a: Vec<f64>,
    b: Vec<f64>,
    ratios: Vec<f64>,
}

/// What the profiled rounds are summed up against.
struct Judging {
    /// The matched operators listed, and as many of each side's alone.
    top: usize,
    /// B's median less A's in the timed rounds.
    timed_difference_ms: Option<f64>,
    /// ±min-effect of each operator's verdict, in percent (the pair's).
    min_effect_percent: f64,
}

/// Every round's operators matched, each operator's times gathered by its
/// names (A's, B's), and the rows of those that changed most.
fn summarize(profiles: &[Vec<Vec<Row>>; 2], rounds: usize, judging: &Judging) -> ByOp {
    let mut series: BTreeMap<(Option<String>, Option<String>), Series> = BTreeMap::new();
    let mut totals = [Vec::new(), Vec::new()];
    for (a, b) in profiles[0].iter().zip(&profiles[1]).take(rounds) {
        totals[0].push(total(a));
        totals[1].push(total(b));
        let (pairs, only_a, only_b) = match_rows(a, b);
        let mut add = |name_a: Option<&Row>, name_b: Option<&Row>| {
            let key = (name_a.map(|row| row.name.clone()), name_b.map(|row| row.name.clone()));
            let entry = series.entry(key).or_default();
            entry
                .op_type
                .clone_from(&name_b.or(name_a).expect("a row on one side").op_type);
            entry.a.extend(name_a.map(|row| row.time_ms));
            entry.b.extend(name_b.map(|row| row.time_ms));
            if let (Some(x), Some(y)) = (name_a, name_b) {
                if x.time_ms > 0.0 {
                    entry.ratios.push(y.time_ms / x.time_ms);
                }
            }
        };
        pairs.iter().for_each(|&(x, y)| add(Some(&a[x]), Some(&b[y])));
        only_a.iter().for_each(|&x| add(Some(&a[x]), None));
        only_b.iter().for_each(|&y| add(None, Some(&b[y])));
    }
    let (total_a, total_b) = (median(&totals[0]), median(&totals[1]));
    let worth = |series: &Series| {
        let side = |times: &[f64], total: f64| !times.is_empty() && median(times) >= SHORTEST_SHARE * total;
        !series.ratios.is_empty() && (side(&series.a, total_a) || side(&series.b, total_b))
    };
    let judged = series.values().filter(|series| worth(series)).count();
    let tail = (1.0 - CONFIDENCE) / 2.0 / judged.max(1) as f64;
    let difference = total_b - total_a;
    let mut rows: Vec<OperatorChange> = series
        .into_iter()
        .map(|((a_name, b_name), series)| {
            let tail = worth(&series).then_some(tail);
            row_of(a_name, b_name, &series, tail, difference, judging.min_effect_percent)
        })
        .collect();
    rows.sort_by(|x, y| y.change_ms().abs().total_cmp(&x.change_ms().abs()));
    let count = |one_sided: fn(&OperatorChange) -> bool| rows.iter().filter(|row| one_sided(row)).count();
    let by_op_totals = ByOpTotals {
        rounds,
        a_ms: total_a,
        b_ms: total_b,
        difference_ms: difference,
        timed_difference_ms: judging.timed_difference_ms,
        matched: count(|row| row.a_name.is_some() && row.b_name.is_some()),
        only_a: count(|row| row.b_name.is_none()),
        only_b: count(|row| row.a_name.is_none()),
        judged,
        confidence: CONFIDENCE,
        min_effect_pct: judging.min_effect_percent,
    };
    ByOp {
        by_op: listed(rows, judging.top),
        by_op_totals,
    }
}

/// The `top` matched operators that changed most and the `top` one-sided
/// ones that take most, largest change first.
fn listed(rows: Vec<OperatorChange>, top: usize) -> Vec<OperatorChange> {
    let (matched, one_sided): (Vec<_>, Vec<_>) = rows
        .into_iter()
        .partition(|row| row.a_name.is_some() && row.b_name.is_some());
    let mut listed: Vec<OperatorChange> = matched
        .into_iter()
        .take(top)
        .chain(one_sided.into_iter().take(top))
        .collect();
    listed.sort_by(|x, y| y.change_ms().abs().total_cmp(&x.change_ms().abs()));
    listed
}

/// An operator's row: its medians, B/A with its interval at `tail` (where
/// judged) and what that says against ±`min_effect_percent`.
fn row_of(
    a_name: Option<String>,
    b_name: Option<String>,
    series: &Series,
    tail: Option<f64>,
    difference: f64,
    min_effect_percent: f64,
) -> OperatorChange {
    let ms = |times: &[f64]| (!times.is_empty()).then(|| median(times));
    let ratio = (!series.ratios.is_empty()).then(|| median(&series.ratios));
    let interval = tail
        .and_then(|tail| median_interval_at(&series.ratios, 1.0 - 2.0 * tail))
        .map(|(low, high)| [low, high]);
    let mut row = OperatorChange {
        a_name,
        b_name,
        op_type: series.op_type.clone(),
        a_ms: ms(&series.a),
        b_ms: ms(&series.b),
        ratio,
        ci95: interval,
        speed: Speed::of(interval, min_effect_percent),
        share: None,
    };
    row.share = (difference != 0.0).then(|| 100.0 * row.change_ms() / difference);
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: u64, name: &str, op_type: &str, ms: f64, shapes: &[&[usize]]) -> Row {
        Row {
            id: Some(id),
            name: name.into(),
            op_type: op_type.into(),
            time_ms: ms,
            in_shapes: Some(shapes.iter().map(|shape| shape.to_vec()).collect()),
        }
    }

    /// An operator more in B shifts the counters and ids in the engine's
    /// names after it: names match without them, the rest by type and shapes.
    #[test]
    fn operators_match_by_name_then_by_type_and_shapes() {
        let a = [
            row(
                8,
                "conv(data,w1)[8]",
                "ConvolutionForward",
                1.0,
                &[&[1, 3, 8, 8], &[4, 3, 3, 3]],
            ),
            row(12, "relu(x)[12]", "Elemwise", 0.1, &[&[1, 4, 8, 8]]),
            row(
                17,
                "conv(RELU[0],w3)[17]",
                "ConvolutionForward",
                1.0,
                &[&[1, 4, 8, 8], &[4, 4, 3, 3]],
            ),
        ];
        let b = [
            row(
                8,
                "conv(data,w1)[8]",
                "ConvolutionForward",
                1.0,
                &[&[1, 3, 8, 8], &[4, 3, 3, 3]],
            ),
            row(12, "relu(x)[12]", "Elemwise", 0.1, &[&[1, 4, 8, 8]]),
            row(
                17,
                "conv(RELU[0],extra)[17]",
                "ConvolutionForward",
                1.0,
                &[&[1, 4, 8, 8], &[4, 4, 3, 3]],
            ),
            row(
                21,
                "conv(RELU[1],w3)[21]",
                "ConvolutionForward",
                1.0,
                &[&[1, 4, 8, 8], &[4, 4, 3, 3]],
            ),
        ];
        let (pairs, only_a, only_b) = match_rows(&a, &b);
        assert_eq!(pairs, [(0, 0), (1, 1), (2, 3)]);
        assert!(only_a.is_empty());
        assert_eq!(only_b, [2]);
        assert_eq!(base_name("conv(RELU[1],w3)[21]"), "conv(RELU,w3)");
        assert_eq!(base_name("RELU[x]"), "RELU[x]");
        assert_eq!(base_name("a[]b[7"), "a[]b[7");
        // Without names that tell them apart, shapes pair them in order.
        let unnamed = |rows: &[Row]| -> Vec<Row> {
            rows.iter()
                .map(|row| Row {
                    name: format!("op[{}]", row.id.unwrap()),
                    ..row.clone()
                })
                .collect()
        };
        let (pairs, _, only_b) = match_rows(&unnamed(&a), &unnamed(&b));
        assert_eq!(pairs, [(0, 0), (1, 1), (2, 2)]);
        assert_eq!(only_b, [3]);
    }

    /// A later round that finds more operators worth judging than the first
    /// (a loaded machine shifts the shares) asks for the rounds they need.
    #[test]
    fn rounds_follow_the_round_that_judges_most() {
        let conv = |id: u64, ms: f64| {
            row(
                id,
                &format!("conv{id}(x)[{id}]"),
                "ConvolutionForward",
                ms,
                &[&[1, 4, 8, 8]],
            )
        };
        let one_worth = vec![
            conv(1, 100.0),
            conv(2, 0.1),
            conv(3, 0.1),
            conv(4, 0.1),
            conv(5, 0.1),
            conv(6, 0.1),
        ];
        let six_worth: Vec<Row> = (1..=6).map(|id| conv(id, 1.0)).collect();
        let profiles = |rounds: &[&Vec<Row>]| -> [Vec<Vec<Row>>; 2] {
            let side: Vec<Vec<Row>> = rounds.iter().map(|rows| rows.to_vec()).collect();
            [side.clone(), side]
        };
        assert_eq!(rounds_needed(&profiles(&[]), 6), 6);
        assert_eq!(rounds_needed(&profiles(&[&one_worth]), 6), rounds_for(1).max(6));
        assert_eq!(rounds_needed(&profiles(&[&one_worth, &six_worth]), 6), rounds_for(6));
        assert!(rounds_for(6) > 6);
    }

    /// Rounds enough that the extreme ratios hold every judged operator's median together.
    #[test]
    fn rounds_grow_with_the_operators_judged() {
        assert_eq!(rounds_for(1), 6);
        assert_eq!(rounds_for(6), 8);
        assert_eq!(rounds_for(160), 13);
    }
}
