//! The report of `mge compare`: a row per tensor, a summary and, for two io
//! dumps, where the runs part ways.

use std::fmt::Write;

use serde::Serialize;

use super::table::Table;
use super::Report;
use crate::compare::{Divergence, Mismatch, Status, TensorRow, Tolerance};
use crate::tensor::format_shape;
use crate::text::quoted_list;

#[derive(Serialize)]
pub struct CompareReport {
    pub a: String,
    pub b: String,
    pub tolerance: Tolerance,
    pub tensors: Vec<TensorRow>,
    pub passed: usize,
    pub failed: usize,
    /// Only for two io dumps; null when nothing diverges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_divergence: Option<Option<Divergence>>,
}

impl CompareReport {
    pub fn new(
        a: String,
        b: String,
        tolerance: Tolerance,
        tensors: Vec<TensorRow>,
        divergence: Option<Option<Divergence>>,
    ) -> CompareReport {
        let failed = tensors.iter().filter(|row| row.status.failed()).count();
        let passed = tensors.iter().filter(|row| row.status == Status::Pass).count();
        CompareReport {
            a,
            b,
            tolerance,
            tensors,
            passed,
            failed,
            first_divergence: divergence,
        }
    }
}

impl Report for CompareReport {
    fn to_text(&self) -> String {
        let mut out = String::new();
        let tolerance = match self.tolerance {
            Tolerance::AssertEqual { maxerr } => format!("AssertEqual error <= {maxerr:e}"),
            Tolerance::Close { atol, rtol } => format!("|a - b| <= {atol:e} + {rtol:e} * |b|"),
        };
        let _ = writeln!(out, "a  {}\nb  {}\ntolerance  {tolerance}\n", self.a, self.b);
        let io_dump = self.first_divergence.is_some();
        let mut header = vec!["tensor"];
        if io_dump {
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
        let numbers = if io_dump { [4, 5, 6] } else { [3, 4, 5] };
        let mut table = Table::new(&header, &numbers);
        for row in &self.tensors {
            let mut cells = vec![row.name.clone()];
            if io_dump {
                cells.push(row.op_type.clone().unwrap_or_default());
            }
            cells.extend([
                side_by_side(format_shape(&row.shape), row.shape_b.as_deref().map(format_shape)),
                side_by_side(row.dtype.clone(), row.dtype_b.clone()),
                number(row.max_abs, row.status),
                number(row.max_rel, row.status),
                number(row.err, row.status),
                status_text(row.status).to_string(),
                row.first_mismatch.as_ref().map(mismatch_text).unwrap_or_default(),
            ]);
            table.row(cells);
        }
        out.push_str(&table.render(""));
        let others = self.tensors.len() - self.passed - self.failed;
        let _ = write!(out, "\n{} passed, {} failed", self.passed, self.failed);
        if others > 0 {
            let _ = write!(out, ", {others} without values");
        }
        out.push('\n');
        match &self.first_divergence {
            None => {}
            Some(None) => out.push_str("no computed var diverges\n"),
            Some(Some(divergence)) => {
                let sources: Vec<&str> = self
                    .tensors
                    .iter()
                    .filter(|row| {
                        !row.computed
                            && matches!(row.status, Status::Fail | Status::ShapeMismatch | Status::DtypeMismatch)
                    })
                    .map(|row| row.name.as_str())
                    .collect();
                if !sources.is_empty() {
                    let _ = writeln!(out, "constants or inputs that differ: {}", quoted_list(&sources));
                }
                let first = &divergence.first;
                let _ = writeln!(
                    out,
                    "first divergence: var '{}' of operator '{}' ({}), err {}",
                    first.var,
                    first.operator,
                    first.op_type,
                    error_text(first.err)
                );
                for next in &divergence.then {
                    let _ = writeln!(
                        out,
                        "  then '{}' of '{}' ({}), err {}",
                        next.var,
                        next.operator,
                        next.op_type,
                        error_text(next.err)
                    );
                }
            }
        }
        out
    }
}

fn status_text(status: Status) -> &'static str {
    match status {
        Status::Pass => "ok",
        Status::Fail => "MISMATCH",
        Status::ShapeMismatch => "SHAPE DIFFERS",
        Status::DtypeMismatch => "DTYPE DIFFERS",
        Status::OnlyInA => "ONLY IN A",
        Status::OnlyInB => "ONLY IN B",
        Status::NoValues => "no values",
    }
}

fn side_by_side(a: String, b: Option<String>) -> String {
    match b {
        Some(b) => format!("{a} vs {b}"),
        None => a,
    }
}

/// An error or difference: blank when not compared, `nan` when a side was NaN.
fn number(value: Option<f64>, status: Status) -> String {
    match (value, status) {
        (Some(0.0), _) => "0".into(),
        (Some(value), _) => format!("{value:.3e}"),
        (None, Status::Pass | Status::Fail | Status::DtypeMismatch) => "nan".into(),
        (None, _) => String::new(),
    }
}

fn error_text(err: Option<f64>) -> String {
    err.map_or_else(|| "nan".into(), |err| format!("{err:.3e}"))
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
