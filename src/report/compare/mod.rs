//! The reports of `mge compare`, one module per kind as `commands::compare`
//! has them: here two sets of tensors (a row per tensor, a summary and, for
//! two io dumps, where the runs part ways), with the rows' words that every
//! kind shares; `two_runs` (a run's side, and what two runs' tensors gave),
//! `timing` (their speeds), `runs` (two runs of models), `folders` (two
//! folders of models, pair by pair).

pub mod folders;
pub mod layers;
pub mod runs;
pub mod timing;
pub mod two_runs;

use std::fmt::Write;

use serde::Serialize;

use super::table::Table;
use super::Report;
use crate::compare::{DifferingSource, Divergence, DivergingVar, Mismatch, Rules, TensorRow, TensorStatus, Tolerance};
use crate::tensor::format_shape;
use crate::text::{counted, number, part_of, printable, quoted_list};

#[derive(Serialize)]
pub struct CompareReport {
    pub a: String,
    pub b: String,
    /// The tolerance of the tensors no `--maxerr NAME:X` names.
    pub tolerance: Tolerance,
    pub rules: Rules,
    pub tensors: Vec<TensorRow>,
    pub passed: usize,
    pub failed: usize,
    /// Only for two io dumps: constants and inputs that differ, with their readers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differing_sources: Option<Vec<DifferingSource>>,
    /// Only for two io dumps; null when nothing diverges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_divergence: Option<Option<Divergence>>,
    /// Computed vars that differ but that nothing reads: left out of the divergence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread_differing: Vec<DivergingVar>,
}

/// Where the runs part ways, for two io dumps.
pub struct Walk {
    pub sources: Vec<DifferingSource>,
    pub divergence: Option<Divergence>,
    pub unread: Vec<DivergingVar>,
}

impl CompareReport {
    pub fn new(a: String, b: String, rules: Rules, tensors: Vec<TensorRow>, walk: Option<Walk>) -> CompareReport {
        let failed = tensors.iter().filter(|row| row.status.failed()).count();
        let passed = tensors.iter().filter(|row| row.status == TensorStatus::Pass).count();
        let (sources, divergence, unread) = match walk {
            Some(walk) => (Some(walk.sources), Some(walk.divergence), walk.unread),
            None => (None, None, Vec::new()),
        };
        CompareReport {
            a,
            b,
            tolerance: rules.default_tolerance(),
            rules,
            tensors,
            passed,
            failed,
            differing_sources: sources,
            first_divergence: divergence,
            unread_differing: unread,
        }
    }
}

impl Report for CompareReport {
    fn to_text(&self) -> String {
        let mut out = heading(&self.a, &self.b, &self.rules);
        out.push_str(&tensor_table("tensor", &self.tensors, self.first_divergence.is_some()));
        let others = self.tensors.len() - self.passed - self.failed;
        let _ = write!(out, "\n{} passed, {} failed", self.passed, self.failed);
        if others > 0 {
            let _ = write!(out, ", {others} without values");
        }
        out.push('\n');
        if let Some(divergence) = &self.first_divergence {
            walk_text(
                &mut out,
                self.differing_sources.as_deref().unwrap_or_default(),
                divergence.as_ref(),
                &self.unread_differing,
            );
        }
        out
    }
}

/// What was compared with what, and how.
fn heading(a: &str, b: &str, rules: &Rules) -> String {
    format!(
        "a  {}\nb  {}\ntolerance  {}\n\n",
        printable(a),
        printable(b),
        printable(&rules.describe())
    )
}

/// A row per tensor; for an io dump's vars with the operator type.
fn tensor_table(what: &str, rows: &[TensorRow], vars: bool) -> String {
    let mut header = vec![what];
    if vars {
        header.push("type");
    }
    header.extend([
        "shape",
        "dtype",
        "max abs",
        "max rel",
        "err",
        "status",
        "first mismatch",
    ]);
    let numbers = if vars { [4, 5, 6] } else { [3, 4, 5] };
    let mut table = Table::new(&header, &numbers);
    for row in rows {
        let mut cells = vec![row.name.clone()];
        if vars {
            cells.push(row.op_type.clone().unwrap_or_default());
        }
        cells.extend([
            side_by_side(format_shape(&row.shape), row.shape_b.as_deref().map(format_shape)),
            side_by_side(row.dtype.clone(), row.dtype_b.clone()),
            cell(row.max_abs, row.status),
            cell(row.max_rel, row.status),
            cell(row.err, row.status),
            status_text(row.status).to_string(),
            detail(row),
        ]);
        table.row(cells);
    }
    table.render("")
}

/// Where two runs part ways: the constants and inputs that differ, then the first divergence.
fn walk_text(out: &mut String, sources: &[DifferingSource], divergence: Option<&Divergence>, unread: &[DivergingVar]) {
    for source in sources {
        let kind = if source.op_type == "Host2DeviceCopy" {
            "input"
        } else {
            "constant"
        };
        let _ = write!(out, "{kind} '{}' differs", printable(&source.var));
        match source.readers.as_slice() {
            [] => out.push('\n'),
            readers => {
                let readers = readers.iter().map(|reader| printable(reader));
                let _ = writeln!(out, ", read by {}", quoted_list(readers));
            }
        }
    }
    for var in unread {
        let _ = writeln!(
            out,
            "unread: var '{}' of operator '{}' ({}) differs, but no operator reads it and no output names it, {}",
            printable(&var.var),
            printable(&var.operator),
            printable(&var.op_type),
            how_it_differs(var)
        );
    }
    let Some(divergence) = divergence else {
        out.push_str("no computed var that is read diverges\n");
        return;
    };
    let first = &divergence.first;
    let _ = writeln!(
        out,
        "first divergence: var '{}' of operator '{}' ({}), {}",
        printable(&first.var),
        printable(&first.operator),
        printable(&first.op_type),
        how_it_differs(first)
    );
    for next in &divergence.then {
        let _ = writeln!(
            out,
            "  then '{}' of '{}' ({}), {}",
            printable(&next.var),
            printable(&next.operator),
            printable(&next.op_type),
            how_it_differs(next)
        );
    }
}

/// What the last column tells: the top-k difference, or the first element
/// outside the tolerance with how many are.
fn detail(row: &TensorRow) -> String {
    if let Some(topk) = &row.topk {
        return match &topk.first_difference {
            Some(first) => format!(
                "top-{} differ in {}; row {}: {:?} vs {:?}",
                topk.k,
                part_of(topk.differing_rows, topk.rows, "row"),
                format_shape(&first.row),
                first.a,
                first.b
            ),
            None => format!("top-{} agree in {}", topk.k, counted(topk.rows, "row")),
        };
    }
    let mut text = row.first_mismatch.as_ref().map(mismatch_text).unwrap_or_default();
    if let Some(relayout) = &row.relayout {
        let _ = write!(text, "{}{relayout}", if text.is_empty() { "" } else { "; " });
    }
    if let Some(err) = row.stat_err {
        let _ = write!(text, "{}stat {}", if text.is_empty() { "" } else { "; " }, number(err));
    }
    if let Some(left_out) = row.left_out {
        let _ = write!(text, "{}{left_out}", if text.is_empty() { "" } else { "; " });
    }
    match row.mismatches {
        Some(count) if count > 1 => format!("{text} ({count} elements outside)"),
        _ => text,
    }
}

fn status_text(status: TensorStatus) -> &'static str {
    match status {
        TensorStatus::Pass => "pass",
        TensorStatus::Fail => "FAIL",
        TensorStatus::ShapeMismatch => "SHAPE MISMATCH",
        TensorStatus::DtypeMismatch => "DTYPE MISMATCH",
        TensorStatus::OnlyInA => "ONLY IN A",
        TensorStatus::OnlyInB => "ONLY IN B",
        TensorStatus::NoValues => "no values",
    }
}

fn side_by_side(a: String, b: Option<String>) -> String {
    match b {
        Some(b) => format!("{a} vs {b}"),
        None => a,
    }
}

/// An error or difference: blank when not compared, `nan` when a side was NaN.
fn cell(value: Option<f64>, status: TensorStatus) -> String {
    match (value, status) {
        (Some(value), _) => number(value),
        (None, TensorStatus::Pass | TensorStatus::Fail | TensorStatus::DtypeMismatch) => "nan".into(),
        (None, _) => String::new(),
    }
}

fn how_it_differs(var: &DivergingVar) -> String {
    match (var.status, var.err) {
        (TensorStatus::ShapeMismatch, _) => "its shape differs".into(),
        (TensorStatus::DtypeMismatch, _) => "its dtype differs".into(),
        (_, Some(err)) => format!("err {}", number(err)),
        (_, None) => "err nan".into(),
    }
}

/// `(1, 2): 0.5 vs 0.25`: the index and the values of A and B there.
pub fn mismatch_text(mismatch: &Mismatch) -> String {
    format!(
        "{}: {} vs {}",
        format_shape(&mismatch.index),
        value_text(mismatch.a),
        value_text(mismatch.b)
    )
}

/// The shortest text that reads back as the value; as a `float32` when it is one.
fn value_text(value: f64) -> String {
    let single = value as f32;
    if single as f64 == value || value.is_nan() {
        single.to_string()
    } else {
        value.to_string()
    }
}
