//! `mge run`: load, feed, warm up, time, report; `--sweep` (`sweep`) runs it at several shapes.

mod sweep;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::cli::RunArgs;
use crate::compare::Rules;
use crate::engine::NetworkOptions;
use crate::exit::CheckFailed;
use crate::exit::NonFinite;
use crate::feeds::{Feed, FeedOptions};
use crate::loading::{prepare, refuse_unchecked_testcases, Feeding, Prepared, Testcases};
use crate::mge_command::MgeCommand;
use crate::output_checks::expect::{check_expectations, expected_values, Expectation};
use crate::output_checks::finite::{judge_testcases, warn_non_finite};
use crate::output_files::{claim_set, npy_file_stem, npy_files, write_set, write_tensors};
use crate::profile::ProfileCapture;
use crate::reduce::{Failed, Reducer};
use crate::report::bmf::{self, Latency};
use crate::report::check::Tally;
use crate::report::ci::{claim_markdown, write_markdown};
use crate::report::made_by::Making;
use crate::report::print;
use crate::report::repro::{self, FailingModel, Folder, Reduction, Repro};
use crate::report::run::{
    noise_warning, InstanceReport, InstancesReport, Measurement, OutputDifference, ProfiledRuns, RunReport, Target,
    TestcaseRunReport, TestcasesRunReport, WrittenOutput,
};
use crate::report::trace::{write_trace, TraceSource};
use crate::runner::instances::{run_concurrently, Concurrent, Instances};
use crate::runner::memory::{peak_rss_bytes, PeakMemory};
use crate::runner::noise::Noise;
use crate::runner::pinning::pinned_threads;
use crate::runner::testcase::{run_testcases, Judge, TestcaseRun};
use crate::runner::timing::{ColdStart, Timing};
use crate::runner::{RunPlan, Runs};
use crate::runtime::Located;
use crate::settings::Global;
use crate::settings::{comparison_rules, plan, ModelSettings};
use crate::supervise::child_run::ChildRun;
use crate::supervise::parent::Outcome;
use crate::supervise::Ending;
use crate::tensor::HostTensor;
use crate::text::{counted, number};

/// What `mge run` was asked, turned once from `RunArgs`.
pub struct RunSettings {
    model: ModelSettings,
    /// What a container's testcases are for (`--no-testcase`).
    testcases: Testcases,
    plan: RunPlan,
    /// `--all-times`: every timed run's time in the JSON report.
    all_times: bool,
    expectations: Vec<Expectation>,
    /// How `--expect` judges.
    rules: Rules,
    /// `--outputs DIR`.
    outputs: Option<PathBuf>,
    instances: Instances,
    /// `--profile FILE`: the Chrome trace of profiled runs after the timed ones.
    profile: Option<PathBuf>,
    /// `--bmf FILE`, claimed: the timed runs' median in Bencher Metric Format.
    bmf: Option<PathBuf>,
    /// `--markdown FILE`, claimed (`-`: stdout): the run's summary as markdown tables.
    markdown: Option<PathBuf>,
    check_finite: bool,
    json: bool,
    /// `--repro DIR`, claimed: written by the parent (`Reproducer`).
    repro: Option<PathBuf>,
    /// `--reduce`: each `--repro` folder also holds the smallest part of the model found to fail alike.
    reduce: bool,
    /// `--sweep`: the model at each of several shapes instead of one run.
    sweep: Option<sweep::Sweep>,
}

impl RunSettings {
    /// Checks what can be checked before any work: the inputs are claimed
    /// before the outputs that must spare them (the model's settings claim
    /// the engine's caches).
    pub fn from_args(args: RunArgs, global: &Global) -> Result<RunSettings> {
        let sweep = sweep::Sweep::from_args(&args)?;
        let expectations = args
            .expect
            .iter()
            .map(|spec| Expectation::read(spec))
            .collect::<Result<Vec<_>>>()?;
        let model = ModelSettings {
            extra_outputs: args.extra_outputs,
            ..ModelSettings::from_args(&args.model, global)?
        };
        let rules = comparison_rules(&args.comparison, None)?;
        if let Some(dir) = &args.outputs.dir {
            claim_set("--outputs", dir).with_context(|| format!("--outputs {}", dir.display()))?;
        }
        let concurrency = args.concurrency;
        if concurrency.share_runtime_memory && concurrency.instances < 2 {
            bail!("--share-runtime-memory shares memory between instances: add --instances 2 or more");
        }
        if let Some(dir) = &args.repro.dir {
            repro::claim(dir)?;
        }
        Ok(RunSettings {
            model,
            testcases: Testcases::unless(args.no_testcase, Testcases::Run),
            plan: RunPlan {
                sample_machine: true,
                ..plan(&args.iterations, global)
            },
            all_times: args.iterations.all_times,
            expectations,
            rules,
            outputs: args.outputs.dir,
            instances: Instances {
                count: concurrency.instances as usize,
                share_memory: concurrency.share_runtime_memory,
            },
            profile: args.profile,
            bmf: bmf::claim(args.bmf.as_deref())?,
            markdown: claim_markdown(args.markdown, args.json)?,
            check_finite: args.finite.check_finite,
            json: args.json,
            repro: args.repro.dir,
            reduce: args.reduce.reduce,
            sweep,
        })
    }
}

pub fn run(mut settings: RunSettings, global: &Global) -> Result<()> {
    if let Some(shapes) = settings.sweep.take() {
        return sweep::sweep(settings, shapes, global);
    }
    let model = &settings.model;
    let (prepared, mut profile) = prepare(model, settings.testcases, global, |opened, options| {
        if opened.feeding == Feeding::Testcases {
            refuse_for_testcases(&settings, options)?;
        }
        settings
            .profile
            .as_deref()
            .map(|trace| ProfileCapture::for_separate_runs(trace, options))
            .transpose()
    })?;
    let peak_after_load = peak_rss_bytes();
    if let Some((capture, _)) = &mut profile {
        capture.phase("load", prepared.loading, prepared.loaded);
    }
    let run = LoadedRun {
        target: Target {
            model: model.path.display().to_string(),
            format: prepared.model.format(),
            device: prepared.options.device.to_string(),
        },
        peak_after_load,
        settings: &settings,
    };
    match prepared.feeding {
        Feeding::Testcases => run.testcases(prepared, global),
        Feeding::Specs | Feeding::Defaults => run.fed(prepared, profile, global),
    }
}

/// What a container's testcases do not go with: `--profile`, `--expect`, and
/// options under which the engine checks nothing.
fn refuse_for_testcases(settings: &RunSettings, options: &NetworkOptions) -> Result<()> {
    if settings.profile.is_some() {
        bail!("--profile profiles fed runs, not embedded testcases: add --no-testcase (or use `mge profile`, which profiles the first testcase)");
    }
    if !settings.expectations.is_empty() {
        bail!("--expect compares fed runs; the testcases of a container carry their own expectations (add --no-testcase and --input to use --expect)");
    }
    if settings.bmf.is_some() {
        bail!("--bmf writes the timed runs of fed runs, not embedded testcases: add --no-testcase");
    }
    if settings.markdown.is_some() {
        bail!("--markdown writes the summary of fed runs, not embedded testcases: add --no-testcase (or use `mge check --markdown`)");
    }
    if settings.instances.count > 1 {
        bail!("--instances runs copies of a network on feeds, not embedded testcases: add --no-testcase");
    }
    refuse_unchecked_testcases(options)
}

/// A loaded model's run, either way.
struct LoadedRun<'a> {
    target: Target,
    peak_after_load: Option<u64>,
    settings: &'a RunSettings,
}

impl LoadedRun<'_> {
    /// The embedded testcases of a container, each judged by its assertions.
    fn testcases(self, mut prepared: Prepared, global: &Global) -> Result<()> {
        let settings = self.settings;
        let mut runs = run_testcases(
            &prepared.lite,
            &prepared.model,
            &mut prepared.session,
            &settings.plan,
            Judge::Engine,
        )?;
        judge_testcases(&mut runs, "testcase ", settings.check_finite, global);
        let memory = PeakMemory::now(self.peak_after_load);
        let lite = prepared.finish()?;
        let written = match &settings.outputs {
            Some(dir) => write_testcase_outputs(dir, &runs)?,
            None => Vec::new(),
        };
        let mut tally = Tally::default();
        runs.iter().for_each(|run| tally.add(run.status));
        let report = TestcasesRunReport {
            target: self.target,
            memory,
            outputs_written: written,
            testcases: runs
                .iter()
                .map(|run| TestcaseRunReport::new(run, settings.all_times))
                .collect(),
            tally,
        };
        let making = Making::new(&global.runtime, lite.version().ok(), &settings.model.engine.given);
        print(&report, settings.json, &making)?;
        if tally.failed > 0 {
            return Err(CheckFailed(format!("{tally} ({})", counted(runs.len(), "testcase"))).into());
        }
        Ok(())
    }

    /// The model on the user's feeds (or `#rand`), timed, and checked against `--expect`.
    fn fed(
        self,
        mut prepared: Prepared,
        profile: Option<(ProfileCapture, NetworkOptions)>,
        global: &Global,
    ) -> Result<()> {
        let settings = self.settings;
        let feeds = prepared.feeds(global)?;
        prepared.session.feed(&feeds)?;
        let session = &prepared.session;
        let expected = expected_values(
            &settings.expectations,
            &session.outputs,
            session.fed_as_declared(),
            &settings.rules,
        )?;
        let profiling_run = prepared.profile_algorithms(&feeds)?;
        let (mut capture, copy_options) = profile.unzip();
        let measured = match settings.instances.count {
            1 => self.measure_one(&mut prepared, &feeds, profiling_run, capture.as_mut())?,
            _ => self.measure_instances(&mut prepared, &feeds, profiling_run)?,
        };
        let timing = &measured.measurement.timing.timing_ms;
        let profiling = timing.cold_start.as_ref().and_then(|cold| cold.profiling);
        prepared.profiled(profiling, timing.median);
        let memory = PeakMemory::now(self.peak_after_load);
        // Empty unless --cpu-cores pinned the engine's threads.
        let pinned = pinned_threads();
        if let (Some(capture), Some(copy_options)) = (&mut capture, &copy_options) {
            let started = Instant::now();
            let mut copy = prepared.session.copy(&prepared.lite, copy_options, false, &feeds)?;
            capture.loaded(started, &copy)?;
            copy.measure(&settings.plan.profiled(), capture)?;
        }
        let device = prepared.options.device;
        let lite = prepared.finish()?;
        if let (Some(capture), Some(trace)) = (capture, &settings.profile) {
            let source = TraceSource::run(&settings.model.path, device, lite.version()?);
            write_trace(trace, &capture.finish(), &source)?;
        }
        let written = match &settings.outputs {
            Some(dir) => write_tensors(dir, &measured.outputs).context("--outputs")?,
            None => Vec::new(),
        };
        if measured.noise.is_large() {
            global.warn(noise_warning(&measured.noise));
        }
        let report = RunReport {
            target: self.target,
            measurement: measured.measurement,
            instances: measured.instances,
            noise: measured.noise,
            pinned_threads: pinned,
            profile: settings.profile.as_ref().map(|trace| ProfiledRuns {
                trace: trace.display().to_string(),
                profiled_runs: settings.plan.profiled().iterations as usize,
            }),
            memory,
            outputs_written: written
                .iter()
                .map(|(name, file)| WrittenOutput::new(name, file))
                .collect(),
            expect: check_expectations(expected, &measured.outputs, &settings.rules)?,
        };
        let timing = &report.measurement.timing.timing_ms;
        let latency = Latency {
            name: settings.model.path.display().to_string(),
            median_ms: timing.median,
            interval_ms: timing.median_ci95,
        };
        bmf::write(settings.bmf.as_deref(), &[latency])?;
        let making = Making::new(&global.runtime, lite.version().ok(), &settings.model.engine.given);
        print(&report, settings.json, &making)?;
        write_markdown(settings.markdown.as_deref(), &report.markdown())?;
        let non_finite = warn_non_finite(&measured.outputs, "", global);
        verdict(&report, non_finite.filter(|_| settings.check_finite))
    }

    /// The network's runs, the unprofiled phases of `--profile`'s trace recorded.
    fn measure_one(
        &self,
        prepared: &mut Prepared,
        feeds: &[Feed],
        profiling_run: Option<f64>,
        capture: Option<&mut ProfileCapture>,
    ) -> Result<TimedRuns> {
        let runs = match capture {
            Some(capture) => prepared.measure(&self.settings.plan, &mut capture.unprofiled())?,
            None => prepared.measure(&self.settings.plan, &mut ())?,
        };
        let outputs = prepared.session.read_outputs()?;
        let measurement = Measurement::new(feeds, &outputs, &runs.timed_ms, self.settings.all_times)
            .expect("--iter is at least 1")
            .after(cold_start(prepared.load_ms, &runs, profiling_run))
            .with_cpu(&runs.timed_cpu_ms);
        Ok(TimedRuns {
            measurement,
            noise: noise_of(&runs),
            outputs,
            instances: None,
        })
    }

    /// `--instances`: every instance's runs pooled, the outputs of the first instance run alone.
    fn measure_instances(
        &self,
        prepared: &mut Prepared,
        feeds: &[Feed],
        profiling_run: Option<f64>,
    ) -> Result<TimedRuns> {
        let instances = self.settings.instances;
        let concurrent = run_concurrently(
            &mut prepared.session,
            prepared.load_ms,
            &prepared.lite,
            &prepared.options,
            feeds,
            &self.settings.plan,
            instances,
        )?;
        let all_times = self.settings.all_times;
        let first = &concurrent.instances[0].runs;
        let pooled: Vec<f64> = concurrent
            .instances
            .iter()
            .flat_map(|instance| instance.runs.timed_ms.iter().copied())
            .collect();
        let measurement = Measurement::new(feeds, &concurrent.reference, &pooled, all_times)
            .expect("--iter is at least 1")
            .after(cold_start(prepared.load_ms, first, profiling_run))
            .with_throughput(pooled.len() as f64 / concurrent.timed_s);
        Ok(TimedRuns {
            measurement,
            noise: noise_of(first),
            instances: Some(instances_report(&concurrent, instances, profiling_run, all_times)),
            outputs: concurrent.reference,
        })
    }
}

/// Exit 1 for an output that differs from `--expect`, an instance whose
/// outputs differ from the first's run alone, or `non_finite` (`--check-finite`).
fn verdict(report: &RunReport, non_finite: Option<String>) -> Result<()> {
    let failed: Vec<String> = report
        .expect
        .iter()
        .filter(|e| !e.passed)
        .map(|e| format!("'{}' (err {})", e.name, number(e.err)))
        .collect();
    if !failed.is_empty() {
        return Err(CheckFailed(format!("output {} differs from --expect", failed.join(", "))).into());
    }
    if let Some(differing) = report
        .instances
        .iter()
        .flat_map(|instances| &instances.each)
        .find(|instance| !instance.outputs_equal)
    {
        return Err(CheckFailed(format!(
            "instance {}'s outputs differ from the first instance's run alone: the engine is not safe to run this way",
            differing.instance
        ))
        .into());
    }
    match non_finite {
        Some(found) => Err(NonFinite(found).into()),
        None => Ok(()),
    }
}

/// What the timed runs gave.
struct TimedRuns {
    measurement: Measurement,
    noise: Noise,
    /// The outputs reported, written and checked against `--expect`.
    outputs: Vec<(String, HostTensor)>,
    instances: Option<InstancesReport>,
}

/// How far `runs` of run's plan, which samples the machine, can be trusted.
fn noise_of(runs: &Runs) -> Noise {
    let (before, after) = runs.window.as_ref().expect("run's plan samples the machine");
    Noise::between(before, after, &runs.timed_ms)
}

/// The cold start of a network loaded in `load_ms` that ran `runs`, with
/// fast-run's profiling run where there was one.
fn cold_start(load_ms: f64, runs: &Runs, profiling_run: Option<f64>) -> ColdStart {
    ColdStart::new(load_ms, profiling_run, runs.first_ms, runs.warmup_ms.clone())
}

/// Each instance's runs, for the report.
fn instances_report(
    concurrent: &Concurrent,
    instances: Instances,
    profiling_run: Option<f64>,
    all_times: bool,
) -> InstancesReport {
    let each: Vec<InstanceReport> = concurrent
        .instances
        .iter()
        .enumerate()
        .map(|(index, instance)| {
            let runs = &instance.runs;
            let profiling_run = profiling_run.filter(|_| index == 0);
            let timing = Timing::from_samples(&runs.timed_ms, all_times)
                .expect("--iter is at least 1")
                .after(cold_start(instance.load_ms, runs, profiling_run));
            InstanceReport {
                instance: index,
                throughput_per_s: timing.throughput(),
                timing_ms: timing,
                outputs_equal: instance.outputs.equal,
                first_difference: instance
                    .outputs
                    .first_difference
                    .clone()
                    .map(|(output, at)| OutputDifference { output, at }),
            }
        })
        .collect();
    InstancesReport {
        count: instances.count,
        share_runtime_memory: instances.share_memory,
        outputs_equal: each.iter().all(|instance| instance.outputs_equal),
        each,
    }
}

/// Each testcase's outputs as `DIR/INDEX/NAME.npy`: one set, a folder per testcase.
fn write_testcase_outputs(dir: &Path, runs: &[TestcaseRun]) -> Result<Vec<WrittenOutput>> {
    let mut written = Vec::new();
    let mut files = Vec::new();
    for run in runs {
        for (name, file, tensor) in npy_files(&run.outputs) {
            let file = Path::new(&run.index.to_string()).join(file);
            written.push(WrittenOutput::new(name, &dir.join(&file)).of_testcase(run.index));
            files.push((file, tensor.to_npy()));
        }
    }
    write_set(dir, files).context("--outputs")?;
    Ok(written)
}

/// `--repro DIR` of a run, in the parent process: its settings turned
/// there too (their claims made before the child starts), and its folder
/// written should the child crash, hang, exit, fail its checks or meet the
/// engine's error (see `report::repro`).
pub struct Reproducer {
    repro: Repro,
    settings: RunSettings,
    /// `--timeout`, which the parent keeps.
    timeout: Option<Duration>,
}

impl Reproducer {
    /// `None` without `--repro`.
    pub fn stage(settings: RunSettings, timeout: Option<Duration>) -> Result<Option<Reproducer>> {
        let Some(dir) = &settings.repro else {
            return Ok(None);
        };
        Ok(Some(Reproducer {
            repro: Repro::stage(dir)?,
            settings,
            timeout,
        }))
    }

    /// Where the child records what it feeds the engine.
    pub fn record_folder(&self) -> PathBuf {
        self.repro.record_folder("run")
    }

    /// Writes the run's folder if the child crashed, hung, exited, failed
    /// its checks or met the engine's error, and says where; a folder that
    /// cannot be written is a warning, the run's own failure stays the error.
    pub fn write(mut self, ran: &ChildRun, runtime: Option<&Located>, global: &Global) {
        let failure = match &ran.outcome {
            Outcome::Ran | Outcome::Ended(Ending::Refused { .. }) => return,
            Outcome::Ended(ending) => ending.line(),
            Outcome::Crashed(failure) | Outcome::Hung(failure) => failure.one_line(),
        };
        let model = self.settings.model.path.clone();
        let failing = FailingModel {
            model: &model,
            record: Some(self.record_folder()),
            failure,
            engine_log: ran.transcript.clone(),
            runtime,
            choice: &global.runtime,
        };
        let settings = &self.settings;
        let added = self.repro.add(failing, |folder| {
            let failed = Failed::of(&ran.outcome);
            run_folder(settings, (self.timeout, failed), runtime, global.verbose, folder)
        });
        self.repro.finish(added, |warning| global.warn(warning));
    }
}

/// The command of a run's folder (`reproducing_run`), and with `--reduce`
/// the smallest part of its model found to fail as `failed` says (or why
/// there is none) put into it.
fn run_folder(
    settings: &RunSettings,
    (timeout, failed): (Option<Duration>, std::result::Result<Failed, &str>),
    runtime: Option<&Located>,
    verbose: bool,
    folder: &mut Folder,
) -> Result<MgeCommand> {
    let command = reproducing_run(settings, timeout, folder)?;
    match (settings.reduce, failed, runtime) {
        (false, ..) => {}
        (true, Ok(failed), Some(runtime)) => reduce_run(settings, timeout, failed, runtime, verbose, folder)?,
        (true, Err(why), _) => folder.reduced(Reduction::NotReduced(why.to_string())),
        (true, _, None) => folder.reduced(Reduction::NotReduced("no runtime was found".into())),
    }
    Ok(command)
}

/// `--reduce`: the smallest part of the model of `settings` found to fail
/// as `failed` says, into its reproducer's `folder`.
fn reduce_run(
    settings: &RunSettings,
    timeout: Option<Duration>,
    failed: Failed,
    runtime: &Located,
    verbose: bool,
    folder: &mut Folder,
) -> Result<()> {
    let reducer = Reducer {
        model: &settings.model.path,
        feeds: "feeds",
        seed: settings.model.feeds.options.seed,
        warmup: settings.plan.warmup,
        iterations: settings.plan.iterations,
        check_finite: settings.check_finite,
        timeout,
        runtime,
        verbose,
    };
    reducer.reduce(folder, failed)
}

/// The run of `settings` as it goes from inside its reproducer's `folder`:
/// the recorded feeds, the copied model and expectations, every option that
/// decides what the engine does (not those of the report and its files).
fn reproducing_run(settings: &RunSettings, timeout: Option<Duration>, folder: &mut Folder) -> Result<MgeCommand> {
    let model = folder.model("model.mge", &settings.model.path)?;
    let options = folder.options(None, &settings.model.engine.given)?;
    let mut expect = Vec::new();
    for (index, expectation) in settings.expectations.iter().enumerate() {
        expect.push(expectation.spec(|file| {
            let name = npy_file_stem(&file.file_name().unwrap_or_default().to_string_lossy());
            folder.file(
                &format!("expect/{index}/{name}"),
                file,
                "what --expect compares the outputs with",
            )
        })?);
    }
    let feeds = FeedOptions {
        resize_input: false,
        ..settings.model.feeds.options
    };
    let plan = &settings.plan;
    let mut command = MgeCommand::run(&model)
        .feeds(folder.feeds(), &feeds)
        .engine(&options)
        .runs(plan.warmup, plan.iterations)
        .seconds("--duration", plan.duration)
        .seconds("--max-duration", plan.time_limit)
        .instances(settings.instances.count, settings.instances.share_memory)
        .extra_outputs(&settings.model.extra_outputs)
        .expect(&expect)
        .rules(Some(&settings.rules).filter(|_| !expect.is_empty()))
        .check_finite(settings.check_finite)
        .profile(settings.profile.as_ref().map(|_| Path::new("profile.trace.json")))
        .seconds("--timeout", timeout);
    // A container the user fed runs fed, as it did, whatever the record holds.
    if settings.testcases == Testcases::Ignore || !settings.model.feeds.given.is_empty() {
        command = command.no_testcase();
    }
    Ok(command)
}
