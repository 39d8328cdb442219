//! `mge compare`: two sets of tensors, a row each, and for two io dumps the
//! first var where the runs part ways; or two runs of models (`runs`).

mod runs;

use std::path::PathBuf;

use anyhow::{bail, Result};

use super::settings::comparison_rules;
use super::{CheckFailed, Global};
use crate::cli::CompareArgs;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, differing_sources, first_divergence, Rules, Tolerance};
use crate::report::compare::{CompareReport, Walk};
use crate::report::print;
use runs::TwoRuns;

/// What `mge compare` was asked, turned once from `CompareArgs`.
pub struct CompareSettings {
    rules: Rules,
    json: bool,
    sides: Sides,
}

/// What is compared.
enum Sides {
    /// Two sets of tensors: files, folders, io dumps.
    Tensors { a: PathBuf, b: PathBuf },
    /// Two runs of models.
    Runs(Box<TwoRuns>),
}

impl CompareSettings {
    pub fn from_args(args: CompareArgs, global: &Global) -> Result<CompareSettings> {
        let close = (args.atol.is_some() || args.rtol.is_some()).then(|| Tolerance::Close {
            atol: args.atol.unwrap_or(0.0),
            rtol: args.rtol.unwrap_or(0.0),
        });
        let rules = comparison_rules(&args.comparison, close)?;
        let sides = if runs::is_model(&args.a) {
            Sides::Runs(Box::new(TwoRuns::from_args(args.a, args.b, args.runs, global)?))
        } else {
            let Some(b) = args.b else {
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
            Sides::Tensors { a: args.a, b }
        };
        Ok(CompareSettings {
            rules,
            json: args.json,
            sides,
        })
    }
}

pub fn compare(settings: CompareSettings, global: &Global) -> Result<()> {
    let CompareSettings { rules, json, sides } = settings;
    match sides {
        Sides::Runs(runs) => {
            let report = runs.compare(rules, global)?;
            print(&report, json)?;
            verdict(report.failed, report.outputs.len(), "outputs")
        }
        Sides::Tensors { a, b } => {
            let (a_side, b_side) = (Side::open(&a)?, Side::open(&b)?);
            let report = compare_opened(&a_side, &b_side, rules, (a.display(), b.display()))?;
            print(&report, json)?;
            verdict(report.failed, report.tensors.len(), "tensors")
        }
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
