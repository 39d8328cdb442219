//! `mge run MODEL --sweep NAME:SHAPE[,SHAPE...]`: the model at each shape,
//! each in a supervised `mge run` of its own (`child_run`), so that a shape
//! that crashes, exits or hangs the engine is one row and the sweep goes on.
//! Every shape runs under the same engine options, the swept inputs' feeds
//! following the shape (`feeds::at_shapes`); `--repro` writes a folder for
//! each shape that is not `ok`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::{run_folder, RunSettings};
use crate::cli::RunArgs;
use crate::exit::CheckFailed;
use crate::feeds::{at_shapes, named_spec, FeedOptions, ShapedFeed};
use crate::loading::Testcases;
use crate::messages::say;
use crate::mge_command::MgeCommand;
use crate::options::{EngineOption, Heading};
use crate::output_files::npy_file_stem;
use crate::reduce::Failed;
use crate::report::made_by::Making;
use crate::report::print;
use crate::report::repro::{discard_record, FailingModel, Repro};
use crate::report::sweep::{not_ok, shape_label, Row, Shapes, Status, SweepReport};
use crate::runner::timing::Timing;
use crate::runtime::{self, Located};
use crate::settings::Global;
use crate::supervise::child_run::{run_child, ChildRun, Watch};
use crate::supervise::parent::Outcome;
use crate::supervise::Ending;
use crate::supervise::Scratch;
use crate::tensor::{DType, TensorInfo};
use crate::text::part_of;

/// A shape's run without `--timeout`: room for a large model's load and
/// runs, short of waiting forever on an engine that hangs.
const SHAPE_TIMEOUT: Duration = Duration::from_secs(600);

/// `--sweep`, checked: each swept input with its shapes, all as many.
pub struct Sweep {
    inputs: Vec<(String, Vec<Vec<usize>>)>,
    /// Each shape's run stops after this (`--timeout`, else `SHAPE_TIMEOUT`).
    timeout: Duration,
}

impl Sweep {
    /// `None` without `--sweep`; the run options a sweep has no use for are refused.
    pub fn from_args(args: &RunArgs) -> Result<Option<Sweep>> {
        if args.sweep.is_empty() {
            return Ok(None);
        }
        let refused = [
            (args.outputs.dir.is_some(), "--outputs"),
            (!args.expect.is_empty(), "--expect"),
            (args.profile.is_some(), "--profile"),
            (args.iterations.all_times, "--all-times"),
            (args.concurrency.instances > 1, "--instances"),
        ];
        if let Some((_, option)) = refused.iter().find(|(given, _)| *given) {
            bail!("{option} is for one run; --sweep runs each shape on its own and reports a row per shape: leave {option} out");
        }
        let mut inputs: Vec<(String, Vec<Vec<usize>>)> = Vec::new();
        for arg in &args.sweep {
            let (name, shapes) = arg
                .rsplit_once(':')
                .filter(|(name, shapes)| !name.is_empty() && !shapes.is_empty())
                .with_context(|| {
                    format!("--sweep {arg}: expected NAME:SHAPE[,SHAPE...], e.g. data:1x3x224x224,8x3x224x224")
                })?;
            let shapes = shapes
                .split(',')
                .map(|shape| parse_shape(shape.trim()).with_context(|| format!("--sweep {arg}")))
                .collect::<Result<Vec<_>>>()?;
            if inputs.iter().any(|(swept, _)| swept == name) {
                bail!("--sweep {arg}: input '{name}' is swept twice: give all its shapes in one --sweep");
            }
            if let Some((first, its)) = inputs.first().filter(|(_, its)| its.len() != shapes.len()) {
                bail!(
                    "--sweep {arg}: {} shapes, and '{first}' has {}: inputs swept together vary together, shape by shape",
                    shapes.len(),
                    its.len()
                );
            }
            inputs.push((name.to_string(), shapes));
        }
        Ok(Some(Sweep {
            inputs,
            timeout: args.deadline.timeout.unwrap_or(SHAPE_TIMEOUT),
        }))
    }

    fn count(&self) -> usize {
        self.inputs[0].1.len()
    }

    /// The shapes of sweep step `at`, each swept input's.
    fn shapes(&self, at: usize) -> Shapes {
        Shapes(
            self.inputs
                .iter()
                .map(|(name, shapes)| (name.clone(), shapes[at].clone()))
                .collect(),
        )
    }
}

/// `1x3x224x224`: positive dimensions joined by `x`.
fn parse_shape(text: &str) -> Result<Vec<usize>> {
    text.split('x')
        .map(|dim| dim.trim().parse::<usize>().ok().filter(|&dim| dim > 0))
        .collect::<Option<Vec<_>>>()
        .with_context(|| format!("'{text}' is not a shape: positive dimensions joined by x, e.g. 1x3x224x224"))
}

/// Runs the sweep of `settings` (`--sweep`), prints its rows and fails (exit
/// 1) when a shape is not `ok`.
pub fn sweep(mut settings: RunSettings, sweep: Sweep, global: &Global) -> Result<()> {
    // Each shape is fed, a container's model too; its folder's command says so.
    settings.testcases = Testcases::Ignore;
    let located = runtime::locate(&global.runtime)?;
    runtime::ensure_runs_on(&located, settings.model.engine.network.device)?;
    let inputs = model_inputs(&settings, &located, sweep.timeout, global.verbose)?;
    // Removed on every way out; one a killed sweep left goes with the next `mge` that starts a child.
    let scratch = Scratch::new()?;
    // Every shape's feeds before any run: a feed that cannot follow a shape is the command's error.
    let feeds = (0..sweep.count())
        .map(|at| {
            shape_feeds(
                &settings,
                &inputs,
                &sweep.shapes(at),
                &scratch.path().join(at.to_string()),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let mut repro = settings.repro.as_deref().map(Repro::stage).transpose()?;
    let mut rows = Vec::new();
    for (at, specs) in feeds.iter().enumerate() {
        let shapes = sweep.shapes(at);
        if !global.quiet {
            say(&format!("sweep: {} ({} of {})", shapes.label(), at + 1, feeds.len()));
        }
        let record = repro.as_ref().map(|repro| repro.record_folder(&format!("sweep-{at}")));
        let mut command = shape_run(&settings, specs, global.verbose).runtime(Ok(&located));
        if let Some(record) = &record {
            command = command.record_for_repro(record);
        }
        let ran = run_child(&command, Watch::reporting(Some(sweep.timeout), global.verbose))?;
        let mut row = row_of(shapes, &ran)?;
        if let (Some(repro), Some(record)) = (&mut repro, record) {
            if row.status != Status::Ok {
                let shape = Shape {
                    row: &row,
                    ran: &ran,
                    record: record.clone(),
                    timeout: sweep.timeout,
                };
                match shape.write_folder(repro, &settings, &located, global) {
                    Ok(folder) => row.repro = Some(folder),
                    Err(err) => global.warn(format!("{err:#}")),
                }
            }
            discard_record(&record);
        }
        rows.push(row);
    }
    if let Some(repro) = repro {
        // Each shape's folder that could not be written was a warning of its own.
        repro.finish(Ok(()), |warning| global.warn(warning));
    }
    let report = SweepReport {
        model: settings.model.path.display().to_string(),
        device: settings.model.engine.network.device.to_string(),
        warmup: settings.plan.warmup,
        iterations: settings.plan.iterations,
        sweep: rows,
    };
    let making = Making::new(&global.runtime, None, &settings.model.engine.given);
    print(&report, settings.json, &making)?;
    let failed: Vec<&Row> = report.failed().collect();
    if !failed.is_empty() {
        return Err(CheckFailed(format!(
            "{} not ok: {}",
            part_of(failed.len(), report.sweep.len(), "shape"),
            not_ok(&failed)
        ))
        .into());
    }
    Ok(())
}

/// The model's inputs as the engine loads it: an `mge info` of its own, so
/// that a model the engine cannot load is one error, not a row per shape.
fn model_inputs(
    settings: &RunSettings,
    located: &Located,
    timeout: Duration,
    verbose: bool,
) -> Result<Vec<TensorInfo>> {
    let loading: Vec<EngineOption> = settings
        .model
        .engine
        .given
        .iter()
        .filter(|option| option.kind().definition().heading == Heading::Loading)
        .cloned()
        .collect();
    let command = MgeCommand::info(&settings.model.path)
        .engine(&loading)
        .runtime(Ok(located))
        .verbose(verbose);
    let ran = run_child(&command, Watch::reporting(Some(timeout), verbose))?;
    if !matches!(ran.outcome, Outcome::Ran) {
        bail!("cannot read the model's inputs: {}", ran.outcome);
    }
    #[derive(Deserialize)]
    struct Info {
        inputs: Vec<Input>,
    }
    #[derive(Deserialize)]
    struct Input {
        name: String,
        shape: Vec<usize>,
        dtype: String,
    }
    let info: Info = serde_json::from_str(&ran.report).context("`mge info --json` wrote no report of the model")?;
    info.inputs
        .into_iter()
        .map(|input| {
            Ok(TensorInfo {
                dtype: DType::from_name(&input.dtype).with_context(|| {
                    format!(
                        "input '{}' has dtype {}, which mge cannot feed",
                        input.name, input.dtype
                    )
                })?,
                name: input.name,
                shape: input.shape,
            })
        })
        .collect()
}

/// The `-i` specs of one shape of the sweep: what `at_shapes` makes, values
/// made here written as `.npy` files into `folder`.
fn shape_feeds(settings: &RunSettings, inputs: &[TensorInfo], shapes: &Shapes, folder: &Path) -> Result<Vec<String>> {
    let mut swept = Vec::new();
    for (name, shape) in &shapes.0 {
        let Some(index) = inputs.iter().position(|input| input.name == *name) else {
            let names: Vec<&str> = inputs.iter().map(|input| input.name.as_str()).collect();
            bail!(
                "--sweep {name}: the model has no input '{name}' (its inputs: {})",
                crate::text::quoted_list(&names)
            );
        };
        swept.push((index, shape.clone()));
    }
    let feeds = &settings.model.feeds;
    let mut specs = Vec::new();
    for (name, feed) in at_shapes(&feeds.specs, inputs, &swept, &feeds.options)? {
        specs.push(match feed {
            ShapedFeed::Spec(spec) => spec,
            ShapedFeed::Values(values) => {
                std::fs::create_dir_all(folder).with_context(|| format!("cannot make {}", folder.display()))?;
                let file = folder.join(format!("{}.npy", npy_file_stem(&name)));
                std::fs::File::create(&file)
                    .and_then(|mut out| values.write_npy(&mut out))
                    .with_context(|| format!("cannot write {}", file.display()))?;
                named_spec(&name, &file.display().to_string(), inputs.len() == 1)
            }
        });
    }
    Ok(specs)
}

/// The run of one shape: the model fed `specs` under the run's engine options
/// and plan, its report as JSON.
fn shape_run(settings: &RunSettings, specs: &[String], verbose: bool) -> MgeCommand {
    let plan = &settings.plan;
    let feeds = FeedOptions {
        resize_input: false,
        ..settings.model.feeds.options
    };
    MgeCommand::run(&settings.model.path)
        .feeds(specs, &feeds)
        .engine(&settings.model.engine.given)
        .runs(plan.warmup, plan.iterations)
        .seconds("--duration", plan.duration)
        .seconds("--max-duration", plan.time_limit)
        .extra_outputs(&settings.model.extra_outputs)
        .check_finite(settings.check_finite)
        .no_testcase()
        .json()
        .verbose(verbose)
}

/// What the sweep reads of a run's JSON report.
#[derive(Deserialize)]
struct Figures {
    timing_ms: Timing,
    memory: Option<Memory>,
}

#[derive(Deserialize)]
struct Memory {
    peak_rss_bytes: u64,
}

/// The row of a shape whose run ended as `ran`.
fn row_of(shapes: Shapes, ran: &ChildRun) -> Result<Row> {
    let status = match &ran.outcome {
        Outcome::Ran => Status::Ok,
        Outcome::Ended(Ending::NonFinite { .. }) => Status::NonFinite,
        // A check of the run's own other than --check-finite: the run declined the shape.
        Outcome::Ended(_) => Status::Refused,
        Outcome::Crashed(_) => Status::Crashed,
        Outcome::Hung(_) => Status::Hung,
    };
    let mut row = Row::new(shapes, status);
    if status != Status::Ok {
        row.error = Some(ran.outcome.to_string());
    }
    // The report comes before a failed check.
    if matches!(status, Status::Ok | Status::NonFinite) {
        let figures: Figures = serde_json::from_str(&ran.report).context("a shape's run wrote no JSON report")?;
        let timing = figures.timing_ms;
        row = row.timed(
            timing.median,
            timing.median_ci95,
            figures.memory.map(|memory| memory.peak_rss_bytes),
        );
    }
    Ok(row)
}

/// A shape that is not `ok`, for its `--repro` folder.
struct Shape<'a> {
    row: &'a Row,
    ran: &'a ChildRun,
    /// Where its run recorded what it fed the engine.
    record: PathBuf,
    timeout: Duration,
}

impl Shape<'_> {
    /// Writes the shape's folder (`MODEL-SHAPE`), reduced with `--reduce`;
    /// returns its path.
    fn write_folder(
        &self,
        repro: &mut Repro,
        settings: &RunSettings,
        located: &Located,
        global: &Global,
    ) -> Result<String> {
        let model = &settings.model.path;
        let stem = npy_file_stem(&model.file_stem().unwrap_or_default().to_string_lossy());
        let labels: Vec<String> = self.row.shapes.0.iter().map(|(_, shape)| shape_label(shape)).collect();
        let failing = FailingModel {
            model,
            record: Some(self.record.clone()),
            failure: self.row.error.clone().unwrap_or_default(),
            engine_log: self.ran.transcript.clone(),
            runtime: Some(located),
            choice: &global.runtime,
        };
        let failed = Failed::of(&self.ran.outcome);
        repro.add_named(&format!("{stem}-{}", labels.join("-")), failing, |folder| {
            run_folder(
                settings,
                (Some(self.timeout), failed),
                Some(located),
                global.verbose,
                folder,
            )
        })
    }
}
