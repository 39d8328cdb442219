//! Profiling a run with the engine's graph profiler: per-operator records of
//! every timed iteration, on the tool's own clock.
//!
//! The engine rewrites its profile file at the end of every run (in
//! `LITE_wait`) with the times of that run, so the file is read after each
//! timed iteration. Its host times count from the profiler's creation, which
//! the network notes on the tool's clock. Its device times count from an event
//! recorded while the first run was being set up, when no host time is taken:
//! that origin is bounded by causality instead. An operator's device start
//! event is issued by the host right after it takes the operator's host start,
//! so it cannot complete earlier; the latest origin that keeps every device
//! start at or after its host start is used. It is off by the smallest delay
//! between issuing and running an operator, microseconds when the device is
//! idle, as it is at the start of each iteration.
//! Everything is placed on the tool's clock, microseconds since
//! `ProfileCapture::arm`, where the tool's own phases are measured.

mod engine_json;

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use tempfile::TempPath;

use crate::engine::NetworkOptions;
use crate::input_files;
use crate::iodump::IndexVar;
use crate::model::EngineNames;
use crate::output_files::claim_file;
use crate::runner::{RunKind, RunObserver, Session};
use engine_json::{EngineProfile, RawSpan};

/// One operator's times on one track, in microseconds since the capture began.
#[derive(Clone, Debug)]
pub struct Span {
    /// The host thread or comp node, as the engine names it.
    pub track: String,
    pub start_us: f64,
    pub kernel_start_us: Option<f64>,
    pub end_us: f64,
}

impl Span {
    pub fn duration_us(&self) -> f64 {
        self.end_us - self.start_us
    }

    /// From the first kernel's start to the end.
    pub fn kernel_us(&self) -> Option<f64> {
        self.kernel_start_us.map(|kernel| self.end_us - kernel)
    }
}

/// One execution of one operator. Its spans are first the engine's times as
/// read (`RawSpan`), then placed on the tool's clock (`Span`).
#[derive(Clone, Debug)]
pub struct OperatorRun<S = Span> {
    pub id: u64,
    pub name: String,
    pub op_type: String,
    /// Per dispatching host thread.
    pub host: Vec<S>,
    /// Per comp node.
    pub device: Vec<S>,
    pub in_shapes: Vec<Vec<usize>>,
    pub out_shapes: Vec<Vec<usize>>,
    /// The dtype of its output (the first, where it has several), as the
    /// engine laid it out; none where the profile holds no layout of it.
    pub dtype: Option<String>,
    /// Bytes read and written, where the engine knows.
    pub memory_bytes: Option<u64>,
    pub flops: Option<u64>,
}

impl<S> OperatorRun<S> {
    /// The same execution with other spans.
    fn with_spans<T>(self, host: Vec<T>, device: Vec<T>) -> OperatorRun<T> {
        OperatorRun {
            id: self.id,
            name: self.name,
            op_type: self.op_type,
            host,
            device,
            in_shapes: self.in_shapes,
            out_shapes: self.out_shapes,
            dtype: self.dtype,
            memory_bytes: self.memory_bytes,
            flops: self.flops,
        }
    }
}

impl OperatorRun {
    /// The operator's time: its longest device span (as MegEngine's
    /// profile_analyze counts it), or its host span when no device recorded it.
    pub fn time_us(&self) -> f64 {
        let spans = if self.device.is_empty() {
            &self.host
        } else {
            &self.device
        };
        spans.iter().map(Span::duration_us).fold(0.0, f64::max)
    }
}

/// A span of the tool's own work: loading, a warm-up, a timed iteration.
#[derive(Clone, Debug)]
pub struct PhaseSpan {
    pub name: String,
    pub start_us: f64,
    pub end_us: f64,
    /// Whether its operators were recorded.
    pub profiled: bool,
}

/// One timed iteration with the operators the engine ran in it.
#[derive(Clone, Debug)]
pub struct ProfiledIteration {
    pub number: u64,
    pub start_us: f64,
    pub end_us: f64,
    pub operators: Vec<OperatorRun>,
}

pub struct Profile {
    pub phases: Vec<PhaseSpan>,
    pub iterations: Vec<ProfiledIteration>,
    /// The profiled runs were a copy's, apart from the timed ones (`run --profile`).
    pub separate: bool,
}

/// Arms the engine's profiler for a network and collects what it records.
pub struct ProfileCapture {
    origin: Instant,
    /// The profiled network is a copy run apart from the timed one (see `for_separate_runs`).
    separate: bool,
    /// Where the engine writes; removed when the capture is dropped.
    engine_file: TempPath,
    profiler_started: Option<Instant>,
    /// The names the engine's profile holds under placeholders.
    names: EngineNames,
    phases: Vec<PhaseSpan>,
    /// Timed iterations with the operators as the engine wrote them.
    iterations: Vec<RecordedIteration>,
}

struct RecordedIteration {
    number: u64,
    start_us: f64,
    end_us: f64,
    operators: Vec<OperatorRun<RawSpan>>,
}

/// Places recorded iterations on the tool's clock: host times from
/// `host_origin_us`, device times by the latest origin that keeps every
/// device start at or after its host start (see the module's notes).
/// `separate`: the iterations were a copy's (see `Profile::separate`).
fn place(phases: Vec<PhaseSpan>, recorded: Vec<RecordedIteration>, host_origin_us: f64, separate: bool) -> Profile {
    let earliest = |spans: &[RawSpan]| spans.iter().map(|s| s.start).reduce(f64::min);
    let device_to_host = recorded
        .iter()
        .flat_map(|iteration| &iteration.operators)
        .filter_map(|operator| Some(earliest(&operator.host)? - earliest(&operator.device)?))
        .reduce(f64::max)
        .unwrap_or(0.0);
    let on_clock = |spans: Vec<RawSpan>, offset: f64| -> Vec<Span> {
        let at = |seconds: f64| host_origin_us + (seconds + offset) * 1e6;
        spans
            .into_iter()
            .map(|span| Span {
                track: span.track,
                start_us: at(span.start),
                kernel_start_us: span.kernel_start.map(at),
                end_us: at(span.end),
            })
            .collect()
    };
    let iterations = recorded
        .into_iter()
        .map(|iteration| ProfiledIteration {
            number: iteration.number,
            start_us: iteration.start_us,
            end_us: iteration.end_us,
            operators: iteration
                .operators
                .into_iter()
                .map(|mut raw| {
                    let host = on_clock(std::mem::take(&mut raw.host), 0.0);
                    let device = on_clock(std::mem::take(&mut raw.device), device_to_host);
                    raw.with_spans(host, device)
                })
                .collect(),
        })
        .collect();
    Profile {
        phases,
        iterations,
        separate,
    }
}

/// The execution an engine profile file holds (written by load_and_run's
/// `--profile`, megenginelite's `enable_profile_performance`, or ours), on a
/// clock from the profiler's creation: one iteration, spanning its operators.
pub fn read_recorded(file: &Path) -> Result<Profile> {
    let bytes = input_files::read(file, &input_files::RECORDED_PROFILE)?;
    let operators = EngineProfile::parse(&bytes)
        .and_then(|profile| profile.operators(&EngineNames::none()))
        .with_context(|| format!("{}", file.display()))?;
    if operators.is_empty() {
        bail!(
            "{} holds no operator times: the engine writes them once a run ended",
            file.display()
        );
    }
    let host = || operators.iter().flat_map(|operator| &operator.host);
    let start_us = host().map(|span| span.start).fold(f64::INFINITY, f64::min) * 1e6;
    let end_us = host().map(|span| span.end).fold(f64::NEG_INFINITY, f64::max) * 1e6;
    let (start_us, end_us) = if start_us <= end_us {
        (start_us, end_us)
    } else {
        (0.0, 0.0)
    };
    let phases = vec![PhaseSpan {
        name: "recorded execution".into(),
        start_us,
        end_us,
        profiled: true,
    }];
    let iteration = RecordedIteration {
        number: 1,
        start_us,
        end_us,
        operators,
    };
    Ok(place(phases, vec![iteration], 0.0, false))
}

/// Asks for the engine's graph profiler in `options`, which must then build
/// the network (with the names the profiler cannot write renamed): the
/// returned temporary file is where the engine writes.
pub fn request_engine_profile(options: &mut NetworkOptions) -> Result<TempPath> {
    if options.record_comp_seq.is_some_and(|level| level > 0) {
        // Checked with 1.13: the first run with both never returns.
        bail!("--record-comp-seq cannot be profiled: the engine's profiler needs the per-operator events a recorded sequence skips (drop the option)");
    }
    let engine_file = tempfile::Builder::new()
        .prefix("mge-profile-")
        .suffix(".json")
        .tempfile()
        .context("cannot create a temporary file for the engine's profile")?
        .into_temp_path();
    options.profile_json = Some(engine_file.to_path_buf());
    options.writable_names = true;
    Ok(engine_file)
}

/// The vars of the graph the engine executed, in order, from the file
/// `request_engine_profile` returned (after a run), by the names of the
/// model (the engine knew `names` under placeholders).
pub fn executed_vars(engine_file: &Path, names: &EngineNames) -> Result<Vec<IndexVar>> {
    let bytes = input_files::read(engine_file, &input_files::ENGINE_PROFILE)?;
    EngineProfile::parse(&bytes)?.vars(names)
}

impl ProfileCapture {
    /// Starts the capture's clock and asks for the profiler in `options`, which
    /// must then build the network.
    /// Checks that `trace` can be written, before anything runs, and arms the profiler.
    pub fn for_trace(trace: &Path, options: &mut NetworkOptions) -> Result<ProfileCapture> {
        claim_file("-o", trace).with_context(|| format!("cannot write the trace {}", trace.display()))?;
        ProfileCapture::arm(options, false)
    }

    /// As `for_trace`, for profiled runs apart from the timed ones (trtexec's
    /// `--separateProfileRun`): the network built with `options` runs
    /// without the profiler, and a copy of it built with the options returned
    /// (`Session::copy`) runs with it. The timed network's phases are
    /// recorded through `unprofiled`.
    pub fn for_separate_runs(trace: &Path, options: &mut NetworkOptions) -> Result<(ProfileCapture, NetworkOptions)> {
        claim_file("--profile", trace).with_context(|| format!("cannot write the trace {}", trace.display()))?;
        // The copy runs the network's graph, names and all.
        options.writable_names = true;
        let mut copy_options = options.for_copy(options.worker);
        let capture = ProfileCapture::arm(&mut copy_options, true)?;
        Ok((capture, copy_options))
    }

    fn arm(options: &mut NetworkOptions, separate: bool) -> Result<ProfileCapture> {
        Ok(ProfileCapture {
            origin: Instant::now(),
            separate,
            engine_file: request_engine_profile(options)?,
            profiler_started: None,
            names: EngineNames::none(),
            phases: Vec::new(),
            iterations: Vec::new(),
        })
    }

    /// Records the load phase, from `started` to now, of a session opened with
    /// the options `arm` changed.
    pub fn loaded(&mut self, started: Instant, session: &Session) -> Result<()> {
        self.profiler_started = Some(
            session
                .profiler_started()
                .context("the network was built without the options ProfileCapture::arm set")?,
        );
        self.names = session.engine_names().clone();
        let name = if self.separate {
            "load of the profiled copy"
        } else {
            "load"
        };
        self.phase(name, started, Instant::now());
        Ok(())
    }

    /// Records a phase in which no operator was recorded.
    pub fn phase(&mut self, name: &str, started: Instant, finished: Instant) {
        self.phases.push(PhaseSpan {
            name: name.into(),
            start_us: self.micros(started),
            end_us: self.micros(finished),
            profiled: false,
        });
    }

    /// An observer of the timed network's runs, which the profiler does not
    /// record (see `for_separate_runs`): their phases only.
    pub fn unprofiled(&mut self) -> UnprofiledRuns<'_> {
        UnprofiledRuns(self)
    }

    /// The recorded phases and iterations, on the tool's clock.
    pub fn finish(self) -> Profile {
        let host_origin_us = self.profiler_started.map_or(0.0, |started| self.micros(started));
        place(self.phases, self.iterations, host_origin_us, self.separate)
    }

    fn micros(&self, instant: Instant) -> f64 {
        instant.saturating_duration_since(self.origin).as_secs_f64() * 1e6
    }

    fn read_engine_profile(&self) -> Result<Vec<OperatorRun<RawSpan>>> {
        let bytes = input_files::read(&self.engine_file, &input_files::ENGINE_PROFILE)?;
        EngineProfile::parse(&bytes)?.operators(&self.names)
    }
}

/// The name of a run's phase on the trace's phase track.
fn run_name(kind: RunKind, profiled_copy: bool) -> String {
    let name = match kind {
        RunKind::FakeFirst => "first run (allocation only)".to_string(),
        RunKind::Warmup(n) => format!("warm-up {n}"),
        RunKind::Measured(n) if profiled_copy => format!("run {n}"),
        RunKind::Measured(n) => format!("iteration {n}"),
    };
    match profiled_copy {
        true => format!("profiled {name}"),
        false => name,
    }
}

/// See `ProfileCapture::unprofiled`.
pub struct UnprofiledRuns<'a>(&'a mut ProfileCapture);

impl RunObserver for UnprofiledRuns<'_> {
    fn after_run(&mut self, kind: RunKind, started: Instant, finished: Instant) -> Result<()> {
        self.0.phase(&run_name(kind, false), started, finished);
        Ok(())
    }
}

impl RunObserver for ProfileCapture {
    fn after_run(&mut self, kind: RunKind, started: Instant, finished: Instant) -> Result<()> {
        let (start_us, end_us) = (self.micros(started), self.micros(finished));
        let name = run_name(kind, self.separate);
        self.phases.push(PhaseSpan {
            name,
            start_us,
            end_us,
            profiled: matches!(kind, RunKind::Measured(_)),
        });
        let RunKind::Measured(number) = kind else {
            return Ok(());
        };
        let profiler_started = self
            .profiler_started
            .context("ProfileCapture::loaded was not called before the runs")?;
        let run_started = started.saturating_duration_since(profiler_started).as_secs_f64();
        // Entries the engine kept from earlier runs end before this one began.
        let operators: Vec<OperatorRun<RawSpan>> = self
            .read_engine_profile()?
            .into_iter()
            .filter(|operator| operator.host.is_empty() || operator.host.iter().any(|span| span.end >= run_started))
            .collect();
        if operators.is_empty() {
            bail!("the engine's profiler recorded no operator in iteration {number}");
        }
        self.iterations.push(RecordedIteration {
            number,
            start_us,
            end_us,
            operators,
        });
        Ok(())
    }
}
