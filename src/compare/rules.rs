//! What two tensors may differ by: the rules every comparison of the tool
//! judges with (`--maxerr [NAME:]X`, `--atol/--rtol`, `--stat`,
//! `--allow-outliers`, `--topk`), and the verdict they give on the errors
//! of one tensor's elements.

use std::fmt::{self, Write};

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::model::DEFAULT_MAXERR;
use crate::output_files::npy_file_stem;
use crate::text::{counted, number, quoted_list};

/// What an element may differ by.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Tolerance {
    /// The AssertEqual error of an element at most `maxerr`.
    AssertEqual { maxerr: f64 },
    /// `|a - b| <= atol + rtol * |b|`, as NumPy's `allclose`.
    Close { atol: f64, rtol: f64 },
}

impl Tolerance {
    pub fn accepts(self, diff: f64, err: f64, b: f64) -> bool {
        match self {
            Tolerance::AssertEqual { maxerr } => err <= maxerr,
            Tolerance::Close { atol, rtol } => diff <= atol + rtol * b.abs(),
        }
    }
}

/// Which statistic of a tensor's element errors is held against `--maxerr`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Statistic {
    /// Every element (the engine's AssertEqual).
    #[default]
    Max,
    Mean,
    Median,
}

impl Statistic {
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Max => "max",
            Statistic::Mean => "mean",
            Statistic::Median => "median",
        }
    }
}

/// `--maxerr NAME:X`: the tolerance of the tensors called NAME.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NamedMaxerr {
    pub name: String,
    pub maxerr: f64,
}

/// The rules of a comparison, as the user gave them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Rules {
    /// For tensors no `NamedMaxerr` names; `None`: the default of whoever
    /// compares (the engine's 1e-4, or a testcase's own maxerr).
    pub tolerance: Option<Tolerance>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_name: Vec<NamedMaxerr>,
    pub stat: Statistic,
    /// The fraction of a tensor's elements whose errors are left out of the
    /// verdict: the largest ones.
    pub allow_outliers: f64,
    /// Judge a tensor by its `topk` largest indices along the last axis instead of its values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topk: Option<usize>,
}

/// The rules for one tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criterion {
    pub tolerance: Tolerance,
    pub stat: Statistic,
    pub allow_outliers: f64,
    pub topk: Option<usize>,
}

impl Criterion {
    /// The engine's AssertEqual: every element within `maxerr`.
    pub fn assert_equal(maxerr: f64) -> Criterion {
        Criterion {
            tolerance: Tolerance::AssertEqual { maxerr },
            stat: Statistic::Max,
            allow_outliers: 0.0,
            topk: None,
        }
    }

    /// Whether the verdict needs more than the largest element error.
    pub fn judges_more_than_the_largest(&self) -> bool {
        self.stat != Statistic::Max || self.allow_outliers > 0.0
    }
}

impl Rules {
    /// Checks what cannot go together: a statistic other than the largest
    /// error needs the AssertEqual error (`allclose` has no error to average).
    pub fn new(
        tolerance: Option<Tolerance>,
        by_name: Vec<NamedMaxerr>,
        stat: Statistic,
        allow_outliers: f64,
        topk: Option<usize>,
    ) -> Result<Rules> {
        if stat != Statistic::Max && matches!(tolerance, Some(Tolerance::Close { .. })) {
            bail!(
                "--stat {} averages the AssertEqual error of --maxerr; --atol/--rtol judge each element on its own",
                stat.name()
            );
        }
        if !(0.0..1.0).contains(&allow_outliers) {
            bail!("--allow-outliers {allow_outliers}: give a fraction of the elements, at least 0 and below 1");
        }
        Ok(Rules {
            tolerance,
            by_name,
            stat,
            allow_outliers,
            topk,
        })
    }

    /// These rules with `maxerr` for the tensors neither a name nor a default tolerance covers.
    pub fn or_maxerr(&self, maxerr: f64) -> Rules {
        Rules {
            tolerance: Some(self.tolerance.unwrap_or(Tolerance::AssertEqual { maxerr })),
            ..self.clone()
        }
    }

    /// The tolerance of the tensors no `--maxerr NAME:X` names.
    pub fn default_tolerance(&self) -> Tolerance {
        self.tolerance
            .unwrap_or(Tolerance::AssertEqual { maxerr: DEFAULT_MAXERR })
    }

    /// The rules for tensor `name`.
    pub fn criterion(&self, name: &str) -> Criterion {
        let named = self
            .by_name
            .iter()
            .rev()
            .find(|rule| names_tensor(&rule.name, name))
            .map(|rule| Tolerance::AssertEqual { maxerr: rule.maxerr });
        Criterion {
            tolerance: named.unwrap_or(self.default_tolerance()),
            stat: self.stat,
            allow_outliers: self.allow_outliers,
            topk: self.topk,
        }
    }

    /// These rules for the vars of a run rather than its outputs: values only
    /// (top-k agreement means something for a classifier's scores alone).
    pub fn for_values(&self) -> Rules {
        Rules {
            topk: None,
            ..self.clone()
        }
    }

    /// The rules in a line: `AssertEqual error <= 1e-4, 'prob' <= 1e-2; the median element error`.
    pub fn describe(&self) -> String {
        let mut text = match self.default_tolerance() {
            Tolerance::AssertEqual { maxerr } => format!("AssertEqual error <= {}", number(maxerr)),
            Tolerance::Close { atol, rtol } => format!("|a - b| <= {} + {} * |b|", number(atol), number(rtol)),
        };
        for named in &self.by_name {
            let _ = write!(text, ", '{}' <= {}", named.name, number(named.maxerr));
        }
        if self.stat != Statistic::Max {
            let _ = write!(text, "; the {} element error", self.stat.name());
        }
        if self.allow_outliers > 0.0 {
            let _ = write!(
                text,
                "; the largest {}% of the element errors left out",
                self.allow_outliers * 100.0
            );
        }
        if let Some(k) = self.topk {
            let _ = write!(text, "; judged by the top-{k} indices of the last axis");
        }
        text
    }

    /// Fails when a `--maxerr NAME:X` names none of `names`: a mistyped name
    /// would otherwise leave its tensor under the default tolerance unnoticed.
    pub fn check_names<'a>(&self, names: impl IntoIterator<Item = &'a str> + Clone) -> Result<()> {
        for rule in &self.by_name {
            if !names.clone().into_iter().any(|name| names_tensor(&rule.name, name)) {
                let known: Vec<&str> = names.into_iter().collect();
                bail!(
                    "--maxerr {}:{}: no tensor is named '{}' (the tensors: {})",
                    rule.name,
                    number(rule.maxerr),
                    rule.name,
                    quoted_list(&known)
                );
            }
        }
        Ok(())
    }
}

/// Whether a `--maxerr NAME:X` rule names the tensor `name`, or the file
/// `NAME.npy` the tool writes it to (where a name's characters a file name
/// cannot hold became `_`).
fn names_tensor(rule: &str, name: &str) -> bool {
    let stem = name.strip_suffix(".npy").unwrap_or(name);
    name == rule || stem == rule || stem == npy_file_stem(rule)
}

/// With `--allow-outliers`: how many of a tensor's elements the verdict left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    pub elements: usize,
    /// The tensor's elements.
    pub of: usize,
}

impl fmt::Display for LeftOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {} left out", self.elements, counted(self.of, "element"))
    }
}

/// The element errors of one tensor, gathered for the verdict.
pub(super) struct ErrorStatistics {
    criterion: Criterion,
    len: usize,
    /// The non-zero errors, when the verdict needs more than the largest.
    kept: Option<Vec<f64>>,
}

impl ErrorStatistics {
    pub fn new(criterion: Criterion, len: usize) -> ErrorStatistics {
        ErrorStatistics {
            criterion,
            len,
            kept: criterion.judges_more_than_the_largest().then(Vec::new),
        }
    }

    /// One element's AssertEqual error (elements not added have error 0).
    pub fn add(&mut self, err: f64) {
        if let Some(kept) = &mut self.kept {
            kept.push(err);
        }
    }

    /// With `--allow-outliers`, how many elements the verdict leaves out of
    /// those with `mismatches` outside the tolerance: the largest errors, as
    /// many as allowed and nonzero (AssertEqual), or the elements outside it
    /// that the allowance excuses (`allclose`).
    pub fn left_out(&self, mismatches: usize) -> Option<LeftOut> {
        if self.criterion.allow_outliers == 0.0 {
            return None;
        }
        let allowed = (self.criterion.allow_outliers * self.len as f64).floor() as usize;
        let elements = match self.criterion.tolerance {
            Tolerance::Close { .. } => mismatches.min(allowed),
            Tolerance::AssertEqual { .. } => allowed.min(self.kept.as_ref().map_or(0, Vec::len)),
        };
        Some(LeftOut { elements, of: self.len })
    }

    /// The statistic held against the tolerance (AssertEqual only), and the
    /// verdict, given the largest error and how many elements were outside.
    pub fn verdict(self, max_err: f64, mismatches: usize) -> (Option<f64>, bool) {
        let outliers = (self.criterion.allow_outliers * self.len as f64).floor() as usize;
        let maxerr = match self.criterion.tolerance {
            Tolerance::Close { .. } => return (None, mismatches <= outliers),
            Tolerance::AssertEqual { maxerr } => maxerr,
        };
        let Some(mut kept) = self.kept else {
            return (Some(max_err), mismatches == 0);
        };
        let counted = self.len - outliers.min(self.len);
        if counted == 0 {
            return (Some(0.0), true);
        }
        // NaN sorts above every number: it is the first to go as an outlier.
        kept.sort_unstable_by(f64::total_cmp);
        kept.truncate(kept.len().saturating_sub(outliers));
        let zeros = counted - kept.len();
        // The i-th smallest of the counted errors, the zeros first.
        let nth = |i: usize| if i < zeros { 0.0 } else { kept[i - zeros] };
        let value = match self.criterion.stat {
            Statistic::Max => nth(counted - 1),
            Statistic::Mean => kept.iter().sum::<f64>() / counted as f64,
            Statistic::Median if counted % 2 == 1 => nth(counted / 2),
            Statistic::Median => (nth(counted / 2 - 1) + nth(counted / 2)) / 2.0,
        };
        (Some(value), value <= maxerr)
    }
}

/// Whether two tensors put the same `k` largest values at the same indices
/// along their last axis, row by row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopkAgreement {
    pub k: usize,
    pub rows: usize,
    pub differing_rows: usize,
    /// The first row whose top-k differ: its index and each side's top-k, largest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<TopkDifference>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopkDifference {
    pub row: Vec<usize>,
    pub a: Vec<usize>,
    pub b: Vec<usize>,
}

/// Gathers the rows of two tensors' values and compares their top-k.
pub(super) struct TopkRows {
    agreement: TopkAgreement,
    shape: Vec<usize>,
    width: usize,
    a: Vec<f64>,
    b: Vec<f64>,
}

impl TopkRows {
    pub fn new(k: usize, shape: &[usize]) -> TopkRows {
        let width = shape.last().copied().unwrap_or(1);
        TopkRows {
            agreement: TopkAgreement {
                k: k.min(width),
                rows: 0,
                differing_rows: 0,
                first_difference: None,
            },
            shape: shape.to_vec(),
            width,
            a: Vec::with_capacity(width),
            b: Vec::with_capacity(width),
        }
    }

    pub fn add(&mut self, a: f64, b: f64) {
        self.a.push(a);
        self.b.push(b);
        if self.a.len() == self.width {
            self.end_row();
        }
    }

    fn end_row(&mut self) {
        let k = self.agreement.k;
        let (top_a, top_b) = (top_indices(&self.a, k), top_indices(&self.b, k));
        let (mut set_a, mut set_b) = (top_a.clone(), top_b.clone());
        set_a.sort_unstable();
        set_b.sort_unstable();
        if set_a != set_b {
            self.agreement.differing_rows += 1;
            if self.agreement.first_difference.is_none() {
                let leading = &self.shape[..self.shape.len().saturating_sub(1)];
                self.agreement.first_difference = Some(TopkDifference {
                    row: super::unravel(self.agreement.rows, leading),
                    a: top_a,
                    b: top_b,
                });
            }
        }
        self.agreement.rows += 1;
        self.a.clear();
        self.b.clear();
    }

    pub fn finish(self) -> TopkAgreement {
        self.agreement
    }
}

/// The indices of the `k` largest values, largest first (NaN counts as the
/// largest, as NumPy's argmax does; ties go to the lower index).
fn top_indices(values: &[f64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&x, &y| values[y].total_cmp(&values[x]).then(x.cmp(&y)));
    order.truncate(k);
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(criterion: Criterion, errors: &[f64], maxerr_outside: usize) -> (Option<f64>, bool) {
        let mut statistics = ErrorStatistics::new(criterion, errors.len());
        errors.iter().filter(|e| **e != 0.0).for_each(|&e| statistics.add(e));
        let max = errors.iter().copied().fold(0.0, f64::max);
        statistics.verdict(max, maxerr_outside)
    }

    fn with(stat: Statistic, allow_outliers: f64) -> Criterion {
        Criterion {
            stat,
            allow_outliers,
            ..Criterion::assert_equal(0.1)
        }
    }

    #[test]
    fn the_statistic_is_taken_over_every_element_zeros_included() {
        let errors = [0.0, 0.0, 0.05, 0.3];
        assert_eq!(verdict(with(Statistic::Max, 0.0), &errors, 1), (Some(0.3), false));
        let (mean, passed) = verdict(with(Statistic::Mean, 0.0), &errors, 1);
        assert!((mean.unwrap() - 0.0875).abs() < 1e-12 && passed);
        assert_eq!(verdict(with(Statistic::Median, 0.0), &errors, 1), (Some(0.025), true));
        assert_eq!(
            verdict(with(Statistic::Median, 0.0), &errors[1..], 1),
            (Some(0.05), true)
        );
    }

    #[test]
    fn outliers_are_the_largest_errors_left_out() {
        // 1 of 4 elements may be an outlier at 0.25 (floor of 0.25 * 4).
        let errors = [0.0, 0.01, 0.02, f64::NAN];
        assert_eq!(verdict(with(Statistic::Max, 0.25), &errors, 1), (Some(0.02), true));
        assert!(!verdict(with(Statistic::Max, 0.2), &errors, 1).1);
        let two_out = [0.0, 0.01, 0.5, 0.6];
        assert_eq!(verdict(with(Statistic::Max, 0.25), &two_out, 2), (Some(0.5), false));
        let close = Criterion {
            tolerance: Tolerance::Close { atol: 0.0, rtol: 0.0 },
            ..with(Statistic::Max, 0.5)
        };
        assert_eq!(verdict(close, &two_out, 2), (None, true));
    }

    #[test]
    fn named_tolerances_apply_to_their_tensor_and_its_file() {
        let rules = Rules::new(
            None,
            vec![NamedMaxerr {
                name: "prob".into(),
                maxerr: 0.5,
            }],
            Statistic::Max,
            0.0,
            None,
        )
        .unwrap();
        assert_eq!(
            rules.criterion("prob.npy").tolerance,
            Tolerance::AssertEqual { maxerr: 0.5 }
        );
        assert_eq!(
            rules.criterion("feat").tolerance,
            Tolerance::AssertEqual { maxerr: DEFAULT_MAXERR }
        );
        assert_eq!(
            rules.or_maxerr(1e-3).criterion("feat").tolerance,
            Tolerance::AssertEqual { maxerr: 1e-3 }
        );
        assert!(rules.check_names(["prob.npy", "x.npy"]).is_ok());
        let err = rules.check_names(["feat"]).unwrap_err().to_string();
        assert!(err.contains("no tensor is named 'prob'"), "{err}");
        let close = Some(Tolerance::Close { atol: 1.0, rtol: 0.0 });
        assert!(Rules::new(close, Vec::new(), Statistic::Mean, 0.0, None).is_err());
        assert!(Rules::new(None, Vec::new(), Statistic::Max, 1.0, None).is_err());
    }

    #[test]
    fn top_k_compares_index_sets_row_by_row() {
        let mut rows = TopkRows::new(2, &[2, 3]);
        for (a, b) in [(0.1, 0.2), (0.5, 0.4), (0.4, 0.5), (1.0, 1.0), (0.0, 3.0), (2.0, 2.0)] {
            rows.add(a, b);
        }
        let agreement = rows.finish();
        assert_eq!((agreement.rows, agreement.differing_rows), (2, 1));
        assert_eq!(
            agreement.first_difference,
            Some(TopkDifference {
                row: vec![1],
                a: vec![2, 0],
                b: vec![1, 2]
            })
        );
        assert_eq!(top_indices(&[1.0, f64::NAN, 1.0], 2), [1, 0]);
    }
}
