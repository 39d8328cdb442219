//! `mge profile`: run with the engine's profiler, print the operators that cost
//! the time and write a Chrome trace; or the same from a profile file the
//! engine wrote elsewhere (`--analyze`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::prepare::{prepare, Testcases};
use super::settings::{plan, ModelSettings};
use super::Global;
use crate::cli::{ProfileAggregate, ProfileArgs, ProfileBy, ProfileOrder};
use crate::output_files::claim_file;
use crate::profile::{read_recorded, Profile, ProfileCapture};
use crate::report::print;
use crate::report::profile::{
    explain_gap, operator_host_ms, operator_ms, rows, Aggregate, Grouping, Measured, Order, ProfileReport,
    ProfileSource, Selection,
};
use crate::report::trace::{comp_node_name, write_trace, TraceSource};
use crate::runner::profile_algorithms;
use crate::runner::timing::{ColdStart, Timing};

pub fn profile(args: ProfileArgs, global: &Global) -> Result<()> {
    if let Some(file) = &args.analyze {
        return analyze(file, &args);
    }
    let settings = ModelSettings::from_args(&args.model, global)?;
    let trace = args
        .output
        .clone()
        .unwrap_or_else(|| default_trace_path(&settings.path));
    let testcases = Testcases::unless(args.no_testcase, Testcases::FeedFirst);
    let (mut prepared, mut capture) = prepare(&settings, testcases, global, |_, options| {
        ProfileCapture::for_trace(&trace, options)
    })?;
    capture.loaded(prepared.loading, &prepared.session)?;
    let feeds = prepared.feeds(global)?;
    prepared.session.feed(&feeds)?;
    let profiling_run = profile_algorithms(&prepared.session, &prepared.lite, &prepared.options, &feeds)?;
    let runs = prepared.measure(&plan(&args.iterations, global), &mut capture)?;
    let device = prepared.options.device;
    let prepared_load_ms = prepared.load_ms;
    let lite = prepared.finish()?;

    let profile = capture.finish();
    write_trace(
        &trace,
        &profile,
        &TraceSource::run(&settings.path, device, lite.version()?),
    )?;
    let timing = Timing::from_samples(&runs.timed_ms, args.iterations.all_times).expect("--iter is at least 1");
    let operators = operator_ms(&profile.iterations);
    let measured = Measured {
        timing_ms: ColdStart::new(prepared_load_ms, profiling_run, runs.first_ms, runs.warmup_ms),
        operator_percent_of_iteration: 100.0 * operators / timing.mean,
        gap: explain_gap(&profile.iterations, operators, timing.mean),
        iteration_ms: timing,
    };
    let source = ProfileSource::Model(settings.path.display().to_string());
    let report = report(&profile, &args, source, device.to_string(), &trace, Some(measured));
    print(&report, args.json)
}

/// `--analyze FILE.json`: the tables and trace of the execution a profile
/// written elsewhere holds. No engine runs.
fn analyze(file: &Path, args: &ProfileArgs) -> Result<()> {
    let profile = read_recorded(file)?;
    let trace = args.output.clone().unwrap_or_else(|| default_trace_path(file));
    claim_file("-o", &trace).with_context(|| format!("cannot write the trace {}", trace.display()))?;
    let device = profile
        .iterations
        .iter()
        .flat_map(|iteration| &iteration.operators)
        .flat_map(|operator| &operator.device)
        .map(|span| comp_node_name(&span.track).to_string())
        .next()
        .unwrap_or_else(|| "an unnamed device".to_string());
    write_trace(&trace, &profile, &TraceSource::recorded(file, &device))?;
    let source = ProfileSource::ProfileFile(file.display().to_string());
    print(&report(&profile, args, source, device, &trace, None), args.json)
}

/// The report of `profile` with the rows `args` select.
fn report(
    profile: &Profile,
    args: &ProfileArgs,
    source: ProfileSource,
    device: String,
    trace: &Path,
    measured: Option<Measured>,
) -> ProfileReport {
    let filters = &args.filters;
    let aggregate = filters.aggregate.map(|aggregate| match aggregate {
        ProfileAggregate::Sum => Aggregate::Sum,
        ProfileAggregate::Mean => Aggregate::Mean,
        ProfileAggregate::Max => Aggregate::Max,
        ProfileAggregate::Min => Aggregate::Min,
    });
    let by = match (args.by, aggregate) {
        (ProfileBy::Type, _) | (_, Some(_)) => Grouping::Type,
        (ProfileBy::Opr, None) => Grouping::Opr,
    };
    let selection = Selection {
        by,
        aggregate: aggregate.unwrap_or_default(),
        top: args.top,
        types: filters.types.clone(),
        name: filters.opr_name.clone(),
        min_time_ms: filters.min_time,
        order: match filters.order_by {
            ProfileOrder::Time => Order::Time,
            ProfileOrder::Flops => Order::Flops,
            ProfileOrder::Name => Order::Name,
        },
    };
    let (rows, rest) = rows(profile, &selection);
    ProfileReport {
        source,
        device,
        trace: trace.display().to_string(),
        by,
        aggregate,
        profiled_iterations: profile.iterations.len(),
        operator_ms: operator_ms(&profile.iterations),
        operator_host_ms: operator_host_ms(&profile.iterations),
        measured,
        rows,
        rest,
    }
}

/// `<stem>.trace.json` in the current folder, from the model (or profile file).
fn default_trace_path(source: &Path) -> PathBuf {
    let stem = source
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy());
    PathBuf::from(format!("{stem}.trace.json"))
}
