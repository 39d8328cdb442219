//! `mge profile`: run with the engine's profiler, print the operators that cost
//! the time and write a Chrome trace; or the same from a profile file the
//! engine wrote elsewhere (`--analyze`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{ProfileAggregate, ProfileArgs, ProfileBy, ProfileFilterArgs, ProfileOrder};
use crate::loading::{prepare, Testcases};
use crate::output_files::claim_file;
use crate::profile::{read_recorded, Profile, ProfileCapture};
use crate::report::made_by::Making;
use crate::report::print;
use crate::report::profile::{
    explain_gap, operator_host_ms, operator_ms, rows, Aggregate, Grouping, Order, ProfileReport, ProfileSource,
    Selection, ToolTiming,
};
use crate::report::trace::{comp_node_name, write_trace, TraceSource};
use crate::runner::timing::{ColdStart, Timing};
use crate::runner::RunPlan;
use crate::settings::Global;
use crate::settings::{plan, ModelSettings};

/// What `mge profile` was asked, turned once from `ProfileArgs`.
pub struct ProfileSettings {
    profiled: Profiled,
    /// The rows of the table.
    selection: Selection,
    json: bool,
}

/// What is profiled.
enum Profiled {
    Run(Box<ModelRun>),
    /// `--analyze FILE.json`: a profile the engine wrote elsewhere; no engine
    /// runs, and a trace is written only when asked (`-o FILE`).
    Recorded {
        file: PathBuf,
        trace: Option<PathBuf>,
    },
}

/// The model, run here.
struct ModelRun {
    model: ModelSettings,
    /// What a container's testcases are for (`--no-testcase`).
    testcases: Testcases,
    plan: RunPlan,
    /// `--all-times`.
    all_times: bool,
    /// `-o FILE`, else `<stem>.trace.json` in the current folder.
    trace: PathBuf,
}

impl ProfileSettings {
    pub fn from_args(args: ProfileArgs, global: &Global) -> Result<ProfileSettings> {
        let profiled = match args.analyze {
            Some(file) => Profiled::Recorded {
                file,
                trace: args.trace,
            },
            None => {
                let model = ModelSettings::from_args(&args.model, global)?;
                Profiled::Run(Box::new(ModelRun {
                    testcases: Testcases::unless(args.no_testcase, Testcases::FeedFirst),
                    plan: plan(&args.iterations, global),
                    all_times: args.iterations.all_times,
                    trace: args.trace.unwrap_or_else(|| default_trace_path(&model.path)),
                    model,
                }))
            }
        };
        Ok(ProfileSettings {
            profiled,
            selection: selection(&args.filters, args.by, args.top),
            json: args.json,
        })
    }
}

/// The rows `--by`, `--top` and the filters select, as MegEngine's profile_analyze does.
fn selection(filters: &ProfileFilterArgs, by: ProfileBy, top: usize) -> Selection {
    let aggregate = filters.aggregate.map(|aggregate| match aggregate {
        ProfileAggregate::Sum => Aggregate::Sum,
        ProfileAggregate::Mean => Aggregate::Mean,
        ProfileAggregate::Max => Aggregate::Max,
        ProfileAggregate::Min => Aggregate::Min,
    });
    Selection {
        by: match (by, aggregate) {
            (ProfileBy::Type, _) | (_, Some(_)) => Grouping::Type,
            (ProfileBy::Opr, None) => Grouping::Opr,
        },
        aggregate,
        top,
        types: filters.types.clone(),
        name: filters.opr_name.clone(),
        min_time_ms: filters.min_time,
        order: match filters.order_by {
            ProfileOrder::Time => Order::Time,
            ProfileOrder::Flops => Order::Flops,
            ProfileOrder::Name => Order::Name,
        },
    }
}

pub fn profile(settings: ProfileSettings, global: &Global) -> Result<()> {
    match &settings.profiled {
        Profiled::Run(run) => profile_run(run, &settings, global),
        Profiled::Recorded { file, trace } => analyze(file, trace.as_deref(), &settings),
    }
}

/// The model run here with the engine's profiler.
fn profile_run(run: &ModelRun, settings: &ProfileSettings, global: &Global) -> Result<()> {
    let model = &run.model;
    let trace = &run.trace;
    let (mut prepared, mut capture) = prepare(model, run.testcases, global, |_, options| {
        ProfileCapture::for_trace(trace, options)
    })?;
    capture.loaded(prepared.loading, &prepared.session)?;
    let feeds = prepared.feeds(global)?;
    prepared.session.feed(&feeds)?;
    let profiling_run = prepared.profile_algorithms(&feeds)?;
    let runs = prepared.measure(&run.plan, &mut capture)?;
    let cold = ColdStart::new(prepared.load_ms, profiling_run, runs.first_ms, runs.warmup_ms.clone());
    let median = Timing::from_samples(&runs.timed_ms, false).map_or(0.0, |timing| timing.median);
    prepared.profiled(cold.profiling, median);
    let device = prepared.options.device;
    let lite = prepared.finish()?;

    let profile = capture.finish();
    write_trace(trace, &profile, &TraceSource::run(&model.path, device, lite.version()?))?;
    let timing = Timing::from_samples(&runs.timed_ms, run.all_times).expect("--iter is at least 1");
    let operators = operator_ms(&profile.iterations);
    let measured = ToolTiming {
        timing_ms: cold,
        operator_percent_of_iteration: 100.0 * operators / timing.mean,
        gap: explain_gap(&profile.iterations, operators, timing.mean),
        iteration_ms: timing,
    };
    let source = ProfileSource::Model(model.path.display().to_string());
    let report = report(
        &profile,
        settings,
        source,
        device.to_string(),
        Some(measured),
        Some(trace),
    );
    let making = Making::new(&global.runtime, lite.version().ok(), &model.engine.given);
    print(&report, settings.json, &making)
}

/// `--analyze FILE.json`: the tables and trace of the execution a profile
/// written elsewhere holds. No engine runs.
fn analyze(file: &Path, trace: Option<&Path>, settings: &ProfileSettings) -> Result<()> {
    let profile = read_recorded(file)?;
    if let Some(trace) = trace {
        claim_file("-o", trace).with_context(|| format!("cannot write the trace {}", trace.display()))?;
    }
    let device = profile
        .iterations
        .iter()
        .flat_map(|iteration| &iteration.operators)
        .flat_map(|operator| &operator.device)
        .map(|span| comp_node_name(&span.track).to_string())
        .next()
        .unwrap_or_else(|| "an unnamed device".to_string());
    if let Some(trace) = trace {
        write_trace(trace, &profile, &TraceSource::recorded(file, &device))?;
    }
    let source = ProfileSource::ProfileFile(file.display().to_string());
    let report = report(&profile, settings, source, device, None, trace);
    print(&report, settings.json, &Making::without_engine())
}

/// The report of `profile` with the rows the settings select.
fn report(
    profile: &Profile,
    settings: &ProfileSettings,
    source: ProfileSource,
    device: String,
    measured: Option<ToolTiming>,
    trace: Option<&Path>,
) -> ProfileReport {
    let selection = &settings.selection;
    let (rows, rest, selected) = rows(profile, selection);
    ProfileReport {
        source,
        device,
        trace: trace.map(|trace| trace.display().to_string()),
        by: selection.by,
        aggregate: selection.aggregate,
        profiled_iterations: profile.iterations.len(),
        operator_ms: operator_ms(&profile.iterations),
        operator_host_ms: operator_host_ms(&profile.iterations),
        measured,
        rows,
        rest,
        selected,
    }
}

/// `<stem>.trace.json` in the current folder, from the model.
fn default_trace_path(source: &Path) -> PathBuf {
    let stem = source
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy());
    PathBuf::from(format!("{stem}.trace.json"))
}
