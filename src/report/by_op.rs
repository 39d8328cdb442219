//! `compare --by-op`: where the time went, operator by operator. The rows
//! (`timing.by_op` in JSON), their totals against the timed runs' difference,
//! and the table.

use std::fmt::Write;

use serde::Serialize;

use super::table::Table;
use crate::runner::sequential::Speed;
use crate::text::printable;

/// What `--by-op` adds to a pair's timing.
#[derive(Debug, Serialize)]
pub struct ByOp {
    /// The operators whose time changed most, matched ones and those on one
    /// side only, largest change first.
    pub by_op: Vec<OperatorChange>,
    pub by_op_totals: ByOpTotals,
}

/// One operator on both sides, or on one (the other's name null).
#[derive(Clone, Debug, Serialize)]
pub struct OperatorChange {
    pub a_name: Option<String>,
    pub b_name: Option<String>,
    #[serde(rename = "type")]
    pub op_type: String,
    /// The median over the profiled rounds of its time per run, on each side it runs on.
    pub a_ms: Option<f64>,
    pub b_ms: Option<f64>,
    /// B/A: the median of the rounds' ratios, and its interval (see `ByOpTotals::confidence`).
    pub ratio: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    /// B against A as the pair's timing is judged, against
    /// `ByOpTotals::min_effect_pct`; `undecided` too where the operator is
    /// too short a part of the run to be judged, or runs on one side only.
    pub speed: Speed,
    /// `b_ms - a_ms` (a side it does not run on counts 0), in percent of the
    /// operators' whole difference.
    pub share: Option<f64>,
}

impl OperatorChange {
    /// B's time less A's; a side it does not run on counts 0.
    pub fn change_ms(&self) -> f64 {
        self.b_ms.unwrap_or(0.0) - self.a_ms.unwrap_or(0.0)
    }
}

#[derive(Debug, Serialize)]
pub struct ByOpTotals {
    /// Rounds of profiled runs, each side a fresh process per round, apart from the timed rounds.
    pub rounds: usize,
    /// The median over the rounds of the sum of each side's operator times per run.
    pub a_ms: f64,
    pub b_ms: f64,
    /// `b_ms - a_ms`: what the operators account for.
    pub difference_ms: f64,
    /// B's median less A's in the timed rounds: the whole difference.
    pub timed_difference_ms: Option<f64>,
    pub matched: usize,
    pub only_a: usize,
    pub only_b: usize,
    /// Matched operators judged (each at least `SHORTEST_SHARE` of a side's time).
    pub judged: usize,
    /// The intervals of the judged operators hold all together with this chance.
    pub confidence: f64,
    /// The pair's `--min-effect`.
    pub min_effect_pct: f64,
}

/// The lines of `--by-op` after a pair's timing.
pub fn by_op_text(by_op: &ByOp) -> String {
    let totals = &by_op.by_op_totals;
    let mut out = format!(
        "by operator  {} profiled rounds apart from the timed ones; the intervals of the {} operators judged hold together with {:.0}%\n",
        totals.rounds,
        totals.judged,
        totals.confidence * 100.0
    );
    let mut table = Table::new(
        &[
            "operator",
            "type",
            "a ms",
            "b ms",
            "b/a [interval]",
            "change ms",
            "share",
            "speed",
        ],
        &[2, 3, 5, 6],
    );
    for row in &by_op.by_op {
        let name = match (&row.a_name, &row.b_name) {
            (Some(a), Some(b)) if a == b => a.clone(),
            (Some(a), Some(b)) => format!("{a} / {b}"),
            (Some(a), None) => format!("{a} (only in a)"),
            (None, Some(b)) => format!("{b} (only in b)"),
            (None, None) => String::new(),
        };
        let ms = |value: Option<f64>| value.map_or_else(String::new, |ms| format!("{ms:.4}"));
        let ratio = match (row.ratio, row.ci95) {
            (Some(ratio), Some([low, high])) => format!("{ratio:.3} [{low:.3}, {high:.3}]"),
            (Some(ratio), None) => format!("{ratio:.3}"),
            _ => String::new(),
        };
        table.row(vec![
            name,
            row.op_type.clone(),
            ms(row.a_ms),
            ms(row.b_ms),
            ratio,
            format!("{:+.4}", row.change_ms()),
            row.share.map_or_else(String::new, |share| format!("{share:.1}%")),
            row.speed.word().to_string(),
        ]);
    }
    out.push_str(&table.render("  "));
    let _ = write!(
        out,
        "operators    a {:.4} ms, b {:.4} ms: {:+.4} ms",
        totals.a_ms, totals.b_ms, totals.difference_ms
    );
    if let Some(timed) = totals.timed_difference_ms {
        let _ = write!(out, " (the timed runs: {timed:+.4} ms)");
    }
    let _ = writeln!(
        out,
        "; {} matched, {} only in a, {} only in b",
        totals.matched, totals.only_a, totals.only_b
    );
    out
}

/// A pair's by-op lines under a heading that names the pair (two folders).
pub fn pair_by_op_text(model: &str, by_op: &ByOp) -> String {
    format!("\n{}:\n{}", printable(model), by_op_text(by_op))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(a: Option<&str>, b: Option<&str>, a_ms: Option<f64>, b_ms: Option<f64>) -> OperatorChange {
        OperatorChange {
            a_name: a.map(String::from),
            b_name: b.map(String::from),
            op_type: "ConvolutionForward".into(),
            a_ms,
            b_ms,
            ratio: a_ms.zip(b_ms).map(|(a, b)| b / a),
            ci95: a_ms.zip(b_ms).map(|_| [7.5, 8.5]),
            speed: match (a_ms, b_ms) {
                (Some(_), Some(_)) => Speed::Slower,
                _ => Speed::Undecided,
            },
            share: Some(50.0),
        }
    }

    #[test]
    fn the_table_reads_at_a_glance() {
        let by_op = ByOp {
            by_op: vec![
                change(Some("conv2"), Some("conv2"), Some(0.5), Some(4.0)),
                change(None, Some("extra"), None, Some(3.5)),
            ],
            by_op_totals: ByOpTotals {
                rounds: 8,
                a_ms: 1.0,
                b_ms: 8.0,
                difference_ms: 7.0,
                timed_difference_ms: Some(7.25),
                matched: 5,
                only_a: 0,
                only_b: 1,
                judged: 3,
                confidence: 0.95,
                min_effect_pct: 2.0,
            },
        };
        let text = by_op_text(&by_op);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("by operator  8 profiled rounds"), "{text}");
        assert!(
            lines[0].ends_with("the intervals of the 3 operators judged hold together with 95%"),
            "{text}"
        );
        assert!(lines[1].starts_with("  operator"), "{text}");
        assert!(
            lines[2].contains("conv2") && lines[2].contains("8.000 [7.500, 8.500]"),
            "{text}"
        );
        assert!(
            lines[2].contains("+3.5000") && lines[2].ends_with("50.0%  slower"),
            "{text}"
        );
        assert!(
            lines[3].contains("extra (only in b)") && lines[3].ends_with("undecided"),
            "{text}"
        );
        assert_eq!(
            lines[4],
            "operators    a 1.0000 ms, b 8.0000 ms: +7.0000 ms (the timed runs: +7.2500 ms); 5 matched, 0 only in a, 1 only in b"
        );
    }
}
