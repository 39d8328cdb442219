//! `--instances N`: N copies of a network running at once, each on a thread
//! and an engine worker of its own, sharing the weights of the first (as
//! load_and_run's `--thread`, trtexec's `--streams` and
//! onnxruntime_perf_test's `-c` run several at once).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::thread;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};

use super::noise::MachineSample;
use super::{RunPlan, Runs, Session};
use crate::compare::{compare_values, Criterion, Mismatch};
use crate::engine::{Lite, NetworkOptions};
use crate::feeds::Feed;
use crate::tensor::HostTensor;

/// How many copies run, and whether they share runtime memory.
#[derive(Clone, Copy, Debug)]
pub struct Instances {
    pub count: usize,
    /// RunPlan the copies' runtime memory in the first's. The engine forbids
    /// graphs that share memory to run at the same time, so the instances
    /// then take turns: each run waits for the one before it to end.
    pub share_memory: bool,
}

/// What one instance did.
pub struct InstanceRun {
    /// Making it: loading the first instance's model, or building a copy
    /// with the first's weights.
    pub load_ms: f64,
    pub runs: Runs,
    /// Its outputs against the first instance's, run alone after all the others.
    pub outputs: OutputsCheck,
}

/// Whether an instance's outputs equal those of the first instance run alone.
#[derive(Clone, Debug)]
pub struct OutputsCheck {
    pub equal: bool,
    /// The first output that differs, and where.
    pub first_difference: Option<(String, Option<Mismatch>)>,
}

/// The instances' runs, and the outputs they are checked against.
pub struct Concurrent {
    /// In order; the first is the session passed in.
    pub instances: Vec<InstanceRun>,
    /// The first instance's outputs after a run alone, once every instance was done.
    pub reference: Vec<(String, HostTensor)>,
    /// From the first timed run's start (of any instance) to the last one's end, in seconds.
    pub timed_s: f64,
}

/// Runs `instances` copies of `first` (loaded in `first_load_ms`, fed
/// `feeds`) under `plan`: each warms up, and once all have, all start their
/// timed runs together. The first shows the progress.
pub fn run_concurrently(
    first: &mut Session,
    first_load_ms: f64,
    lite: &Lite,
    options: &NetworkOptions,
    feeds: &[Feed],
    plan: &RunPlan,
    instances: Instances,
) -> Result<Concurrent> {
    let mut copies = Vec::with_capacity(instances.count.saturating_sub(1));
    for worker in 1..instances.count {
        let started = Instant::now();
        let copy_options = options.for_copy(Some(worker as u32));
        let copy = first
            .copy(lite, &copy_options, instances.share_memory, feeds)
            .with_context(|| format!("cannot make instance {worker}"))?;
        copies.push((started.elapsed().as_secs_f64() * 1e3, copy));
    }
    let turns = instances.share_memory.then(|| Arc::new(Mutex::new(())));
    first.turns = turns.clone();
    copies.iter_mut().for_each(|(_, copy)| copy.turns = turns.clone());
    let sessions = std::iter::once((first_load_ms, &mut *first)).chain(copies.iter_mut().map(|(ms, copy)| (*ms, copy)));
    let done = run_together(sessions.collect(), plan);
    first.turns = None;
    let (done, window) = done?;
    // The reference: the first instance alone, nothing else running.
    first.run_once()?;
    let reference = first.read_outputs()?;
    let mut timed = (None::<Instant>, None::<Instant>);
    let mut runs = Vec::with_capacity(done.len());
    for done in done {
        if let Some((start, end)) = done.span {
            timed.0 = Some(timed.0.map_or(start, |t| t.min(start)));
            timed.1 = Some(timed.1.map_or(end, |t| t.max(end)));
        }
        runs.push(InstanceRun {
            load_ms: done.load_ms,
            outputs: check_outputs(&done.outputs, &reference),
            runs: Runs {
                first_ms: done.first_ms,
                warmup_ms: done.warmup_ms,
                timed_ms: done.timed_ms,
                // The process's CPU time counts every instance's threads at once: no one instance's.
                timed_cpu_ms: Vec::new(),
                window: Some(window.clone()),
            },
        });
    }
    let timed_s = match timed {
        (Some(start), Some(end)) => (end - start).as_secs_f64(),
        _ => 0.0,
    };
    Ok(Concurrent {
        instances: runs,
        reference,
        timed_s,
    })
}

/// One instance's runs, as its thread returns them.
struct Done {
    load_ms: f64,
    first_ms: f64,
    warmup_ms: Vec<f64>,
    timed_ms: Vec<f64>,
    span: Option<(Instant, Instant)>,
    outputs: Vec<(String, HostTensor)>,
}

/// A thread per session: warm-up, then (once every session has warmed up)
/// the timed runs, then its outputs. Returns them with the machine sampled
/// just before the timed runs began and just after the last ended.
fn run_together(
    sessions: Vec<(f64, &mut Session)>,
    plan: &RunPlan,
) -> Result<(Vec<Done>, (MachineSample, MachineSample))> {
    let parties = sessions.len() + 1;
    let (warmed_up, go) = (Barrier::new(parties), Barrier::new(parties));
    let failed = AtomicBool::new(false);
    thread::scope(|scope| {
        let mut threads = Vec::with_capacity(sessions.len());
        // Each thread waits for its start until every thread runs: should one
        // not start, the others are let go before any waits at a barrier.
        let mut starts = Vec::with_capacity(sessions.len());
        for (index, (load_ms, session)) in sessions.into_iter().enumerate() {
            let (start, started) = mpsc::sync_channel::<()>(1);
            let (warmed_up, go, failed) = (&warmed_up, &go, &failed);
            // `None`: it did not start its timed runs, because another instance failed.
            let instance = move || -> Result<Option<Done>> {
                if started.recv().is_err() {
                    return Ok(None);
                }
                let shown = index == 0;
                let warmed = session.warm_up(plan, &mut (), shown);
                if warmed.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                // Every thread passes both barriers, failed or not, so none waits forever.
                warmed_up.wait();
                go.wait();
                let warmed = warmed.with_context(|| format!("instance {index}"))?;
                if failed.load(Ordering::SeqCst) {
                    return Ok(None);
                }
                let timed = session
                    .time(plan, &mut (), shown)
                    .with_context(|| format!("instance {index}"))?;
                let outputs = session
                    .outputs_of_own_run()
                    .with_context(|| format!("instance {index}"))?;
                Ok(Some(Done {
                    load_ms,
                    first_ms: warmed.first_ms.or(timed.samples.first().copied()).unwrap_or(0.0),
                    warmup_ms: warmed.warmup_ms,
                    timed_ms: timed.samples,
                    span: timed.span,
                    outputs,
                }))
            };
            let thread = thread::Builder::new()
                .spawn_scoped(scope, instance)
                .with_context(|| format!("cannot start a thread for instance {index}"))?;
            threads.push(thread);
            starts.push(start);
        }
        for start in starts {
            let _ = start.send(());
        }
        warmed_up.wait();
        let before = MachineSample::now();
        go.wait();
        let joined: Vec<Result<Option<Done>>> = threads
            .into_iter()
            .map(|thread| thread.join().map_err(|_| anyhow!("an instance's thread panicked"))?)
            .collect();
        let after = MachineSample::now();
        let done = joined.into_iter().collect::<Result<Vec<_>>>()?;
        Ok((done.into_iter().flatten().collect(), (before, after)))
    })
}

/// `outputs` against `reference`, value for value (the one tensor comparison, no tolerance).
fn check_outputs(outputs: &[(String, HostTensor)], reference: &[(String, HostTensor)]) -> OutputsCheck {
    for ((name, value), (_, expected)) in outputs.iter().zip(reference) {
        match compare_values(value.view(), expected.view(), &Criterion::assert_equal(0.0)) {
            Some(comparison) if comparison.passed => {}
            compared => {
                return OutputsCheck {
                    equal: false,
                    first_difference: Some((name.clone(), compared.and_then(|c| c.first_mismatch))),
                }
            }
        }
    }
    OutputsCheck {
        equal: outputs.len() == reference.len(),
        first_difference: None,
    }
}
