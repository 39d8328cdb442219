//! The report of `mge run`: human text and the JSON document.

use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use super::check::{check_summary, Tally};
use super::compare::mismatch_text;
use super::table::Table;
use super::Report;
use crate::compare::{LeftOut, Mismatch, Tolerance, TopkAgreement};
use crate::feeds::Feed;
use crate::runner::memory::PeakMemory;
use crate::runner::noise::Noise;
use crate::runner::pinning::PinnedThread;
use crate::runner::testcase::{OutputCheck, TestcaseRun, TestcaseStatus};
use crate::runner::timing::{ColdStart, Timing, TimingReport};
use crate::tensor::{format_shape, DType, HostTensor};
use crate::text::{counted, markdown_cell, number, part_of, printable};

/// `mge run` with feeds.
#[derive(Serialize)]
pub struct RunReport {
    #[serde(flatten)]
    pub target: Target,
    #[serde(flatten)]
    pub measurement: Measurement,
    /// `--instances`: each instance's runs (the measurement above pools them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<InstancesReport>,
    /// How far the timing can be trusted.
    pub noise: Noise,
    /// `--cpu-cores`: the engine threads pinned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pinned_threads: Vec<PinnedThread>,
    /// `--profile`: the profiled runs, apart from the timed ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfiledRuns>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<PeakMemory>,
    /// The files `--outputs` wrote.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs_written: Vec<WrittenOutput>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<ExpectReport>,
}

/// `run --profile`: runs of a weight-sharing copy with the engine's
/// profiler, after the timed runs and not among them.
#[derive(Serialize)]
pub struct ProfiledRuns {
    pub trace: String,
    /// How many runs the profiler recorded (after one unrecorded warm-up of the copy).
    pub profiled_runs: usize,
}

/// `--instances N`.
#[derive(Serialize)]
pub struct InstancesReport {
    pub count: usize,
    pub share_runtime_memory: bool,
    /// Every instance's outputs equal those of the first instance run alone.
    pub outputs_equal: bool,
    pub each: Vec<InstanceReport>,
}

#[derive(Serialize)]
pub struct InstanceReport {
    pub instance: usize,
    /// Its runs; `load` is the first instance's load, or the making of a copy with its weights.
    pub timing_ms: Timing,
    /// Its own runs per second (1000 / its mean): what it served beside the others.
    pub throughput_per_s: f64,
    pub outputs_equal: bool,
    /// The first output that differs from the first instance's run alone, and where.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<OutputDifference>,
}

#[derive(Serialize)]
pub struct OutputDifference {
    pub output: String,
    /// `None` when the shapes differ.
    pub at: Option<Mismatch>,
}

/// `mge run` on the testcases a container embeds.
#[derive(Serialize)]
pub struct TestcasesRunReport {
    #[serde(flatten)]
    pub target: Target,
    pub testcases: Vec<TestcaseRunReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<PeakMemory>,
    /// The files `--outputs` wrote.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs_written: Vec<WrittenOutput>,
    #[serde(flatten)]
    pub tally: Tally,
}

/// One `NAME.npy` that `--outputs` wrote.
#[derive(Serialize)]
pub struct WrittenOutput {
    pub output: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub testcase: Option<usize>,
    pub file: String,
}

impl WrittenOutput {
    pub fn new(output: &str, file: &Path) -> WrittenOutput {
        WrittenOutput {
            output: output.to_string(),
            testcase: None,
            file: file.display().to_string(),
        }
    }

    pub fn of_testcase(self, index: usize) -> WrittenOutput {
        WrittenOutput {
            testcase: Some(index),
            ..self
        }
    }

    fn to_text(&self, out: &mut String) {
        let _ = match self.testcase {
            Some(index) => writeln!(
                out,
                "wrote    testcase {index} '{}' to {}",
                printable(&self.output),
                printable(&self.file)
            ),
            None => writeln!(
                out,
                "wrote    '{}' to {}",
                printable(&self.output),
                printable(&self.file)
            ),
        };
    }
}

#[derive(Serialize)]
pub struct Target {
    pub model: String,
    pub format: String,
    pub device: String,
}

#[derive(Serialize)]
pub struct TestcaseRunReport {
    pub index: usize,
    pub status: TestcaseStatus,
    pub checks: Vec<OutputCheck>,
    pub message: Option<String>,
    /// Absent when the testcase did not run to the end.
    #[serde(flatten)]
    pub measurement: Option<Measurement>,
}

/// What was fed, what came out, and how long it took.
#[derive(Serialize)]
pub struct Measurement {
    pub inputs: Vec<InputReport>,
    pub outputs: Vec<TensorStats>,
    #[serde(flatten)]
    pub timing: TimingReport,
    pub throughput_per_s: f64,
}

#[derive(Serialize)]
pub struct InputReport {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: String,
    pub source: String,
}

#[derive(Serialize)]
pub struct TensorStats {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: String,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// How many values are NaN, and how many infinite.
    pub nan: usize,
    pub inf: usize,
}

#[derive(Serialize)]
pub struct ExpectReport {
    pub name: String,
    pub file: String,
    /// The AssertEqual error; NaN (JSON null) when a value was NaN.
    pub err: f64,
    /// The `--stat` of the element errors held against the tolerance, when
    /// the rules judge by more than the largest error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stat_err: Option<f64>,
    /// With `--allow-outliers`: how many elements the verdict left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
    /// `maxerr`, or `atol` and `rtol`.
    #[serde(flatten)]
    pub tolerance: Tolerance,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topk: Option<TopkAgreement>,
    pub passed: bool,
    pub first_mismatch: Option<Mismatch>,
}

impl Measurement {
    /// `None` without samples (a run that did not finish); every sample kept when `all_times`.
    pub fn new(
        feeds: &[Feed],
        outputs: &[(String, HostTensor)],
        samples: &[f64],
        all_times: bool,
    ) -> Option<Measurement> {
        let timing = Timing::from_samples(samples, all_times)?;
        Some(Measurement {
            inputs: feeds
                .iter()
                .map(|feed| InputReport {
                    name: feed.name.clone(),
                    shape: feed.tensor.shape.clone(),
                    dtype: feed.tensor.dtype.to_string(),
                    source: feed.source.clone(),
                })
                .collect(),
            outputs: outputs
                .iter()
                .map(|(name, value)| TensorStats::describe(name, value))
                .collect(),
            throughput_per_s: timing.throughput(),
            timing: TimingReport { timing_ms: timing },
        })
    }

    /// This measurement with the runs before the timed ones.
    pub fn after(mut self, cold_start: ColdStart) -> Measurement {
        self.timing.timing_ms = self.timing.timing_ms.after(cold_start);
        self
    }

    /// This measurement with the CPU time of each timed run (`Timing::with_cpu`).
    pub fn with_cpu(mut self, cpu_ms: &[f64]) -> Measurement {
        self.timing.timing_ms = self.timing.timing_ms.with_cpu(cpu_ms);
        self
    }

    /// This measurement with the throughput of several instances together.
    pub fn with_throughput(self, throughput_per_s: f64) -> Measurement {
        Measurement {
            throughput_per_s,
            ..self
        }
    }

    /// The feeds, one row each.
    fn inputs_table(&self) -> Table {
        let mut inputs = Table::new(&["input", "shape", "dtype", "source"], &[]);
        for input in &self.inputs {
            inputs.row(vec![
                input.name.clone(),
                format_shape(&input.shape),
                input.dtype.clone(),
                input.source.clone(),
            ]);
        }
        inputs
    }

    fn to_text(&self, out: &mut String) {
        out.push_str(&self.inputs_table().render(""));
        out.push_str(&stats_table("output", &self.outputs).render(""));
        let t = &self.timing.timing_ms;
        if let Some(cold_start) = &t.cold_start {
            out.push_str(&cold_start_text(cold_start));
        }
        let _ = writeln!(
            out,
            "timing   {}, ms per iteration: min {:.4}  median {:.4}  mean {:.4}  max {:.4}  stddev {:.4}",
            counted(t.iterations, "iteration"),
            t.min,
            t.median,
            t.mean,
            t.max,
            t.stddev
        );
        let _ = write!(
            out,
            "         percentiles: p50 {:.4}  p90 {:.4}  p99 {:.4}",
            t.p50, t.p90, t.p99
        );
        match t.median_ci95 {
            Some([low, high]) => writeln!(out, "; median's 95% confidence interval {low:.4} to {high:.4}"),
            None => writeln!(
                out,
                "; too few runs for a 95% confidence interval of the median (6 needed)"
            ),
        }
        .ok();
        let _ = writeln!(out, "throughput {:.2} iterations/s", self.throughput_per_s);
    }
}

/// The runs before the timed ones, for people: `cold ...` lines.
pub fn cold_start_text(cold_start: &ColdStart) -> String {
    let mut text = format!(
        "cold     load {:.2} ms, first run {:.2} ms",
        cold_start.load, cold_start.first_run
    );
    if let Some(profiling) = cold_start.profiling {
        let _ = write!(text, " (fast-run profiling {profiling:.2} ms more, measured apart)");
    }
    let warmup: Vec<String> = cold_start.warmup.iter().map(|ms| format!("{ms:.2}")).collect();
    match warmup.len() {
        0 => text.push_str(", no warm-up"),
        runs => {
            let _ = write!(text, ", warm-up {runs} run{}: {} ms", plural(runs), warmup.join(" "));
        }
    }
    text.push('\n');
    text
}

fn plural(count: usize) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// The noise figures, for people: one `noise` line.
fn noise_text(noise: &Noise) -> String {
    format!("noise    {}\n", noise_figures(noise))
}

/// What the `noise` line says, without its label.
fn noise_figures(noise: &Noise) -> String {
    let mut parts = Vec::new();
    if let Some(spread) = noise.spread_percent {
        parts.push(format!("spread {spread:.1}% of the median (p10 to p90)"));
    }
    if let Some(drift) = noise.drift_percent {
        parts.push(format!("drift {drift:+.1}% (last tenth of the runs against the first)"));
    }
    if let Some(load) = noise.other_load_cores {
        parts.push(format!("other processes used {load:.2} of {} cores", noise.cores));
    }
    if let Some(unmeasured) = &noise.other_load_unmeasured {
        parts.push(format!("other processes' load not measured ({unmeasured})"));
    }
    if let Some(steal) = noise.steal_percent.filter(|steal| *steal > 0.0) {
        parts.push(format!("steal {steal:.1}%"));
    }
    parts.push(match noise.cpu_mhz {
        Some([low, high]) => format!("cores at {low:.0} to {high:.0} MHz"),
        None => "CPU frequency not exposed".to_string(),
    });
    parts.join(", ")
}

/// The one-line warning about noisy runs (see `Noise::is_large`).
pub fn noise_warning(noise: &Noise) -> String {
    let mut text = String::from("the timed runs are noisy:");
    if let Some(spread) = noise.spread_percent {
        let _ = write!(text, " spread {spread:.0}% of the median (p10 to p90)");
    }
    if let Some(drift) = noise.drift_percent {
        let _ = write!(text, ", drift {drift:+.0}% from the first tenth to the last");
    }
    if let Some(load) = noise.other_load_cores {
        let _ = write!(text, "; other processes used {load:.1} of {} cores", noise.cores);
    }
    text.push_str(" (see noise in --json; more runs, or a quieter machine)");
    text
}

impl InstancesReport {
    fn to_text(&self, out: &mut String) {
        let memory = if self.share_runtime_memory {
            ", sharing runtime memory (so taking turns)"
        } else {
            ""
        };
        let _ = writeln!(out, "instances {} at once{memory}:", self.count);
        let mut table = Table::new(
            &[
                "instance",
                "load ms",
                "first run ms",
                "median ms",
                "p90 ms",
                "runs/s",
                "outputs",
            ],
            &[0, 1, 2, 3, 4, 5],
        );
        for instance in &self.each {
            let t = &instance.timing_ms;
            let cold = t.cold_start.as_ref();
            let outputs = match &instance.first_difference {
                None => "equal".to_string(),
                Some(difference) => match &difference.at {
                    Some(at) => format!("'{}' DIFFERS at {}", difference.output, mismatch_text(at)),
                    None => format!("'{}' DIFFERS in shape", difference.output),
                },
            };
            table.row(vec![
                instance.instance.to_string(),
                cold.map_or("-".into(), |c| format!("{:.2}", c.load)),
                cold.map_or("-".into(), |c| format!("{:.2}", c.first_run)),
                format!("{:.4}", t.median),
                format!("{:.4}", t.p90),
                format!("{:.2}", instance.throughput_per_s),
                outputs,
            ]);
        }
        out.push_str(&table.render("  "));
    }
}

impl Target {
    fn to_text(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "model    {} ({}) on {}",
            printable(&self.model),
            self.format,
            self.device
        );
    }
}

impl TestcaseRunReport {
    pub fn new(run: &TestcaseRun, all_times: bool) -> TestcaseRunReport {
        TestcaseRunReport {
            index: run.index,
            status: run.status,
            checks: run.checks.clone(),
            message: run.message.clone(),
            measurement: Measurement::new(&run.feeds, &run.outputs, &run.samples, all_times),
        }
    }
}

impl Report for TestcasesRunReport {
    fn to_text(&self) -> String {
        let mut out = String::new();
        self.target.to_text(&mut out);
        for testcase in &self.testcases {
            let _ = writeln!(
                out,
                "\ntestcase {}: {}",
                testcase.index,
                check_summary(testcase.status, &testcase.checks, testcase.message.as_deref())
            );
            if let Some(measurement) = &testcase.measurement {
                measurement.to_text(&mut out);
            }
        }
        if let Some(memory) = self.memory {
            let _ = writeln!(out, "\n{}", memory_text(memory));
        }
        self.outputs_written.iter().for_each(|file| file.to_text(&mut out));
        let _ = writeln!(out, "\n{}", self.tally);
        out
    }
}

impl TensorStats {
    pub fn describe(name: &str, value: &HostTensor) -> TensorStats {
        let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
        for v in value.values() {
            min = min.min(v);
            max = max.max(v);
            sum += v;
        }
        let count = value.len();
        let non_finite = value.non_finite();
        TensorStats {
            name: name.to_string(),
            shape: value.shape.clone(),
            dtype: value.dtype.to_string(),
            // f64::min and max pass over NaN: a tensor of NaN alone (or of
            // nothing) has no min or max, not `inf` and `-inf`.
            min: if min > max { f64::NAN } else { min },
            max: if min > max { f64::NAN } else { max },
            mean: sum / count as f64,
            nan: non_finite.nan,
            inf: non_finite.inf,
        }
    }
}

fn memory_text(memory: PeakMemory) -> String {
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    format!(
        "memory   peak RSS {:.1} MiB after load, {:.1} MiB after the runs",
        mib(memory.peak_rss_after_load_bytes),
        mib(memory.peak_rss_bytes)
    )
}

/// A tensor's value for tables: six decimals, like NumPy's print options;
/// a whole value of an integer tensor as the integer it is (`49`, not `49.000000`).
fn decimals(value: f64, integer: bool) -> String {
    match integer && value.fract() == 0.0 {
        true => format!("{value:.0}"),
        false => format!("{value:.6}"),
    }
}

/// Tensors with their value ranges, one row each, under `title`.
pub fn stats_table(title: &str, tensors: &[TensorStats]) -> Table {
    let mut table = Table::new(&[title, "shape", "dtype", "min", "max", "mean"], &[3, 4, 5]);
    for t in tensors {
        let integer = DType::from_name(&t.dtype).is_some_and(|dtype| !dtype.is_float());
        // An empty tensor (a filter that kept nothing) has no range: not NaN, which a value can be.
        let figure = |value| match t.shape.contains(&0) {
            true => "-".to_string(),
            false => decimals(value, integer),
        };
        table.row(vec![
            t.name.clone(),
            format_shape(&t.shape),
            t.dtype.clone(),
            figure(t.min),
            figure(t.max),
            figure(t.mean),
        ]);
    }
    table
}

impl RunReport {
    /// The run's summary in GitHub-flavoured markdown (`--markdown`): a
    /// heading naming the model, then the inputs, the outputs with their
    /// value ranges, and the timing with the noise line's figures, as tables.
    pub fn markdown(&self) -> String {
        let target = &self.target;
        let t = &self.measurement.timing.timing_ms;
        let mut timing = Table::new(
            &[
                "iterations",
                "median (ms)",
                "median's 95% interval (ms)",
                "min (ms)",
                "max (ms)",
                "noise",
            ],
            &[0, 1, 2, 3, 4],
        );
        timing.row(vec![
            t.iterations.to_string(),
            format!("{:.4}", t.median),
            match t.median_ci95 {
                Some([low, high]) => format!("{low:.4} to {high:.4}"),
                None => "too few runs (6 needed)".to_string(),
            },
            format!("{:.4}", t.min),
            format!("{:.4}", t.max),
            noise_figures(&self.noise),
        ]);
        let heading = format!("{} ({}) on {}", printable(&target.model), target.format, target.device);
        [
            format!("### mge run: {}\n", markdown_cell(&heading)),
            self.measurement.inputs_table().render_markdown(),
            stats_table("output", &self.measurement.outputs).render_markdown(),
            timing.render_markdown(),
        ]
        .join("\n")
    }
}

impl Report for RunReport {
    fn to_text(&self) -> String {
        let mut out = String::new();
        self.target.to_text(&mut out);
        self.measurement.to_text(&mut out);
        if let Some(instances) = &self.instances {
            instances.to_text(&mut out);
        }
        out.push_str(&noise_text(&self.noise));
        for thread in &self.pinned_threads {
            let name = printable(thread.name.as_deref().unwrap_or("?"));
            let _ = match &thread.error {
                Some(error) => writeln!(
                    out,
                    "pinned   engine thread {name} (tid {}) NOT to core {}: {}",
                    thread.tid,
                    thread.core,
                    printable(error)
                ),
                None => writeln!(
                    out,
                    "pinned   engine thread {name} (tid {}) to core {} (allowed now: {})",
                    thread.tid,
                    thread.core,
                    thread.allowed_cores.as_deref().unwrap_or("thread gone")
                ),
            };
        }
        if let Some(profile) = &self.profile {
            let _ = writeln!(
                out,
                "profile  {} profiled run{} of a weight-sharing copy, after the timed runs and not among them; trace {}",
                profile.profiled_runs,
                plural(profile.profiled_runs),
                printable(&profile.trace)
            );
        }
        if let Some(memory) = self.memory {
            let _ = writeln!(out, "{}", memory_text(memory));
        }
        self.outputs_written.iter().for_each(|file| file.to_text(&mut out));
        for expect in &self.expect {
            let verdict = if expect.passed { "passed" } else { "FAILED" };
            let left_out = expect
                .left_out
                .map(|left_out| format!(", {left_out}"))
                .unwrap_or_default();
            let judged = match (expect.stat_err, expect.tolerance) {
                (Some(stat), Tolerance::AssertEqual { maxerr }) => {
                    format!("stat {} (maxerr {}{left_out})", number(stat), number(maxerr))
                }
                (None, Tolerance::AssertEqual { maxerr }) => format!("(maxerr {}{left_out})", number(maxerr)),
                (_, Tolerance::Close { atol, rtol }) => {
                    format!("(atol {}, rtol {}{left_out})", number(atol), number(rtol))
                }
            };
            let _ = write!(
                out,
                "expect   {} vs {}: err {} {judged} {verdict}",
                printable(&expect.name),
                printable(&expect.file),
                number(expect.err)
            );
            if let Some(topk) = &expect.topk {
                let _ = write!(
                    out,
                    ", top-{} differ in {}",
                    topk.k,
                    part_of(topk.differing_rows, topk.rows, "row")
                );
            } else if let Some(mismatch) = &expect.first_mismatch {
                let _ = write!(out, ", first at {}", mismatch_text(mismatch));
            }
            out.push('\n');
        }
        out
    }
}
