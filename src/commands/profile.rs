//! `mge profile`: run with the engine's profiler, print the operators that cost
//! the time and write a Chrome trace.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::prepare::{prepare, Testcases};
use super::settings::{plan, ModelSettings};
use super::Global;
use crate::cli::{ProfileArgs, ProfileBy};
use crate::profile::ProfileCapture;
use crate::report::print;
use crate::report::profile::{explain_gap, operator_ms, rows, Grouping, ProfileReport};
use crate::report::trace::write_trace;
use crate::runner::profile_algorithms;
use crate::runner::timing::{ColdStart, Timing};

pub fn profile(args: ProfileArgs, global: &Global) -> Result<()> {
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
    write_trace(&trace, &profile, &settings.path, device, lite.version()?)?;
    let by = match args.by {
        ProfileBy::Opr => Grouping::Opr,
        ProfileBy::Type => Grouping::Type,
    };
    let timing = Timing::from_samples(&runs.timed_ms, args.iterations.all_times).expect("--iter is at least 1");
    let operator_ms = operator_ms(&profile.iterations);
    let (rows, rest) = rows(&profile, by, args.top);
    let report = ProfileReport {
        model: settings.path.display().to_string(),
        device: device.to_string(),
        trace: trace.display().to_string(),
        by,
        timing_ms: ColdStart::new(prepared_load_ms, profiling_run, runs.first_ms, runs.warmup_ms),
        profiled_iterations: profile.iterations.len(),
        operator_percent_of_iteration: 100.0 * operator_ms / timing.mean,
        gap: explain_gap(&profile.iterations, operator_ms, timing.mean),
        iteration_ms: timing,
        operator_ms,
        rows,
        rest,
    };
    print(&report, args.json)
}

/// `<model stem>.trace.json` in the current folder.
fn default_trace_path(model: &Path) -> PathBuf {
    let stem = model
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy());
    PathBuf::from(format!("{stem}.trace.json"))
}
