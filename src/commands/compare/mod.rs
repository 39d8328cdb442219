//! `mge compare`: two sets of tensors, a row each, and for two io dumps the
//! first var where the runs part ways; or two runs of models (`runs`), timed
//! against each other (`timing`); or two folders of models, pair by pair
//! (`folders`). The modules look down only: `two_runs` (the sides) below
//! `by_op`, below `timing`, below `runs`, below `folders`.

mod by_op;
mod folders;
mod runs;
mod structure;
mod timing;
mod two_runs;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::cli::CompareArgs;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, differing_sources, first_divergence, unread_differing, Rules, Tolerance};
use crate::exit::CheckFailed;
use crate::options::EngineOption;
use crate::report::bmf;
use crate::report::ci::CiReports;
use crate::report::compare::{CompareReport, Walk};
use crate::report::junit;
use crate::report::made_by::Making;
use crate::report::print;
use crate::settings::Global;
use crate::settings::{comparison_rules, EngineSettings};
use crate::text::{differ, part_of};
use folders::FolderModels;
use runs::RunsSettings;
use structure::Opening;

/// What `mge compare` was asked, turned once from `CompareArgs`.
pub struct CompareSettings {
    rules: Rules,
    json: bool,
    /// `--junit FILE`: runs of models only.
    junit: Option<PathBuf>,
    /// `--markdown FILE`, the step summary and annotations: runs of models only.
    ci: CiReports,
    /// `--bmf FILE`, claimed: timed runs of models only.
    bmf: Option<PathBuf>,
    sides: Sides,
}

/// What is compared.
enum Sides {
    /// Two sets of tensors: files, folders, io dumps.
    Tensors { a: PathBuf, b: PathBuf },
    /// Two models' graphs, from their files (`--structure`), each opened
    /// with its side's key.
    Structures {
        models: [PathBuf; 2],
        openings: [Opening; 2],
    },
    /// Two runs of models: A and B, or A twice; their runs kept in `keep`,
    /// a folder that reproduces their failure written in `repro`.
    Runs {
        runs: Box<RunsSettings>,
        models: [PathBuf; 2],
        keep: Option<PathBuf>,
        repro: Option<PathBuf>,
    },
    /// Two folders of models, pair by pair (the `models` under them, of
    /// `--shard` only): `jobs` pairs' outputs at a time.
    Folders {
        runs: Box<RunsSettings>,
        folders: [PathBuf; 2],
        models: FolderModels,
        jobs: usize,
    },
}

impl CompareSettings {
    pub fn from_args(args: CompareArgs, global: &Global) -> Result<CompareSettings> {
        let close = (args.atol.is_some() || args.rtol.is_some()).then(|| Tolerance::Close {
            atol: args.atol.unwrap_or(0.0),
            rtol: args.rtol.unwrap_or(0.0),
        });
        let rules = comparison_rules(&args.comparison, close)?;
        let listed = match &args.b {
            Some(b) => FolderModels::list(&args.a, b, args.shard)?,
            None => None,
        };
        if listed.is_none() && (args.shard.is_some() || args.jobs > 1) {
            bail!("--shard and -j/--jobs share out the models of two folders; A and B are not two folders of models");
        }
        if args.structure {
            return structure_settings(args, global);
        }
        let sides = match (listed, args.b) {
            (Some(models), Some(b)) => {
                if args.runs.keep.is_some() {
                    bail!("--keep keeps the runs of one pair: compare that pair's models alone to keep them");
                }
                if args.runs.repro.dir.is_some() {
                    bail!("--repro writes the folder of one pair: compare the failing pair's models alone to write it");
                }
                Sides::Folders {
                    runs: Box::new(RunsSettings::from_args(&args.runs, global)?),
                    folders: [args.a, b],
                    models,
                    jobs: usize::try_from(args.jobs).unwrap_or(usize::MAX),
                }
            }
            (_, b) if runs::is_model(&args.a) => Sides::Runs {
                models: runs::two_models(args.a, b, &args.runs)?,
                runs: Box::new(RunsSettings::from_args(&args.runs, global)?),
                keep: args.runs.keep,
                repro: args.runs.repro.dir,
            },
            (_, None) => bail!(
                "give B to compare with {} (a model alone runs twice with --a-options/--b-options)",
                args.a.display()
            ),
            (_, Some(b)) => {
                if runs::wants_runs(&args.runs) || args.junit.is_some() || args.markdown.is_some() || args.bmf.is_some()
                {
                    bail!(
                        "feeds, engine options, timing, --junit, --markdown, --bmf and --a-options/--b-options/--b-naive/--keep/--repro are for runs of models; {} is not a model",
                        args.a.display()
                    );
                }
                Sides::Tensors { a: args.a, b }
            }
        };
        let ci = match sides {
            Sides::Tensors { .. } => CiReports::default(),
            _ => CiReports::from_flags(args.markdown, args.json)?,
        };
        if let Sides::Runs { runs, .. } | Sides::Folders { runs, .. } = &sides {
            if args.bmf.is_some() && runs.timing.is_none() {
                bail!("--bmf writes the timing, and --no-timing or --b-naive leaves it out");
            }
        }
        Ok(CompareSettings {
            rules,
            json: args.json,
            junit: args.junit,
            ci,
            bmf: bmf::claim(args.bmf.as_deref())?,
            sides,
        })
    }
}

/// `--structure`: two model files, read and nothing run; of the engine
/// options (both sides' and each one's own), only those that open a file.
fn structure_settings(args: CompareArgs, global: &Global) -> Result<CompareSettings> {
    let b = match args.b {
        Some(b) if runs::is_model(&args.a) && runs::is_model(&b) => b,
        _ => bail!("--structure compares the graphs of two model files: give A.mge and B.mge"),
    };
    let runs_nothing = "--structure reads the two files and runs nothing";
    if runs::runs_alone(&args.runs) || args.junit.is_some() || args.markdown.is_some() || args.bmf.is_some() {
        bail!("{runs_nothing}: feeds, runtimes, timing, --by-op, --junit, --markdown and --bmf are for runs");
    }
    let runs = &args.runs;
    let opening = |name: &str, words: &Option<String>| -> Result<Opening> {
        let (options, lite_lib) = two_runs::side_options(name, &runs.engine.given, words)?;
        if lite_lib.is_some() {
            bail!("{runs_nothing}: --lite-lib in --{name}-options is for runs");
        }
        if let Some(option) = options
            .iter()
            .find(|option| !matches!(option, EngineOption::ModelKey(_) | EngineOption::ModelDecryption(_)))
        {
            bail!(
                "{runs_nothing}: {} is for runs (of the engine options, --model-key and --model-decryption open the files)",
                option.flag_and_value().0
            );
        }
        let settings = EngineSettings::from_given(options, global).with_context(|| format!("side {name}"))?;
        Ok(Opening::of(&settings))
    };
    let openings = [opening("a", &runs.a_options)?, opening("b", &runs.b_options)?];
    Ok(CompareSettings {
        rules: Rules::default(),
        json: args.json,
        junit: None,
        bmf: None,
        ci: CiReports::default(),
        sides: Sides::Structures {
            models: [args.a, b],
            openings,
        },
    })
}

pub fn compare(settings: CompareSettings, global: &Global) -> Result<()> {
    let CompareSettings {
        rules,
        json,
        junit,
        ci,
        bmf,
        sides,
    } = settings;
    match sides {
        Sides::Folders {
            runs: run_settings,
            folders,
            models,
            jobs,
        } => {
            let report =
                folders::compare_folders(&run_settings, &folders, &models, jobs, rules, junit.as_deref(), global)?;
            let suites = report.junit_suites();
            junit::write(junit.as_deref(), "mge compare", &suites)?;
            bmf::write(bmf.as_deref(), &report.latencies())?;
            print(&report, json, &Making::new(&global.runtime, None, &[]))?;
            ci.write("mge compare", &suites)?;
            if report.failed > 0 {
                let failed = part_of(report.failed, report.pairs.len(), "pair");
                return Err(CheckFailed(format!("{failed} failed")).into());
            }
            Ok(())
        }
        Sides::Runs {
            runs: run_settings,
            models,
            keep,
            repro,
        } => {
            let report = runs::compare_runs(
                &run_settings,
                &models,
                keep.as_deref(),
                repro.as_deref(),
                rules,
                junit.as_deref(),
                global,
            )?;
            let suites = [report.junit_suite()];
            junit::write(junit.as_deref(), "mge compare", &suites)?;
            bmf::write(bmf.as_deref(), &report.latencies())?;
            print(&report, json, &Making::new(&global.runtime, None, &[]))?;
            ci.write("mge compare", &suites)?;
            let failures = report.failures();
            if !failures.is_empty() {
                return Err(CheckFailed(failures.join("; ")).into());
            }
            Ok(())
        }
        Sides::Structures { models, openings } => {
            let [a, b] = &openings;
            structure::compare_structures([models[0].as_path(), models[1].as_path()], [a, b], json)
        }
        Sides::Tensors { a, b } => {
            let (a_side, b_side) = (Side::open(&a)?, Side::open(&b)?);
            let report = compare_opened(&a_side, &b_side, rules, (a.display(), b.display()))?;
            print(&report, json, &Making::without_engine())?;
            verdict(report.failed, report.tensors.len())
        }
    }
}

/// Compares two opened sides; for two io dumps, walks them to where they part.
fn compare_opened(a: &Side, b: &Side, rules: Rules, names: (impl ToString, impl ToString)) -> Result<CompareReport> {
    let rows = compare_sides(a, b, &rules)?;
    rules.check_names(rows.iter().map(|row| row.name.as_str()))?;
    let walk = (a.is_io_dump() && b.is_io_dump()).then(|| Walk {
        sources: differing_sources(&rows),
        divergence: first_divergence(&rows, a.outputs()),
        unread: unread_differing(&rows, a.outputs()),
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
fn verdict(failed: usize, count: usize) -> Result<()> {
    if failed > 0 {
        return Err(CheckFailed(format!("{} {}", part_of(failed, count, "tensor"), differ(failed))).into());
    }
    Ok(())
}
