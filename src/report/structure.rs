//! How two models' graphs differ (`model::diff`): the report of `compare
//! --structure`, and its lines in the report of two runs when the graphs differ.

use std::fmt::Write;

use serde::Serialize;

use super::table::Table;
use super::Report;
use crate::model::diff::{DumpedAs, IoChange, IoVar, OpChange, OpRef, Sides, StructureDiff, Totals};
use crate::text::{counted, number, printable};

/// `mge compare A.mge B.mge --structure`.
#[derive(Serialize)]
pub struct StructureReport {
    pub a: String,
    pub b: String,
    pub structure: StructureDiff,
    /// Reading and comparing both files.
    pub seconds: f64,
}

impl Report for StructureReport {
    fn to_text(&self) -> String {
        let mut out = format!("a  {}\nb  {}\n\n", printable(&self.a), printable(&self.b));
        out.push_str(&structure_text(&self.structure));
        out
    }
}

/// The diff as lines: a summary, what differs, the totals, how each was dumped.
pub fn structure_text(diff: &StructureDiff) -> String {
    let mut out = String::new();
    if diff.same() {
        let _ = writeln!(
            out,
            "graph       same graph: {} matched, {} parameters in {}, {}",
            counted(diff.ops_matched, "operator"),
            diff.params.a.count,
            counted(diff.params.a.tensors, "tensor"),
            match diff.macs.a {
                Some(_) => format!("{} MACs", count_text(diff.macs.a)),
                None => format!("MACs {}", total_text(None, diff.uncounted.a.as_deref())),
            }
        );
    } else {
        let _ = writeln!(
            out,
            "graph       differs: {} only in a, {} only in b, {} changed, {} matched",
            counted(diff.ops_only_a.len(), "operator"),
            diff.ops_only_b.len(),
            diff.ops_changed.len(),
            diff.ops_matched
        );
        differences_text(&mut out, diff);
        totals_text(&mut out, diff);
    }
    dumped_text(&mut out, &diff.dumped);
    out
}

/// A line per operator only in one, per changed one, per input and output that differs.
fn differences_text(out: &mut String, diff: &StructureDiff) {
    let only = |out: &mut String, side: &str, ops: &[OpRef]| {
        for op in ops {
            let _ = writeln!(
                out,
                "  only in {side}  '{}' ({}, var '{}')",
                printable(&op.name),
                printable(&op.op_type),
                printable(&op.var)
            );
        }
    };
    only(out, "a", &diff.ops_only_a);
    only(out, "b", &diff.ops_only_b);
    for change in &diff.ops_changed {
        let _ = writeln!(out, "  changed    {}", changed_text(change));
    }
    for (what, changes) in [("input", &diff.inputs), ("output", &diff.outputs)] {
        for change in changes {
            let _ = writeln!(out, "  {what:<9}  {}", io_text(change));
        }
    }
}

/// `'conv2' (Convolution): param pad_h 1 -> 4; weights conv2.weight (16,16,3,3) -> (16,16,9,9)`.
fn changed_text(change: &OpChange) -> String {
    let name = match change.a_name == change.b_name {
        true => format!("'{}'", printable(&change.a_name)),
        false => format!("'{}' / '{}'", printable(&change.a_name), printable(&change.b_name)),
    };
    let groups: Vec<String> = change
        .changes
        .iter()
        .map(|word| {
            let details: Vec<&str> = change
                .details
                .iter()
                .filter(|detail| detail.change == *word)
                .map(|detail| detail.detail.as_str())
                .collect();
            format!("{word} {}", details.join(", "))
        })
        .collect();
    format!(
        "{name} ({}): {}",
        printable(&change.op_type),
        printable(&groups.join("; "))
    )
}

fn io_text(change: &IoChange) -> String {
    let var = |var: &IoVar| {
        let shape = var.shape.as_ref().map(|shape| {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", dims.join(","))
        });
        let described: Vec<String> = shape.into_iter().chain(var.dtype.clone()).collect();
        let name = var
            .name
            .as_deref()
            .map_or_else(|| "(unnamed)".to_string(), |name| format!("'{}'", printable(name)));
        format!("{name} {}", described.join(" "))
    };
    match (&change.a, &change.b) {
        (Some(a), Some(b)) => format!("{} -> {} ({})", var(a), var(b), change.changes.join(", ")),
        (Some(a), None) => format!("{} only in a", var(a)),
        (None, Some(b)) => format!("{} only in b", var(b)),
        (None, None) => String::new(),
    }
}

/// Parameters, MACs and FLOPs of both, and the types whose cost differs.
fn totals_text(out: &mut String, diff: &StructureDiff) {
    let params = &diff.params;
    let _ = write!(
        out,
        "parameters  a {} in {} tensors ({} bytes), b {} in {} tensors ({} bytes)",
        params.a.count, params.a.tensors, params.a.bytes, params.b.count, params.b.tensors, params.b.bytes
    );
    let _ = write!(out, "; tensors that differ: {}", params.differing_tensors);
    if let Some(largest) = &params.largest_difference {
        let _ = write!(
            out,
            ", the most '{}' by {}",
            printable(&largest.b_var),
            number(largest.max_abs_diff)
        );
    }
    out.push('\n');
    let _ = writeln!(out, "MACs        {}", totals_of(&diff.macs, &diff.uncounted));
    let _ = writeln!(out, "FLOPs       {}", totals_of(&diff.flops, &diff.uncounted));
    if diff.types.is_empty() {
        return;
    }
    let mut table = Table::new(&["type", "a", "b", "a MACs", "b MACs"], &[1, 2, 3, 4]);
    for row in &diff.types {
        let counted = row.macs.a.unwrap_or(0) > 0 || row.macs.b.unwrap_or(0) > 0;
        let macs = |macs: Option<u64>| match counted {
            true => count_text(macs),
            false => String::new(),
        };
        table.row(vec![
            row.op_type.clone(),
            row.count.a.to_string(),
            row.count.b.to_string(),
            macs(row.macs.a),
            macs(row.macs.b),
        ]);
    }
    out.push_str(&table.render("  "));
}

fn totals_of(totals: &Totals, uncounted: &Sides<Option<String>>) -> String {
    let ratio = match (totals.a, totals.b) {
        (Some(a), Some(b)) if a > 0 => format!(" (b/a {:.3})", b as f64 / a as f64),
        _ => String::new(),
    };
    format!(
        "a {}, b {}{ratio}",
        total_text(totals.a, uncounted.a.as_deref()),
        total_text(totals.b, uncounted.b.as_deref())
    )
}

/// A side's total, or why it is unknown: `unknown (2 operators whose shapes are known only at run time)`.
fn total_text(total: Option<u64>, uncounted: Option<&str>) -> String {
    match (total, uncounted) {
        (None, Some(why)) => format!("unknown ({why})"),
        _ => count_text(total),
    }
}

/// `15.93M`; `unknown` where an operator the count needs is not counted.
fn count_text(count: Option<u64>) -> String {
    match count {
        None => "unknown".into(),
        Some(count) if count >= 1_000_000_000 => format!("{:.2}G", count as f64 / 1e9),
        Some(count) if count >= 1_000_000 => format!("{:.2}M", count as f64 / 1e6),
        Some(count) if count >= 10_000 => format!("{:.2}K", count as f64 / 1e3),
        Some(count) => count.to_string(),
    }
}

/// `dumped      a fbs-v2 by MegEngine 1.13.0; b fbs-v1 by MegEngine 1.13.0`.
fn dumped_text(out: &mut String, dumped: &Sides<DumpedAs>) {
    let side = |side: &DumpedAs| {
        let mut text = side.format.clone();
        if side.container {
            text.push_str(" container");
        }
        if let Some(version) = side.graph.mge_version {
            // `MGB_VERSION`: major * 100000 + minor * 100 + patch; MegBrain's
            // own numbers (8.x) in dumps older than MegEngine.
            let major = version / 100_000;
            let maker = if major > 1 { "MegBrain" } else { "MegEngine" };
            let _ = write!(text, " by {maker} {major}.{}.{}", version / 100 % 1000, version % 100);
        }
        if let Some(options) = side.graph.optimize_options {
            let _ = write!(text, ", optimized for inference ({options:#x})");
        }
        text
    };
    let (a, b) = (side(&dumped.a), side(&dumped.b));
    match a == b {
        true => {
            let _ = writeln!(out, "dumped      both {a}");
        }
        false => {
            let _ = writeln!(out, "dumped      a {a}; b {b}");
        }
    }
}
