//! The one tensor comparison of `mge`: `run --expect`, `compare` (and what
//! builds on them) judge tensors here.
//!
//! Values are compared as `f64` in logical order, in one pass that copies
//! nothing. The error of MegEngine's AssertEqual operator is always computed:
//! `max(|a - b| / max(min(|a|, |b|), 1))`. Unlike that operator, NaN on both
//! sides at the same index counts as equal; NaN on one side only is a mismatch
//! and makes the errors NaN.

pub mod layers;
mod relayout;
pub mod rules;
pub mod sides;

use std::collections::HashSet;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::tensor::npy::Npy;
use crate::tensor::TensorView;
pub use rules::{Criterion, LeftOut, NamedMaxerr, Rules, Statistic, Tolerance, TopkAgreement};
use rules::{ErrorStatistics, TopkRows};
use sides::{pair, Side, Tensor};

/// How many diverging vars after the first a report lists.
const DIVERGENCE_FOLLOWERS: usize = 5;

/// The first element outside the tolerance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    /// Its index in each dimension.
    pub index: Vec<usize>,
    pub a: f64,
    pub b: f64,
}

/// Two tensors of one shape, compared element by element (`b` is the reference).
#[derive(Clone, Debug, PartialEq)]
pub struct ValueComparison {
    /// Largest `|a - b|`.
    pub max_abs: f64,
    /// Largest `|a - b| / |b|` (infinite where `b` is 0 and `a` is not).
    pub max_rel: f64,
    /// The AssertEqual error: the largest of the elements'.
    pub err: f64,
    pub first_mismatch: Option<Mismatch>,
    /// How many elements are outside the tolerance.
    pub mismatches: usize,
    /// The statistic of the element errors the verdict held against the
    /// tolerance (`--stat`, without the `--allow-outliers`); none for `allclose`.
    pub judged: Option<f64>,
    /// With `--allow-outliers`: how many elements the verdict left out.
    pub left_out: Option<LeftOut>,
    pub topk: Option<TopkAgreement>,
    pub passed: bool,
}

/// Compares the values of two views of the same shape under `criterion`;
/// `None` when the shapes differ.
pub fn compare_values(a: TensorView, b: TensorView, criterion: &Criterion) -> Option<ValueComparison> {
    if a.shape != b.shape {
        return None;
    }
    let mut statistics = ErrorStatistics::new(*criterion, a.len());
    let mut topk = criterion.topk.map(|k| TopkRows::new(k, a.shape));
    let (mut max_abs, mut max_rel, mut max_err) = (0.0, 0.0, 0.0);
    let mut first_mismatch = None;
    let mut mismatches = 0;
    for (position, (x, y)) in a.values().zip(b.values()).enumerate() {
        if let Some(rows) = &mut topk {
            rows.add(x, y);
        }
        // Equal infinities, and NaN facing NaN, are equal.
        if x == y || (x.is_nan() && y.is_nan()) {
            continue;
        }
        let diff = (x - y).abs();
        let err = diff / x.abs().min(y.abs()).max(1.0);
        max_abs = worst(max_abs, diff);
        max_rel = worst(max_rel, diff / y.abs());
        max_err = worst(max_err, err);
        statistics.add(err);
        if !criterion.tolerance.accepts(diff, err, y) {
            mismatches += 1;
            first_mismatch.get_or_insert_with(|| Mismatch {
                index: unravel(position, a.shape),
                a: x,
                b: y,
            });
        }
    }
    let left_out = statistics.left_out(mismatches);
    let (judged, within) = statistics.verdict(max_err, mismatches);
    let topk = topk.map(TopkRows::finish);
    Some(ValueComparison {
        max_abs,
        max_rel,
        err: max_err,
        first_mismatch,
        mismatches,
        judged,
        left_out,
        passed: match &topk {
            Some(agreement) => agreement.differing_rows == 0,
            None => within,
        },
        topk,
    })
}

/// The verdict on one tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorStatus {
    Pass,
    Fail,
    ShapeMismatch,
    DtypeMismatch,
    OnlyInA,
    OnlyInB,
    /// An io dump var whose values `.npy` cannot hold: listed, not judged.
    NoValues,
}

impl TensorStatus {
    pub fn failed(self) -> bool {
        !matches!(self, TensorStatus::Pass | TensorStatus::NoValues)
    }

    /// The values differ (not: the tensor is missing on one side).
    fn diverged(self) -> bool {
        matches!(
            self,
            TensorStatus::Fail | TensorStatus::ShapeMismatch | TensorStatus::DtypeMismatch
        )
    }
}

/// One row of a comparison: a tensor on either side, or both.
#[derive(Clone, Debug, Serialize)]
pub struct TensorRow {
    pub name: String,
    /// As on side A (on B for a tensor only B has).
    pub shape: Vec<usize>,
    pub dtype: String,
    /// Side B's, where it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape_b: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtype_b: Option<String>,
    /// None when not compared, or NaN.
    pub max_abs: Option<f64>,
    pub max_rel: Option<f64>,
    pub err: Option<f64>,
    pub first_mismatch: Option<Mismatch>,
    /// Elements outside the tolerance, when compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<usize>,
    /// The `--stat` of the element errors (past the `--allow-outliers`), when
    /// the rules judge by more than the largest error; None when NaN.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stat_err: Option<f64>,
    /// With `--allow-outliers`: how many elements the verdict left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topk: Option<TopkAgreement>,
    /// How a var one run kept in a blocked layout was read to compare it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relayout: Option<String>,
    pub status: TensorStatus,
    /// The operator that produced the var (io dumps).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub op_type: Option<String>,
    /// The vars its operator read (io dumps): none for a constant or a model input.
    #[serde(skip)]
    pub inputs: Vec<String>,
}

impl TensorRow {
    /// Made by an operator from other vars (not a constant or a model input).
    pub fn computed(&self) -> bool {
        !self.inputs.is_empty()
    }

    /// A row for a tensor whose values are not compared.
    fn unjudged(name: &str, shape: Vec<usize>, dtype: String, status: TensorStatus) -> TensorRow {
        TensorRow {
            name: name.to_string(),
            shape,
            dtype,
            shape_b: None,
            dtype_b: None,
            max_abs: None,
            max_rel: None,
            err: None,
            first_mismatch: None,
            mismatches: None,
            stat_err: None,
            left_out: None,
            topk: None,
            relayout: None,
            status,
            operator: None,
            op_type: None,
            inputs: Vec::new(),
        }
    }
}

/// Compares two views: values when the shapes agree, whatever the dtypes
/// (a dtype difference still fails).
pub fn compare_views(name: &str, a: TensorView, b: TensorView, criterion: &Criterion) -> TensorRow {
    let values = compare_values(a, b, criterion);
    let status = match &values {
        None => TensorStatus::ShapeMismatch,
        Some(_) if a.element != b.element => TensorStatus::DtypeMismatch,
        Some(values) if values.passed => TensorStatus::Pass,
        Some(_) => TensorStatus::Fail,
    };
    let finite = |value: f64| (!value.is_nan()).then_some(value);
    let mut row = TensorRow::unjudged(name, a.shape.to_vec(), a.element.name().to_string(), status);
    row.shape_b = (a.shape != b.shape).then(|| b.shape.to_vec());
    row.dtype_b = (a.element != b.element).then(|| b.element.name().to_string());
    if let Some(values) = values {
        row.max_abs = finite(values.max_abs);
        row.max_rel = finite(values.max_rel);
        row.err = finite(values.err);
        row.mismatches = Some(values.mismatches);
        row.stat_err = values
            .judged
            .filter(|_| criterion.judges_more_than_the_largest())
            .and_then(finite);
        row.first_mismatch = values.first_mismatch;
        row.left_out = values.left_out;
        row.topk = values.topk;
    }
    row
}

/// Compares every tensor of two sides, reading two at a time, each under
/// the rules for its name.
pub fn compare_sides(a: &Side, b: &Side, rules: &Rules) -> Result<Vec<TensorRow>> {
    pair(a, b)?
        .into_iter()
        .map(|pair| {
            let mut row = match (&pair.a, &pair.b) {
                (Some(x), Some(y)) => compare_tensors(x, y, &rules.criterion(&x.name))?,
                (Some(x), None) => unpaired(x, TensorStatus::OnlyInA)?,
                (None, Some(y)) => unpaired(y, TensorStatus::OnlyInB)?,
                (None, None) => unreachable!("a pair has a tensor on at least one side"),
            };
            if let Some(var) = pair.a.as_ref().or(pair.b.as_ref()).and_then(|t| t.var.as_ref()) {
                row.operator = Some(var.operator.clone());
                row.op_type = Some(var.op_type.clone());
                row.inputs.clone_from(&var.inputs);
            }
            Ok(row)
        })
        .collect()
}

fn compare_tensors(a: &Tensor, b: &Tensor, criterion: &Criterion) -> Result<TensorRow> {
    let (Some(a_bytes), Some(b_bytes)) = (a.read()?, b.read()?) else {
        return unpaired(a, TensorStatus::NoValues);
    };
    let a_npy = Npy::parse(&a_bytes).with_context(|| a.location())?;
    let b_npy = Npy::parse(&b_bytes).with_context(|| b.location())?;
    let (Some(a_view), Some(b_view)) = (a.real_view(&a_npy), b.real_view(&b_npy)) else {
        return unpaired(a, TensorStatus::NoValues);
    };
    let mut row = match a_view.shape != b_view.shape && a.var.is_some() {
        true => compare_across_layouts(&a.name, a_view, b_view, criterion),
        false => None,
    }
    .unwrap_or_else(|| compare_views(&a.name, a_view, b_view, criterion));
    // A quantized var's dtype is its own, not how its values are stored.
    let dtype = |tensor: &Tensor| tensor.quantized().then(|| tensor.var.as_ref()?.dtype.clone()).flatten();
    if let Some(dtype) = dtype(a) {
        row.dtype = dtype;
    }
    if let (Some(b_dtype), false) = (dtype(b), dtype(a) == dtype(b) && row.dtype_b.is_none()) {
        row.dtype_b = Some(b_dtype);
    }
    Ok(row)
}

/// The row of a var one run kept blocked (NCHW44, NCHW88) and the other in
/// NCHW, compared as NCHW; `None` when the shapes are not such a pair.
fn compare_across_layouts(name: &str, a: TensorView, b: TensorView, criterion: &Criterion) -> Option<TensorRow> {
    let (side, (data, k)) = match relayout::as_nchw(b, a.shape) {
        Some(read) => ("b", read),
        None => ("a", relayout::as_nchw(a, b.shape)?),
    };
    let (a_read, b_read) = match side {
        "b" => (
            a,
            TensorView {
                shape: a.shape,
                data: &data,
                ..b
            },
        ),
        _ => (
            TensorView {
                shape: b.shape,
                data: &data,
                ..a
            },
            b,
        ),
    };
    let mut row = compare_views(name, a_read, b_read, criterion);
    row.shape = a.shape.to_vec();
    row.shape_b = Some(b.shape.to_vec());
    row.relayout = Some(format!("{side} read as NCHW from blocks of {k} channels"));
    Some(row)
}

/// A row for a tensor that is not compared; read to tell its shape and dtype.
fn unpaired(tensor: &Tensor, status: TensorStatus) -> Result<TensorRow> {
    let bytes = tensor.read()?;
    let (shape, dtype) = match (bytes.as_deref(), &tensor.var) {
        (Some(bytes), _) => {
            let npy = Npy::parse(bytes).with_context(|| tensor.location())?;
            (npy.shape.clone(), npy.element.name().to_string())
        }
        (None, Some(var)) => (
            var.shape.clone().unwrap_or_default(),
            var.dtype.clone().unwrap_or_default(),
        ),
        (None, None) => (Vec::new(), String::new()),
    };
    Ok(TensorRow::unjudged(&tensor.name, shape, dtype, status))
}

/// Where two runs of one model part ways: the first var, in execution order,
/// computed from other vars and outside the tolerance.
#[derive(Clone, Debug, Serialize)]
pub struct Divergence {
    #[serde(flatten)]
    pub first: DivergingVar,
    /// The diverging vars after it, in order: how the error grows.
    pub then: Vec<DivergingVar>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DivergingVar {
    pub var: String,
    pub operator: String,
    #[serde(rename = "type")]
    pub op_type: String,
    /// None when NaN or not comparable (shapes differ).
    pub err: Option<f64>,
    /// How it differs: its values (`fail`), its shape or its dtype.
    pub status: TensorStatus,
}

/// The first divergence among rows in execution order (an io dump's). Vars
/// no operator computes (weights, inputs) are where a difference comes
/// from, not where computing parts ways: `differing_sources` lists them.
/// Vars nothing reads (`unread_differing`) reach no output: left out.
pub fn first_divergence(rows: &[TensorRow], outputs: &[String]) -> Option<Divergence> {
    let unread = unread_vars(rows, outputs);
    let mut diverging = rows
        .iter()
        .filter(|row| row.computed() && row.status.diverged() && !unread.contains(row.name.as_str()))
        .map(DivergingVar::of);
    let first = diverging.next()?;
    Some(Divergence {
        first,
        then: diverging.take(DIVERGENCE_FOLLOWERS).collect(),
    })
}

/// The computed vars that differ but that no operator reads and no output names
/// (ROIAlign's index in average mode, left uninitialised): their values reach nothing.
pub fn unread_differing(rows: &[TensorRow], outputs: &[String]) -> Vec<DivergingVar> {
    let unread = unread_vars(rows, outputs);
    rows.iter()
        .filter(|row| row.computed() && row.status.diverged() && unread.contains(row.name.as_str()))
        .map(DivergingVar::of)
        .collect()
}

/// The names of the rows' vars that no row's operator reads and no output names;
/// none where the outputs are not known (a raw dump's index names none).
fn unread_vars<'a>(rows: &'a [TensorRow], outputs: &[String]) -> HashSet<&'a str> {
    if outputs.is_empty() {
        return HashSet::new();
    }
    let read: HashSet<&str> = rows
        .iter()
        .flat_map(|row| row.inputs.iter().map(String::as_str))
        .chain(outputs.iter().map(String::as_str))
        .collect();
    rows.iter()
        .map(|row| row.name.as_str())
        .filter(|name| !read.contains(name))
        .collect()
}

impl DivergingVar {
    fn of(row: &TensorRow) -> DivergingVar {
        DivergingVar {
            var: row.name.clone(),
            operator: row.operator.clone().unwrap_or_default(),
            op_type: row.op_type.clone().unwrap_or_default(),
            err: row.err,
            status: row.status,
        }
    }
}

/// A constant or a model input whose values differ between the two runs.
#[derive(Clone, Debug, Serialize)]
pub struct DifferingSource {
    pub var: String,
    pub operator: String,
    #[serde(rename = "type")]
    pub op_type: String,
    /// The operators that read it, in execution order.
    pub readers: Vec<String>,
}

/// The vars of an io dump's rows that no operator computes and that differ,
/// each with the operators reading it: where a difference comes from.
pub fn differing_sources(rows: &[TensorRow]) -> Vec<DifferingSource> {
    rows.iter()
        .filter(|row| !row.computed() && row.status.diverged())
        .map(|source| {
            let mut readers: Vec<String> = Vec::new();
            for row in rows.iter().filter(|row| row.inputs.contains(&source.name)) {
                let operator = row.operator.clone().unwrap_or_default();
                if !readers.contains(&operator) {
                    readers.push(operator);
                }
            }
            DifferingSource {
                var: source.name.clone(),
                operator: source.operator.clone().unwrap_or_default(),
                op_type: source.op_type.clone().unwrap_or_default(),
                readers,
            }
        })
        .collect()
}

/// The larger, NaN winning: a NaN error never hides behind a finite one.
pub fn worst(current: f64, candidate: f64) -> f64 {
    if current.is_nan() || candidate.is_nan() {
        f64::NAN
    } else {
        current.max(candidate)
    }
}

/// The index in each dimension of the `position`-th element in C order.
fn unravel(mut position: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (slot, &dim) in index.iter_mut().zip(shape).rev() {
        *slot = position % dim;
        position /= dim;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{DType, HostTensor};

    fn tensor(shape: &[usize], values: &[f64]) -> HostTensor {
        HostTensor::from_f64(shape.to_vec(), DType::F32, values.iter().copied()).unwrap()
    }

    const STRICT: Tolerance = Tolerance::AssertEqual { maxerr: 1e-4 };

    fn compare(a: &HostTensor, b: &HostTensor, tolerance: Tolerance) -> ValueComparison {
        let criterion = Criterion {
            tolerance,
            ..Criterion::assert_equal(0.0)
        };
        compare_values(a.view(), b.view(), &criterion).unwrap()
    }

    #[test]
    fn assert_equal_error_is_relative_above_one_absolute_below() {
        let result = compare(&tensor(&[2], &[101.0, 0.5]), &tensor(&[2], &[100.0, 0.5]), STRICT);
        assert!((result.err - 0.01).abs() < 1e-9, "{result:?}");
        assert_eq!(result.max_abs, 1.0);
        assert!((result.max_rel - 0.01).abs() < 1e-9);
        let result = compare(&tensor(&[1], &[0.5]), &tensor(&[1], &[0.25]), STRICT);
        assert!((result.err - 0.25).abs() < 1e-9, "{result:?}");
        assert_eq!(result.max_rel, 1.0);
    }

    #[test]
    fn names_the_first_mismatch_by_index() {
        let b = tensor(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let a = tensor(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.5, 7.0]);
        let result = compare(&a, &b, STRICT);
        assert_eq!(
            result.first_mismatch,
            Some(Mismatch {
                index: vec![1, 1],
                a: 4.5,
                b: 4.0
            })
        );
        assert!(compare(&b, &b, STRICT).passed);
        assert!(compare_values(
            a.view(),
            tensor(&[3, 2], &[0.0; 6]).view(),
            &Criterion::assert_equal(1e-4)
        )
        .is_none());
    }

    #[test]
    fn nan_on_both_sides_is_equal_on_one_side_a_mismatch() {
        let nan = f64::NAN;
        let both = compare(&tensor(&[2], &[nan, 1.0]), &tensor(&[2], &[nan, 1.0]), STRICT);
        assert!(both.passed && both.err == 0.0, "{both:?}");
        let one = compare(&tensor(&[2], &[1.0, 1.0]), &tensor(&[2], &[1.0, nan]), STRICT);
        assert_eq!(one.first_mismatch.as_ref().map(|m| m.index.clone()), Some(vec![1]));
        assert!(one.err.is_nan() && one.max_abs.is_nan());
        let inf = f64::INFINITY;
        assert!(compare(&tensor(&[1], &[inf]), &tensor(&[1], &[inf]), STRICT).passed);
        assert!(!compare(&tensor(&[1], &[inf]), &tensor(&[1], &[-inf]), STRICT).passed);
    }

    #[test]
    fn absolute_and_relative_tolerance_like_allclose() {
        let (a, b) = (tensor(&[2], &[1.05, 10.5]), tensor(&[2], &[1.0, 10.0]));
        let close = |atol, rtol| compare(&a, &b, Tolerance::Close { atol, rtol }).passed;
        assert!(close(0.5, 0.0));
        assert!(!close(0.1, 0.0));
        assert!(close(0.0, 0.06));
        assert!(!close(0.0, 0.04));
        // The relative part scales with the reference, `b`.
        assert!(close(0.0, 0.05));
    }

    #[test]
    fn counts_mismatches_and_judges_by_the_statistic_or_the_top_k() {
        let b = tensor(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let a = tensor(&[2, 3], &[0.0, 1.0, 2.5, 3.0, 4.0, 5.2]);
        let strict = compare(&a, &b, STRICT);
        assert_eq!((strict.mismatches, strict.passed), (2, false));
        let median = Criterion {
            stat: Statistic::Median,
            ..Criterion::assert_equal(1e-4)
        };
        let judged = compare_values(a.view(), b.view(), &median).unwrap();
        assert_eq!((judged.judged, judged.passed), (Some(0.0), true));
        let top2 = Criterion {
            topk: Some(2),
            ..Criterion::assert_equal(1e-4)
        };
        let judged = compare_values(a.view(), b.view(), &top2).unwrap();
        assert!(judged.passed && judged.topk.unwrap().rows == 2);
    }
}
