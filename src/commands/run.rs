//! `mge run`: load, feed, warm up, time, report.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::options::{load_runtime, network_options, plan, refuse_unchecked_testcases, resolve_feeds, save_algo_cache};
use super::{CheckFailed, Global};
use crate::cli::RunArgs;
use crate::compare::{compare_values, Tolerance};
use crate::engine::silence_stdout;
use crate::feeds;
use crate::model::ModelFile;
use crate::output_files::{ensure_set_writable, npy_files, write_set, write_tensors};
use crate::profile::ProfileCapture;
use crate::report::check::Tally;
use crate::report::run::{
    ExpectReport, Measurement, RunReport, Target, TestcaseRunReport, TestcasesRunReport, WrittenOutput,
};
use crate::report::trace::write_trace;
use crate::report::{emit, emit_json};
use crate::runner::memory::{peak_rss_bytes, PeakMemory};
use crate::runner::testcase::run_testcases;
use crate::runner::{Outputs, Session};
use crate::tensor::{format_shape, HostTensor};
use crate::text::quoted_list;

/// `--expect NAME:FILE.npy`; the file is checked before the engine starts and
/// read, in the output's dtype, once the output exists.
struct Expectation {
    output: String,
    file: PathBuf,
}

pub fn run(args: RunArgs, global: &Global) -> Result<()> {
    let mut options = network_options(&args.engine, global)?;
    let mut capture = args
        .profile
        .as_deref()
        .map(|trace| ProfileCapture::for_trace(trace, &mut options))
        .transpose()?;
    let expectations = args
        .expect
        .iter()
        .map(|spec| read_expectation(spec))
        .collect::<Result<Vec<_>>>()?;
    if let Some(dir) = &args.outputs {
        ensure_set_writable(dir).with_context(|| format!("--outputs {}", dir.display()))?;
    }
    let specs = feeds::expand_specs(&args.feeds.inputs)?;
    let model = ModelFile::read(&args.model)?;
    let testcases = model.is_container() && specs.is_empty() && !args.no_testcase;
    if testcases {
        if args.profile.is_some() {
            bail!("--profile profiles fed runs, not embedded testcases: add --no-testcase (or use `mge profile`, which profiles the first testcase)");
        }
        if !expectations.is_empty() {
            bail!("--expect compares fed runs; the testcases of a container carry their own expectations (add --no-testcase and --input to use --expect)");
        }
        refuse_unchecked_testcases(&options)?;
    }
    let lite = load_runtime(&args.engine, global)?;

    let engine_output = silence_stdout(global.verbose);
    let loading = Instant::now();
    let outputs = if testcases { Outputs::Asserted } else { Outputs::Real };
    let mut session = Session::load(&lite, &model, outputs, &options)?;
    let peak_after_load = peak_rss_bytes();
    if let Some(capture) = &mut capture {
        capture.loaded(loading, &session)?;
    }
    let plan = plan(&args.iterations, global);
    let target = Target {
        model: args.model.display().to_string(),
        format: model.format.to_string(),
        device: options.device.to_string(),
    };
    if testcases {
        let runs = run_testcases(&lite, &model, &mut session, &plan)?;
        let memory = PeakMemory::now(peak_after_load);
        save_algo_cache(&lite, &args.engine)?;
        drop(engine_output);
        let mut written = Vec::new();
        if let Some(dir) = &args.outputs {
            // One set: a folder per testcase.
            let mut files = Vec::new();
            for run in &runs {
                for (name, file, tensor) in npy_files(&run.outputs) {
                    let file = Path::new(&run.index.to_string()).join(file);
                    written.push(WrittenOutput::new(name, &dir.join(&file)).of_testcase(run.index));
                    files.push((file, tensor.to_npy()));
                }
            }
            write_set(dir, files).context("--outputs")?;
        }
        let mut tally = Tally::default();
        runs.iter().for_each(|run| tally.add(run.status));
        let report = TestcasesRunReport {
            target,
            memory,
            outputs_written: written,
            testcases: runs
                .iter()
                .map(|run| TestcaseRunReport::new(run, args.iterations.all_times))
                .collect(),
            tally,
        };
        if args.json {
            emit_json(&report)?;
        } else {
            emit(&report.to_text())?;
        }
        if tally.failed > 0 {
            return Err(CheckFailed(format!("{tally} ({} testcases)", runs.len())).into());
        }
        return Ok(());
    }

    let feeds = resolve_feeds(&specs, &session.inputs, &args.feeds, global)?;
    session.feed(&feeds)?;
    let samples = session.measure(&plan, &mut capture)?;
    let memory = PeakMemory::now(peak_after_load);
    let outputs = session.read_outputs()?;
    save_algo_cache(&lite, &args.engine)?;
    drop(engine_output);
    if let (Some(capture), Some(trace)) = (capture, &args.profile) {
        write_trace(trace, &capture.finish(), &args.model, options.device, lite.version()?)?;
    }

    let written = match &args.outputs {
        Some(dir) => write_tensors(dir, &outputs).context("--outputs")?,
        None => Vec::new(),
    };
    let report = RunReport {
        target,
        measurement: Measurement::new(&feeds, &outputs, &samples, args.iterations.all_times)
            .expect("--iter is at least 1"),
        memory,
        outputs_written: written
            .iter()
            .map(|(name, file)| WrittenOutput::new(name, file))
            .collect(),
        expect: check_expectations(&expectations, &outputs, args.maxerr)?,
    };
    if args.json {
        emit_json(&report)?;
    } else {
        emit(&report.to_text())?;
    }
    let failed: Vec<&ExpectReport> = report.expect.iter().filter(|e| !e.passed).collect();
    if !failed.is_empty() {
        let names: Vec<String> = failed
            .iter()
            .map(|e| format!("'{}' (err {:e})", e.name, e.err))
            .collect();
        return Err(CheckFailed(format!("output {} above --maxerr {:e}", names.join(", "), args.maxerr)).into());
    }
    Ok(())
}

fn read_expectation(spec: &str) -> Result<Expectation> {
    let (output, file) = spec
        .rsplit_once(':')
        .filter(|(output, file)| !output.is_empty() && !file.is_empty())
        .with_context(|| format!("--expect {spec}: expected NAME:FILE.npy"))?;
    let file = PathBuf::from(file);
    if !file.is_file() {
        bail!("--expect {spec}: {} is not a file", file.display());
    }
    Ok(Expectation {
        output: output.to_string(),
        file,
    })
}

fn check_expectations(
    expectations: &[Expectation],
    outputs: &[(String, HostTensor)],
    maxerr: f64,
) -> Result<Vec<ExpectReport>> {
    expectations
        .iter()
        .map(|expectation| {
            let Some((_, actual)) = outputs.iter().find(|(name, _)| *name == expectation.output) else {
                let names: Vec<&str> = outputs.iter().map(|(name, _)| name.as_str()).collect();
                bail!(
                    "--expect: the model has no output '{}' (outputs: {})",
                    expectation.output,
                    quoted_list(&names)
                );
            };
            let expected = feeds::load_npy(&expectation.file, actual.dtype)
                .with_context(|| format!("--expect {}:{}", expectation.output, expectation.file.display()))?;
            let tolerance = Tolerance::AssertEqual { maxerr };
            let Some(comparison) = compare_values(actual.view(), expected.view(), tolerance) else {
                bail!(
                    "--expect: output '{}' has shape {}, {} holds {}",
                    expectation.output,
                    format_shape(&actual.shape),
                    expectation.file.display(),
                    format_shape(&expected.shape)
                );
            };
            Ok(ExpectReport {
                name: expectation.output.clone(),
                file: expectation.file.display().to_string(),
                err: comparison.err,
                maxerr,
                passed: comparison.passed(),
                first_mismatch: comparison.first_mismatch,
            })
        })
        .collect()
}
