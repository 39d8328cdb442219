//! `mge compare`: two sets of tensors, a row each, and for two io dumps the
//! first var where the runs part ways; or two runs of models (`runs`), timed
//! against each other (`timing`); or two folders of models, pair by pair
//! (`folders`).

mod folders;
mod runs;
mod timing;

use anyhow::{bail, Context, Result};

use super::settings::comparison_rules;
use super::{CheckFailed, Global};
use crate::cli::CompareArgs;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, differing_sources, first_divergence, Rules, Tolerance};
use crate::output_files::{claim_file, write_atomically};
use crate::report::compare::{CompareReport, Walk};
use crate::report::junit::{junit_xml, Suite};
use crate::report::print;

pub fn compare(args: CompareArgs, global: &Global) -> Result<()> {
    let close = (args.atol.is_some() || args.rtol.is_some()).then(|| Tolerance::Close {
        atol: args.atol.unwrap_or(0.0),
        rtol: args.rtol.unwrap_or(0.0),
    });
    let rules = comparison_rules(&args.comparison, close)?;
    let folders = match &args.b {
        Some(b) => folders::are_model_folders(&args.a, b)?,
        None => false,
    };
    if !folders && (args.shard.is_some() || args.jobs > 1) {
        bail!("--shard and -j/--jobs share out the models of two folders; A and B are not two folders of models");
    }
    if folders {
        let report = folders::compare_folders(&args, rules, global)?;
        write_junit(&args, &report.junit_suites())?;
        print(&report, args.json)?;
        if report.failed > 0 {
            return Err(CheckFailed(format!("{} of {} pairs failed", report.failed, report.pairs.len())).into());
        }
        return Ok(());
    }
    if runs::is_model(&args.a) {
        let report = runs::compare_runs(&args, rules, global)?;
        write_junit(&args, &[report.junit_suite()])?;
        print(&report, args.json)?;
        let failures = report.failures();
        if !failures.is_empty() {
            return Err(CheckFailed(failures.join("; ")).into());
        }
        return Ok(());
    }
    let Some(b_path) = &args.b else {
        bail!(
            "give B to compare with {} (a model alone runs twice with --a-options/--b-options)",
            args.a.display()
        );
    };
    if runs::wants_runs(&args) {
        bail!(
            "feeds, engine options, timing, --junit and --a-options/--b-options/--b-naive/--keep are for runs of models; {} is not a model",
            args.a.display()
        );
    }
    let (a, b) = (Side::open(&args.a)?, Side::open(b_path)?);
    let report = compare_opened(&a, &b, rules, (args.a.display(), b_path.display()))?;
    print(&report, args.json)?;
    verdict(report.failed, report.tensors.len(), "tensors")
}

/// Claims `--junit`'s file before any run: not one of the inputs, nor stdout.
fn claim_junit(args: &CompareArgs) -> Result<()> {
    match &args.junit {
        Some(junit) => claim_file("--junit", junit).with_context(|| format!("--junit {}", junit.display())),
        None => Ok(()),
    }
}

/// Writes `--junit`'s report, when asked for.
fn write_junit(args: &CompareArgs, suites: &[Suite]) -> Result<()> {
    match &args.junit {
        Some(junit) => write_atomically(junit, junit_xml("mge compare", suites).as_bytes()).context("--junit"),
        None => Ok(()),
    }
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
