//! `mge check`: every embedded testcase of every model, pass or fail.
//!
//! Models are checked in worker processes (`mge check --worker`, N of them
//! with `-j N`), supervised like every process that runs the engine: a worker
//! the engine takes down, or one that overruns `--timeout`, costs only the
//! model it was checking, and a new worker goes on with the rest. Processes,
//! not threads, also because the engine prints each AssertEqual error on the
//! process's stdout, which is where they are read.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::models::select_models;
use super::options::{network_options, refuse_unchecked_testcases};
use super::{CheckFailed, Global};
use crate::cli::{CheckArgs, EngineArgs};
use crate::engine::{silence_stdout, take_stdout, Device, Lite, NetworkOptions};
use crate::model::ModelFile;
use crate::output_files::{ensure_writable, write_atomically};
use crate::report::check::{CheckReport, ModelCheck, Tally, TestcaseCheck};
use crate::report::junit::junit_xml;
use crate::report::{emit, emit_json};
use crate::runner::testcase::run_testcases;
use crate::runner::{Outputs, Plan, Session};
use crate::runtime;
use crate::supervise::parent::{interruption, Next, PassThrough, Supervisor};

pub fn check(mut args: CheckArgs, global: &Global) -> Result<()> {
    if args.worker {
        return serve(&args.models, &args.engine, global);
    }
    if let Some(junit) = &args.junit {
        ensure_writable(junit).with_context(|| format!("--junit {}", junit.display()))?;
    }
    args.models = select_models(&args.models, args.shard, global)?;
    let mut printer = InOrder::new(!args.json);
    let jobs = usize::try_from(args.jobs).unwrap_or(usize::MAX).min(args.models.len());
    let lite_lib = runtime::locate(global.lite_lib.as_deref())?.path;
    // Refused here, in one line (and noted once), rather than once per model.
    refuse_unchecked_testcases(&network_options(&args.engine, global)?)?;
    let workers = Workers {
        models: &args.models,
        engine_args: args.engine.to_args(),
        lite_lib: &lite_lib,
        timeout: args.deadline.timeout,
        verbose: global.verbose,
    };
    workers.check_all(jobs, &mut printer)?;
    let models = printer.finish();
    let tally = Tally::of_models(&models);
    let anything_ran = models.iter().any(ModelCheck::reached_the_engine);
    if let Some(junit) = &args.junit {
        write_atomically(junit, junit_xml(&models).as_bytes()).context("--junit")?;
    }
    if args.json {
        emit_json(&CheckReport { models, tally })?;
    } else {
        emit(&format!("{tally}\n"))?;
    }
    if !anything_ran && !args.models.is_empty() {
        bail!("no testcase could run");
    }
    if tally.failed > 0 {
        return Err(CheckFailed(tally.to_string()).into());
    }
    Ok(())
}

/// One run per testcase is enough to judge it.
fn check_plan(verbose: bool) -> Plan {
    Plan {
        warmup: 0,
        iterations: 1,
        duration: None,
        verbose,
    }
}

/// Checks one model in this process; any error is the model's, not the command's.
fn check_model(lite: &Lite, path: &Path, options: &NetworkOptions, verbose: bool) -> ModelCheck {
    match check_testcases(lite, path, options, verbose) {
        Ok(testcases) => ModelCheck {
            model: path.display().to_string(),
            error: None,
            engine_failed: false,
            testcases,
        },
        Err(err) => ModelCheck::unchecked(path, format!("{err:#}")),
    }
}

fn check_testcases(lite: &Lite, path: &Path, options: &NetworkOptions, verbose: bool) -> Result<Vec<TestcaseCheck>> {
    let model = ModelFile::read(path)?;
    if !model.is_container() {
        bail!(
            "{} embeds no testcases (dump it with input_data=..., or use `mge run`)",
            path.display()
        );
    }
    let _engine_output = silence_stdout(verbose);
    let mut session = Session::load(lite, &model, Outputs::Asserted, options)?;
    let runs = run_testcases(lite, &model, &mut session, &check_plan(verbose))?;
    Ok(runs.iter().map(TestcaseCheck::new).collect())
}

/// Results arrive in any order; lines are printed in the order models were given.
struct InOrder {
    print: bool,
    next: usize,
    pending: BTreeMap<usize, ModelCheck>,
    done: Vec<ModelCheck>,
}

impl InOrder {
    fn new(print: bool) -> InOrder {
        InOrder {
            print,
            next: 0,
            pending: BTreeMap::new(),
            done: Vec::new(),
        }
    }

    fn add(&mut self, index: usize, check: ModelCheck) -> Result<()> {
        self.pending.insert(index, check);
        while let Some(check) = self.pending.remove(&self.next) {
            if self.print {
                emit(&check.to_text())?;
            }
            self.done.push(check);
            self.next += 1;
        }
        Ok(())
    }

    fn finish(self) -> Vec<ModelCheck> {
        self.done
    }
}

/// What every worker process is started with.
struct Workers<'a> {
    models: &'a [PathBuf],
    /// The user's engine options, for each worker to check under.
    engine_args: Vec<String>,
    lite_lib: &'a Path,
    timeout: Option<Duration>,
    verbose: bool,
}

impl Workers<'_> {
    /// `jobs` threads, each feeding models to its own worker process and
    /// starting a new one when a worker dies.
    fn check_all(&self, jobs: usize, printer: &mut InOrder) -> Result<()> {
        let queue = Mutex::new((0..self.models.len()).collect::<VecDeque<_>>());
        let (sender, receiver) = mpsc::channel();
        thread::scope(|scope| {
            for _ in 0..jobs {
                let sender = sender.clone();
                let queue = &queue;
                scope.spawn(move || {
                    let mut worker: Option<Supervisor> = None;
                    // Its own statement: a guard in the `while let` would hold the lock for the body.
                    let next = || queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    while let Some(index) = next().filter(|_| interruption().is_none()) {
                        let check = self.check_in_worker(&mut worker, index);
                        if sender.send((index, check)).is_err() {
                            break;
                        }
                    }
                    if let Some(worker) = worker {
                        worker.close();
                    }
                });
            }
            drop(sender);
            for (index, check) in receiver {
                if let Some(interrupted) = interruption() {
                    return Err(interrupted.into());
                }
                printer.add(index, check)?;
            }
            match interruption() {
                Some(interrupted) => Err(interrupted.into()),
                None => Ok(()),
            }
        })
    }

    fn spawn(&self) -> Result<Supervisor> {
        let mut args: Vec<OsString> = vec!["--lite-lib".into(), self.lite_lib.into()];
        args.push(if self.verbose { "--verbose" } else { "--quiet" }.into());
        args.extend(["check".into(), "--worker".into()]);
        args.extend(self.engine_args.iter().map(OsString::from));
        args.push("--".into());
        args.extend(self.models.iter().map(OsString::from));
        let mut worker = Supervisor::spawn(args, true, true)?;
        if self.verbose {
            worker.show_engine_output();
        }
        Ok(worker)
    }

    fn check_in_worker(&self, worker: &mut Option<Supervisor>, index: usize) -> ModelCheck {
        let path = &self.models[index];
        let failed = |error: String| ModelCheck::unchecked(path, error);
        let fresh = worker.is_none();
        if fresh {
            match self.spawn() {
                Ok(spawned) => *worker = Some(spawned),
                Err(err) => return failed(format!("{err:#}")),
            }
        }
        let running = worker.as_mut().expect("spawned above");
        running.new_task();
        let asked = running
            .stdin
            .as_mut()
            .map(|requests| writeln!(requests, "{index}").and_then(|()| requests.flush()));
        if !matches!(asked, Some(Ok(()))) {
            *worker = None;
            // One that died since its last model is replaced; a new one that cannot take it is the model's error.
            return match fresh {
                true => failed("the worker process ended before it took the model".into()),
                false => self.check_in_worker(worker, index),
            };
        }
        let deadline = self.timeout.map(|limit| (Instant::now() + limit, limit));
        let answer = match running.next(deadline, &mut PassThrough) {
            Next::Reply(reply) => serde_json::from_str(&reply)
                .map_err(|err| failed(format!("unreadable reply from the worker process ({err})"))),
            Next::Exited(code) => Err(failed(format!(
                "the worker process exited with code {code} without an answer"
            ))),
            Next::Failed(failure) => Err(ModelCheck::engine_failed(path, failure.one_line())),
        };
        answer.unwrap_or_else(|check| {
            *worker = None;
            check
        })
    }
}

/// The worker side: check each model whose index arrives on stdin, answer on the original stdout.
fn serve(models: &[PathBuf], engine: &EngineArgs, global: &Global) -> Result<()> {
    let mut options = network_options(engine, global)?;
    // By default kernels run on the calling thread: the engine's CPU dispatcher
    // thread spins while it waits, and two workers' spinning threads starve each other.
    if engine.threads.is_none() && options.device == Device::Cpu {
        options.cpu_inplace = true;
    }
    let mut replies = take_stdout()?;
    let lite = runtime::load(global.lite_lib.as_deref(), global.verbose).map_err(|err| format!("{err:#}"));
    for request in std::io::stdin().lock().lines() {
        let request = request?;
        let path = request
            .trim()
            .parse::<usize>()
            .ok()
            .and_then(|index| models.get(index))
            .with_context(|| format!("unreadable request '{request}'"))?;
        let check = match &lite {
            Ok(lite) => check_model(lite, path, &options, global.verbose),
            Err(error) => ModelCheck::unchecked(path, error.clone()),
        };
        writeln!(replies, "{}", serde_json::to_string(&check)?)?;
        replies.flush()?;
    }
    Ok(())
}
