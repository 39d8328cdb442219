//! `mge profile`: run with the engine's profiler, print the operators that cost
//! the time and write a Chrome trace.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;

use super::options::{feeds_or_first_testcase, load_runtime, network_options, plan, save_algo_cache};
use super::Global;
use crate::cli::{ProfileArgs, ProfileBy};
use crate::engine::silence_stdout;
use crate::feeds;
use crate::model::ModelFile;
use crate::profile::ProfileCapture;
use crate::report::profile::{explain_gap, operator_ms, rows, Grouping, ProfileReport};
use crate::report::trace::write_trace;
use crate::report::{emit, emit_json};
use crate::runner::timing::Timing;
use crate::runner::{Outputs, Session};

pub fn profile(args: ProfileArgs, global: &Global) -> Result<()> {
    let mut options = network_options(&args.engine, global)?;
    let trace = args.output.clone().unwrap_or_else(|| default_trace_path(&args.model));
    let specs = feeds::expand_specs(&args.feeds.inputs)?;
    let model = ModelFile::read(&args.model)?;
    let mut capture = ProfileCapture::for_trace(&trace, &mut options)?;
    let lite = load_runtime(&args.engine, global)?;

    let engine_output = silence_stdout(global.verbose);
    let loading = Instant::now();
    let mut session = Session::load(&lite, &model, Outputs::Real, &options)?;
    capture.loaded(loading, &session)?;
    let first_testcase = model.testcases().next().filter(|_| !args.no_testcase);
    let feeds = feeds_or_first_testcase(
        &lite,
        first_testcase,
        &args.model,
        &specs,
        &session,
        &args.feeds,
        global,
    )?;
    session.feed(&feeds)?;
    let plan = plan(&args.iterations, global);
    let samples = session.measure(&plan, &mut capture)?;
    save_algo_cache(&lite, &args.engine)?;
    drop(session);
    drop(engine_output);

    let profile = capture.finish();
    write_trace(&trace, &profile, &args.model, options.device, lite.version()?)?;
    let by = match args.by {
        ProfileBy::Opr => Grouping::Opr,
        ProfileBy::Type => Grouping::Type,
    };
    let timing = Timing::from_samples(&samples, args.iterations.all_times).expect("--iter is at least 1");
    let operator_ms = operator_ms(&profile.iterations);
    let (rows, rest) = rows(&profile, by, args.top);
    let report = ProfileReport {
        model: args.model.display().to_string(),
        device: options.device.to_string(),
        trace: trace.display().to_string(),
        by,
        profiled_iterations: profile.iterations.len(),
        operator_percent_of_iteration: 100.0 * operator_ms / timing.mean,
        gap: explain_gap(&profile.iterations, operator_ms, timing.mean),
        iteration_ms: timing,
        operator_ms,
        rows,
        rest,
    };
    if args.json {
        emit_json(&report)
    } else {
        emit(&report.to_text())
    }
}

/// `<model stem>.trace.json` in the current folder.
fn default_trace_path(model: &Path) -> PathBuf {
    let stem = model
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy());
    PathBuf::from(format!("{stem}.trace.json"))
}
