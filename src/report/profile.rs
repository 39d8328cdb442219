//! The report of `mge profile`: operators (or operator types) by time, and how
//! their sum compares with the measured iteration time.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use regex::Regex;
use serde::Serialize;

use super::run::cold_start_text;
use super::table::Table;
use super::Report;

use crate::profile::{OperatorRun, Profile, ProfiledIteration, Span};
use crate::runner::timing::{ColdStart, Timing};
use crate::tensor::format_shape;
use crate::text::{counted, part_of, printable};

/// The sum of operator times should be this close to the iteration time.
const COVERAGE_TOLERANCE: f64 = 0.15;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Grouping {
    /// One row per operator.
    Opr,
    /// One row per operator type.
    Type,
}

#[derive(Serialize)]
pub struct ProfileReport {
    /// What was profiled: a model run here, or a profile file written elsewhere.
    #[serde(flatten)]
    pub source: ProfileSource,
    pub device: String,
    /// The Chrome trace written; `null` for `--analyze` without `-o`.
    pub trace: Option<String>,
    pub by: Grouping,
    /// How a type's row combines its operators (`--aggregate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<Aggregate>,
    pub profiled_iterations: usize,
    /// Sum of operator times per iteration (mean over the profiled iterations).
    pub operator_ms: f64,
    /// Sum of each operator's host time per iteration (profile_analyze's "total host time").
    pub operator_host_ms: f64,
    /// How the operator times compare with the measured iterations (a run here).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub measured: Option<ToolTiming>,
    /// The top rows by time.
    pub rows: Vec<ProfileRow>,
    /// What the rows beyond `--top` add up to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rest: Option<RestRow>,
    /// What the operators the filters keep add up to, when filters are given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected: Option<SelectedRow>,
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileSource {
    /// The model `mge profile` ran.
    Model(String),
    /// An engine profile file, analysed (`--analyze`).
    ProfileFile(String),
}

/// The iterations a run here measured, against its operator times.
#[derive(Serialize)]
pub struct ToolTiming {
    /// Load, fast-run profiling, the first run and the warm-ups, before the profiled iterations.
    pub timing_ms: ColdStart,
    /// Forward+wait of the profiled iterations, as the tool measured them.
    pub iteration_ms: Timing,
    /// `operator_ms` against the mean iteration time, in percent.
    pub operator_percent_of_iteration: f64,
    /// Why the two differ by more than 15%, when they do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
}

#[derive(Serialize, Debug)]
pub struct ProfileRow {
    /// The operator's id (`--by opr` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// The operator's name, or its type for `--by type`.
    pub name: String,
    #[serde(rename = "type")]
    pub op_type: String,
    /// Operators in the row.
    pub count: usize,
    /// Time per iteration.
    pub time_ms: f64,
    /// Of the sum of all operator times, in percent.
    pub share: f64,
    /// Per iteration, over the operators whose FLOPs the engine knows.
    pub flops: Option<f64>,
    pub gflops_per_s: Option<f64>,
    /// Bytes read and written per iteration, where the engine knows.
    pub memory_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_shapes: Option<Vec<Vec<usize>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_shapes: Option<Vec<Vec<usize>>>,
    /// The operator's output dtype (`--by opr`), where the engine's profile
    /// holds its layout: `qint8` where it runs quantized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
}

#[derive(Serialize, Debug)]
pub struct RestRow {
    pub rows: usize,
    pub count: usize,
    pub time_ms: f64,
    pub share: f64,
}

/// The operators `--type`, `--opr-name` and `--min-time` keep, of all.
#[derive(Serialize, Debug)]
pub struct SelectedRow {
    /// Operators kept, of `of`.
    pub operators: usize,
    pub of: usize,
    /// Time per iteration of the executions kept.
    pub time_ms: f64,
    /// Of the sum of all operator times, in percent, as every row's share.
    pub share: f64,
}

/// How rows are sorted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Largest time first.
    #[default]
    Time,
    /// Most FLOPs first; rows without known FLOPs last.
    Flops,
    /// By name.
    Name,
}

/// How the operators of one type make its row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    #[default]
    Sum,
    Mean,
    Max,
    Min,
}

/// Which operators make the table and how (MegEngine's profile_analyze filters).
pub struct Selection {
    pub by: Grouping,
    /// How `Grouping::Type` combines the operators of a type, when the user
    /// said (`--aggregate`); they are summed otherwise.
    pub aggregate: Option<Aggregate>,
    pub top: usize,
    /// Only these types, when any.
    pub types: Vec<String>,
    /// Only operators whose name this matches from its start.
    pub name: Option<Regex>,
    /// Only operator executions that took at least this long.
    pub min_time_ms: Option<f64>,
    pub order: Order,
}

impl Selection {
    /// Whether it leaves operators out (`--type`, `--opr-name`, `--min-time`).
    fn filters(&self) -> bool {
        !self.types.is_empty() || self.name.is_some() || self.min_time_ms.is_some()
    }

    fn keeps(&self, operator: &OperatorRun) -> bool {
        (self.types.is_empty() || self.types.contains(&operator.op_type))
            && self
                .name
                .as_ref()
                .is_none_or(|name| name.find(&operator.name).is_some_and(|found| found.start() == 0))
            && self.min_time_ms.is_none_or(|ms| operator.time_us() >= ms * 1e3)
    }
}

/// Totals of the executions that fall in one row, per iteration.
#[derive(Default, Clone)]
struct Accumulated {
    id: Option<u64>,
    name: String,
    op_type: String,
    operators: BTreeSet<u64>,
    time_us: f64,
    flops: Option<f64>,
    flops_time_us: f64,
    memory: Option<f64>,
    in_shapes: Option<Vec<Vec<usize>>>,
    out_shapes: Option<Vec<Vec<usize>>>,
    dtype: Option<String>,
}

/// Adds `value` to a total that stays unknown until something is known.
fn add_known(total: &mut Option<f64>, value: Option<f64>) {
    if let Some(value) = value {
        *total = Some(total.unwrap_or(0.0) + value);
    }
}

/// The rows `selection` asks for from `profile`, sorted; the first `top` of
/// them are kept and the rest summed; with filters, what they keep. Every
/// share is of all operator time, the total the report gives.
pub fn rows(profile: &Profile, selection: &Selection) -> (Vec<ProfileRow>, Option<RestRow>, Option<SelectedRow>) {
    let kept = per_operator(profile, selection);
    let total_us = operator_ms(&profile.iterations) * 1e3;
    let share = |time_us: f64| match total_us > 0.0 {
        true => 100.0 * time_us / total_us,
        false => 0.0,
    };
    let selected = selection.filters().then(|| {
        let time_us: f64 = kept.iter().map(|operator| operator.time_us).sum();
        let all: BTreeSet<u64> = profile
            .iterations
            .iter()
            .flat_map(|iteration| &iteration.operators)
            .map(|operator| operator.id)
            .collect();
        SelectedRow {
            operators: kept
                .iter()
                .flat_map(|operator| &operator.operators)
                .collect::<BTreeSet<_>>()
                .len(),
            of: all.len(),
            time_ms: time_us / 1e3,
            share: share(time_us),
        }
    });
    let groups = match selection.by {
        Grouping::Opr => kept,
        Grouping::Type => per_type(kept, selection.aggregate.unwrap_or_default()),
    };
    let mut rows: Vec<ProfileRow> = groups
        .into_iter()
        .map(|group| {
            let share = share(group.time_us);
            group.row(share, selection.by)
        })
        .collect();
    rows.sort_by(|a, b| selection.order.compare(a, b));
    let rest: Vec<ProfileRow> = rows.split_off(selection.top.min(rows.len()));
    let rest = (!rest.is_empty()).then(|| RestRow {
        rows: rest.len(),
        count: rest.iter().map(|r| r.count).sum(),
        time_ms: rest.iter().map(|r| r.time_ms).sum(),
        share: rest.iter().map(|r| r.share).sum(),
    });
    (rows, rest, selected)
}

/// The executions of each operator `selection` keeps, per iteration, by name and id.
fn per_operator(profile: &Profile, selection: &Selection) -> Vec<Accumulated> {
    let iterations = profile.iterations.len().max(1) as f64;
    let mut operators: BTreeMap<(String, u64), Accumulated> = BTreeMap::new();
    for operator in profile.iterations.iter().flat_map(|i| &i.operators) {
        if !selection.keeps(operator) {
            continue;
        }
        let total = operators.entry((operator.name.clone(), operator.id)).or_default();
        total.id = Some(operator.id);
        total.name.clone_from(&operator.name);
        total.op_type.clone_from(&operator.op_type);
        total.operators.insert(operator.id);
        total.in_shapes.get_or_insert_with(|| operator.in_shapes.clone());
        total.out_shapes.get_or_insert_with(|| operator.out_shapes.clone());
        total.dtype = total.dtype.take().or_else(|| operator.dtype.clone());
        let time = operator.time_us() / iterations;
        total.time_us += time;
        if let Some(flops) = operator.flops {
            add_known(&mut total.flops, Some(flops as f64 / iterations));
            total.flops_time_us += time;
        }
        add_known(
            &mut total.memory,
            operator.memory_bytes.map(|bytes| bytes as f64 / iterations),
        );
    }
    operators.into_values().collect()
}

/// A row per operator type, its operators combined as `aggregate` says.
fn per_type(operators: Vec<Accumulated>, aggregate: Aggregate) -> Vec<Accumulated> {
    let mut types: BTreeMap<String, Vec<Accumulated>> = BTreeMap::new();
    for operator in operators {
        types.entry(operator.op_type.clone()).or_default().push(operator);
    }
    types
        .into_iter()
        .map(|(op_type, members)| combine(op_type, &members, aggregate))
        .collect()
}

impl Accumulated {
    /// The row, with its `share`; ids, shapes and dtypes are an operator's only.
    fn row(self, share: f64, by: Grouping) -> ProfileRow {
        let per_operator = by == Grouping::Opr;
        ProfileRow {
            id: self.id.filter(|_| per_operator),
            name: self.name,
            op_type: self.op_type,
            count: self.operators.len(),
            time_ms: self.time_us / 1e3,
            share,
            flops: self.flops,
            gflops_per_s: self
                .flops
                .filter(|_| self.flops_time_us > 0.0)
                .map(|flops| flops / (self.flops_time_us * 1e-6) / 1e9),
            memory_bytes: self.memory,
            in_shapes: self.in_shapes.filter(|_| per_operator),
            out_shapes: self.out_shapes.filter(|_| per_operator),
            dtype: self.dtype.filter(|_| per_operator),
        }
    }
}

impl Order {
    /// `a` before `b` as the order says; rows it holds equal go by name.
    fn compare(self, a: &ProfileRow, b: &ProfileRow) -> std::cmp::Ordering {
        let by_time = b.time_ms.total_cmp(&a.time_ms);
        match self {
            Order::Time => by_time,
            Order::Flops => b
                .flops
                .unwrap_or(-1.0)
                .total_cmp(&a.flops.unwrap_or(-1.0))
                .then(by_time),
            Order::Name => std::cmp::Ordering::Equal,
        }
        .then_with(|| a.name.cmp(&b.name))
    }
}

/// The row of one type from its operators' rows, as `aggregate` says.
fn combine(op_type: String, members: &[Accumulated], aggregate: Aggregate) -> Accumulated {
    let pick = |values: Vec<f64>| -> Option<f64> {
        let count = values.len() as f64;
        match aggregate {
            Aggregate::Sum => values.into_iter().reduce(|a, b| a + b),
            Aggregate::Mean => values.into_iter().reduce(|a, b| a + b).map(|sum| sum / count),
            Aggregate::Max => values.into_iter().reduce(f64::max),
            Aggregate::Min => values.into_iter().reduce(f64::min),
        }
    };
    let known = |field: fn(&Accumulated) -> Option<f64>| pick(members.iter().filter_map(field).collect());
    Accumulated {
        id: None,
        name: op_type.clone(),
        op_type,
        operators: members.iter().flat_map(|m| m.operators.iter().copied()).collect(),
        time_us: pick(members.iter().map(|m| m.time_us).collect()).unwrap_or(0.0),
        flops: known(|m| m.flops),
        flops_time_us: pick(
            members
                .iter()
                .filter(|m| m.flops.is_some())
                .map(|m| m.flops_time_us)
                .collect(),
        )
        .unwrap_or(0.0),
        memory: known(|m| m.memory),
        in_shapes: None,
        out_shapes: None,
        dtype: None,
    }
}

/// Mean per iteration of the sum of operator times, in milliseconds.
pub fn operator_ms(iterations: &[ProfiledIteration]) -> f64 {
    let total: f64 = iterations.iter().flat_map(|i| &i.operators).map(|o| o.time_us()).sum();
    total / iterations.len().max(1) as f64 / 1e3
}

/// Mean per iteration of the sum of each operator's longest host span, in milliseconds.
pub fn operator_host_ms(iterations: &[ProfiledIteration]) -> f64 {
    let longest = |operator: &OperatorRun| operator.host.iter().map(Span::duration_us).fold(0.0, f64::max);
    let total: f64 = iterations.iter().flat_map(|i| &i.operators).map(longest).sum();
    total / iterations.len().max(1) as f64 / 1e3
}

/// Why the operator times do not add up to the iteration time: where in the
/// iteration no operator ran, or that operators ran at the same time.
pub fn explain_gap(iterations: &[ProfiledIteration], operator_ms: f64, iteration_ms: f64) -> Option<String> {
    if iteration_ms <= 0.0 || (operator_ms / iteration_ms - 1.0).abs() <= COVERAGE_TOLERANCE {
        return None;
    }
    let count = iterations.len().max(1) as f64;
    let (mut before, mut after, mut busy) = (0.0, 0.0, 0.0);
    for iteration in iterations {
        let spans = || iteration.operators.iter().flat_map(|o| o.host.iter().chain(&o.device));
        let first = spans().map(|s| s.start_us).fold(f64::INFINITY, f64::min);
        let last = spans().map(|s| s.end_us).fold(f64::NEG_INFINITY, f64::max);
        before += (first - iteration.start_us).max(0.0);
        after += (iteration.end_us - last).max(0.0);
        busy += (last - first).max(0.0);
    }
    let ms = |us: f64| us / count / 1e3;
    let between = ms(busy) - operator_ms;
    Some(if between < 0.0 {
        format!(
            "not within 15%: operators overlap by {:.3} ms (they ran on several comp nodes or threads at once)",
            -between
        )
    } else {
        format!(
            "not within 15%: the iteration also spends {:.3} ms before the first operator starts, {:.3} ms after the last one ends (the engine writes its profile then) and {:.3} ms between operators",
            ms(before),
            ms(after),
            between
        )
    })
}

fn optional(value: Option<f64>, format: impl Fn(f64) -> String) -> String {
    value.map(format).unwrap_or_else(|| "-".into())
}

impl Report for ProfileReport {
    fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = match &self.source {
            ProfileSource::Model(model) => writeln!(out, "model    {} on {}", printable(model), self.device),
            ProfileSource::ProfileFile(file) => {
                writeln!(
                    out,
                    "profile  {}, recorded on {}",
                    printable(file),
                    printable(&self.device)
                )
            }
        };
        if let Some(measured) = &self.measured {
            out.push_str(&cold_start_text(&measured.timing_ms));
        }
        out.push_str(&self.table());
        if let Some(rest) = &self.rest {
            let more = match self.by {
                Grouping::Opr => counted(rest.rows, "more operator"),
                Grouping::Type => format!(
                    "{} ({})",
                    counted(rest.rows, "more type"),
                    counted(rest.count, "operator")
                ),
            };
            let _ = writeln!(out, "... {more}: {:.3} ms, {:.1}%", rest.time_ms, rest.share);
        }
        if let Some(selected) = &self.selected {
            let _ = writeln!(
                out,
                "selected {}: {:.3} ms, {:.1}% of the total",
                part_of(selected.operators, selected.of, "operator"),
                selected.time_ms,
                selected.share
            );
        }
        match &self.measured {
            Some(measured) => {
                let t = &measured.iteration_ms;
                let _ = writeln!(
                    out,
                    "total    operators {:.3} ms per iteration = {:.1}% of the profiled iteration time {:.3} ms (mean of {}, forward+wait)",
                    self.operator_ms, measured.operator_percent_of_iteration, t.mean, t.iterations
                );
                if let Some(gap) = &measured.gap {
                    let _ = writeln!(out, "note     {gap}");
                }
            }
            None => {
                let _ = writeln!(
                    out,
                    "total    operators {:.3} ms on the device, {:.3} ms on the host (the execution the file holds)",
                    self.operator_ms, self.operator_host_ms
                );
            }
        }
        if let Some(trace) = &self.trace {
            let _ = writeln!(out, "trace    {}", printable(trace));
        }
        out
    }
}

impl ProfileReport {
    /// The rows as a table, ranked.
    fn table(&self) -> String {
        let mut header = vec!["#"];
        header.extend(match self.by {
            Grouping::Opr => ["operator", "type"].as_slice(),
            Grouping::Type => ["type"].as_slice(),
        });
        header.extend(["count", "ms", "share", "GFLOP", "GFLOP/s", "MB"]);
        if self.by == Grouping::Opr {
            header.extend(["dtype", "output shapes"]);
        }
        let first_number = header.iter().position(|h| *h == "count").expect("count column");
        let right: Vec<usize> = std::iter::once(0).chain(first_number..first_number + 6).collect();
        let mut table = Table::new(&header, &right);
        for (rank, row) in self.rows.iter().enumerate() {
            let mut cells = vec![(rank + 1).to_string(), row.name.clone()];
            if self.by == Grouping::Opr {
                cells.push(row.op_type.clone());
            }
            cells.extend([
                row.count.to_string(),
                format!("{:.3}", row.time_ms),
                format!("{:.1}%", row.share),
                optional(row.flops, |f| format!("{:.3}", f / 1e9)),
                optional(row.gflops_per_s, |g| format!("{g:.2}")),
                optional(row.memory_bytes, |m| format!("{:.2}", m / 1e6)),
            ]);
            if self.by == Grouping::Opr {
                cells.push(row.dtype.clone().unwrap_or_else(|| "-".into()));
            }
            if let Some(shapes) = &row.out_shapes {
                let shapes: Vec<String> = shapes.iter().map(|s| format_shape(s)).collect();
                cells.push(shapes.join(" "));
            }
            table.row(cells);
        }
        table.render("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{OperatorRun, Span};

    fn operator(id: u64, op_type: &str, start_us: f64, end_us: f64, flops: Option<u64>) -> OperatorRun {
        OperatorRun {
            id,
            name: format!("op{id}"),
            op_type: op_type.into(),
            host: Vec::new(),
            device: vec![Span {
                track: "cpu0:0".into(),
                start_us,
                kernel_start_us: None,
                end_us,
            }],
            in_shapes: Vec::new(),
            out_shapes: vec![vec![1, 2]],
            dtype: Some("float32".into()),
            memory_bytes: Some(1000),
            flops,
        }
    }

    fn profile() -> Profile {
        let iteration = |number: u64, offset: f64| ProfiledIteration {
            number,
            start_us: offset,
            end_us: offset + 100.0,
            operators: vec![
                operator(1, "Conv", offset + 10.0, offset + 70.0, Some(6_000_000)),
                operator(2, "Elemwise", offset + 70.0, offset + 80.0, None),
                operator(3, "Elemwise", offset + 80.0, offset + 90.0, None),
            ],
        };
        Profile {
            phases: Vec::new(),
            iterations: vec![iteration(1, 0.0), iteration(2, 200.0)],
            separate: false,
        }
    }

    fn selection(by: Grouping, top: usize) -> Selection {
        Selection {
            by,
            aggregate: Some(Aggregate::Sum),
            top,
            types: Vec::new(),
            name: None,
            min_time_ms: None,
            order: Order::Time,
        }
    }

    #[test]
    fn filters_and_aggregates_as_profile_analyze() {
        let profile = profile();
        let only = |edit: fn(&mut Selection)| {
            let mut chosen = selection(Grouping::Opr, 20);
            edit(&mut chosen);
            rows(&profile, &chosen)
                .0
                .into_iter()
                .map(|r| r.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(only(|s| s.types = vec!["Elemwise".into()]), ["op2", "op3"]);
        assert_eq!(only(|s| s.name = Some(Regex::new("op[13]").unwrap())), ["op1", "op3"]);
        // A match from the start only, as Python's re.match.
        assert!(only(|s| s.name = Some(Regex::new("p1").unwrap())).is_empty());
        assert_eq!(only(|s| s.min_time_ms = Some(0.02)), ["op1"]);
        assert_eq!(only(|s| s.order = Order::Name), ["op1", "op2", "op3"]);
        assert_eq!(only(|s| s.order = Order::Flops)[0], "op1");
        let mut mean = selection(Grouping::Type, 20);
        mean.aggregate = Some(Aggregate::Mean);
        let (types, _, _) = rows(&profile, &mean);
        let elemwise = types.iter().find(|r| r.name == "Elemwise").unwrap();
        assert!((elemwise.time_ms - 0.01).abs() < 1e-12 && elemwise.count == 2);
    }

    #[test]
    fn rows_are_sorted_per_iteration_and_shares_add_up() {
        let (rows, rest, selected) = rows(&profile(), &selection(Grouping::Opr, 2));
        assert!(selected.is_none(), "no filter");
        assert_eq!(rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["op1", "op2"]);
        assert!((rows[0].time_ms - 0.06).abs() < 1e-12);
        assert!((rows[0].share - 75.0).abs() < 1e-9);
        assert_eq!(rows[0].flops, Some(6e6));
        assert!((rows[0].gflops_per_s.unwrap() - 100.0).abs() < 1e-9);
        assert_eq!(rows[1].gflops_per_s, None);
        let rest = rest.unwrap();
        assert_eq!((rest.rows, rest.count), (1, 1));
        let total: f64 = rows.iter().map(|r| r.share).sum::<f64>() + rest.share;
        assert!((total - 100.0).abs() < 1e-9);
    }

    /// Filtered rows keep their share of all operator time, and what the
    /// filter kept adds up apart.
    #[test]
    fn filtered_rows_share_the_whole_total() {
        let mut elemwise = selection(Grouping::Opr, 20);
        elemwise.types = vec!["Elemwise".into()];
        let (rows, _, selected) = rows(&profile(), &elemwise);
        let selected = selected.unwrap();
        assert!((rows[0].share - 12.5).abs() < 1e-9, "{rows:?}");
        assert_eq!((selected.operators, selected.of), (2, 3));
        assert!((selected.share - 25.0).abs() < 1e-9 && (selected.time_ms - 0.02).abs() < 1e-12);
    }

    #[test]
    fn by_type_counts_operators() {
        let (rows, rest, _) = rows(&profile(), &selection(Grouping::Type, 20));
        assert!(rest.is_none());
        assert_eq!(rows[1].name, "Elemwise");
        assert_eq!(rows[1].count, 2);
        assert!((rows[1].time_ms - 0.02).abs() < 1e-12);
        assert_eq!(rows[1].memory_bytes, Some(2000.0));
    }

    #[test]
    fn a_gap_is_explained_only_beyond_the_tolerance() {
        let profile = profile();
        let operators = operator_ms(&profile.iterations);
        assert!((operators - 0.08).abs() < 1e-12);
        assert!(explain_gap(&profile.iterations, operators, 0.09).is_none());
        let gap = explain_gap(&profile.iterations, operators, 0.1).unwrap();
        assert!(
            gap.contains("0.010 ms before") && gap.contains("0.010 ms after"),
            "{gap}"
        );
        assert!(gap.contains("0.000 ms between"), "{gap}");
    }
}
