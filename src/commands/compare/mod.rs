//! `mge compare`: two sets of tensors, a row each, and for two io dumps the
//! first var where the runs part ways; or two runs of models (`runs`).

mod runs;

use anyhow::{bail, Result};

use super::settings::comparison_rules;
use super::{CheckFailed, Global};
use crate::cli::CompareArgs;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, differing_sources, first_divergence, Rules, Tolerance};
use crate::report::compare::{CompareReport, Walk};
use crate::report::print;

pub fn compare(args: CompareArgs, global: &Global) -> Result<()> {
    let close = (args.atol.is_some() || args.rtol.is_some()).then(|| Tolerance::Close {
        atol: args.atol.unwrap_or(0.0),
        rtol: args.rtol.unwrap_or(0.0),
    });
    let rules = comparison_rules(&args.comparison, close)?;
    if runs::is_model(&args.a) {
        let report = runs::compare_runs(&args, rules, global)?;
        print(&report, args.json)?;
        return verdict(report.failed, report.outputs.len(), "outputs");
    }
    let Some(b_path) = &args.b else {
        bail!(
            "give B to compare with {} (a model alone runs twice with --a-options/--b-options)",
            args.a.display()
        );
    };
    if runs::wants_runs(&args.runs) {
        bail!(
            "feeds, engine options and --a-options/--b-options/--b-naive/--keep are for two runs of models; {} is not a model",
            args.a.display()
        );
    }
    let (a, b) = (Side::open(&args.a)?, Side::open(b_path)?);
    let report = compare_opened(&a, &b, rules, (args.a.display(), b_path.display()))?;
    print(&report, args.json)?;
    verdict(report.failed, report.tensors.len(), "tensors")
}

/// Compares two opened sides; for two io dumps, walks them to where they part.
fn compare_opened(a: &Side, b: &Side, rules: Rules, names: (impl ToString, impl ToString)) -> Result<CompareReport> {
    let rows = compare_sides(a, b, &rules)?;
    rules.check_names(rows.iter().map(|row| row.name.as_str()))?;
    let walk = (a.is_io_dump() && b.is_io_dump()).then(|| Walk {
        sources: differing_sources(&rows),
        divergence: first_divergence(&rows),
    });
    Ok(CompareReport::new(
        names.0.to_string(),
        names.1.to_string(),
        rules,
        rows,
        walk,
    ))
}

/// Exit 1 when any of the `count` tensors differs.
fn verdict(failed: usize, count: usize, what: &str) -> Result<()> {
    if failed > 0 {
        return Err(CheckFailed(format!("{failed} of {count} {what} differ")).into());
    }
    Ok(())
}
