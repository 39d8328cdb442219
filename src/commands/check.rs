//! `mge check`: every embedded testcase of every model, pass or fail.
//!
//! With `-j N` models are checked in N worker processes (`mge check --worker`),
//! not threads: the engine prints each AssertEqual error on the process's
//! stdout, which is how the errors are read, and one process has one stdout.
//! A worker that crashes costs only the model it was checking.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::thread;

use anyhow::{bail, Context, Result};

use super::models::select_models;
use super::{CheckFailed, Global};
use crate::cli::CheckArgs;
use crate::engine::{silence_stdout, take_stdout, Lite, NetworkOptions};
use crate::model::ModelFile;
use crate::report::check::{CheckReport, ModelCheck, Tally, TestcaseCheck};
use crate::report::file::{ensure_writable, write_atomically};
use crate::report::junit::junit_xml;
use crate::report::{emit, emit_json};
use crate::runner::testcase::{run_testcases, Status};
use crate::runner::{Plan, Session};
use crate::runtime;

pub fn check(mut args: CheckArgs, global: &Global) -> Result<()> {
    if args.worker {
        return serve(global);
    }
    if let Some(junit) = &args.junit {
        ensure_writable(junit).with_context(|| format!("--junit {}", junit.display()))?;
    }
    args.models = select_models(&args.models, args.shard, global)?;
    let mut printer = InOrder::new(!args.json);
    let jobs = usize::try_from(args.jobs).unwrap_or(usize::MAX).min(args.models.len());
    if jobs > 1 {
        let lite_lib = runtime::locate(global.lite_lib.as_deref())?.path;
        check_in_workers(&args.models, jobs, &lite_lib, global, &mut printer)?;
    } else {
        let lite = runtime::load(global.lite_lib.as_deref(), global.verbose)?;
        for (index, path) in args.models.iter().enumerate() {
            printer.add(index, check_model(&lite, path, global.verbose))?;
        }
    }
    let models = printer.finish();
    let tally = Tally::of_models(&models);
    let anything_ran = models
        .iter()
        .flat_map(|model| &model.testcases)
        .any(|testcase| testcase.status != Status::Error);
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
        quiet: true,
        verbose,
    }
}

/// Checks one model in this process; any error is the model's, not the command's.
fn check_model(lite: &Lite, path: &Path, verbose: bool) -> ModelCheck {
    match check_testcases(lite, path, verbose) {
        Ok(testcases) => ModelCheck {
            model: path.display().to_string(),
            error: None,
            testcases,
        },
        Err(err) => ModelCheck::unchecked(path, format!("{err:#}")),
    }
}

fn check_testcases(lite: &Lite, path: &Path, verbose: bool) -> Result<Vec<TestcaseCheck>> {
    let model = ModelFile::read(path)?;
    if !model.is_container() {
        bail!(
            "{} embeds no testcases (dump it with input_data=..., or use `mge run`)",
            path.display()
        );
    }
    let _engine_output = silence_stdout(verbose);
    // Kernels on the calling thread: the engine's CPU dispatcher thread spins
    // while it waits, and two workers' spinning threads starve each other.
    let options = NetworkOptions {
        cpu_inplace: true,
        ..NetworkOptions::default()
    };
    let mut session = Session::load(lite, &model, &options)?;
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

/// `jobs` threads, each feeding models to its own worker process and
/// starting a new one when a worker dies.
fn check_in_workers(
    models: &[PathBuf],
    jobs: usize,
    lite_lib: &Path,
    global: &Global,
    printer: &mut InOrder,
) -> Result<()> {
    let queue = Mutex::new(models.iter().enumerate().collect::<VecDeque<_>>());
    let (sender, receiver) = mpsc::channel();
    thread::scope(|scope| {
        for _ in 0..jobs {
            let sender = sender.clone();
            let queue = &queue;
            scope.spawn(move || {
                let mut worker: Option<Worker> = None;
                // Its own statement: a guard in the `while let` would hold the lock for the body.
                let next = || queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                while let Some((index, path)) = next() {
                    let check = check_in_worker(&mut worker, path, lite_lib, global);
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
            printer.add(index, check)?;
        }
        Ok(())
    })
}

fn check_in_worker(worker: &mut Option<Worker>, path: &Path, lite_lib: &Path, global: &Global) -> ModelCheck {
    let failed = |error: String| ModelCheck::unchecked(path, error);
    let Some(path_text) = path.to_str() else {
        return failed(format!("{}: -j needs UTF-8 paths", path.display()));
    };
    if worker.is_none() {
        match Worker::spawn(lite_lib, global) {
            Ok(spawned) => *worker = Some(spawned),
            Err(err) => return failed(format!("{err:#}")),
        }
    }
    let running = worker.as_mut().expect("spawned above");
    match running.check(path_text) {
        Ok(check) => check,
        Err(err) => {
            let ended = worker.take().expect("spawned above").end();
            failed(format!("the worker process checking it {ended} ({err:#})"))
        }
    }
}

/// A child `mge check --worker`: model paths in on stdin, one JSON `ModelCheck`
/// per line out on stdout.
struct Worker {
    child: Child,
    requests: ChildStdin,
    replies: BufReader<ChildStdout>,
}

impl Worker {
    fn spawn(lite_lib: &Path, global: &Global) -> Result<Worker> {
        let exe = std::env::current_exe().context("cannot find the mge executable to start workers")?;
        let mut command = Command::new(exe);
        command.arg("--lite-lib").arg(lite_lib);
        command.arg(if global.verbose { "--verbose" } else { "--quiet" });
        let mut child = command
            .args(["check", "--worker"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start a worker process")?;
        let requests = child.stdin.take().expect("piped");
        let replies = BufReader::new(child.stdout.take().expect("piped"));
        Ok(Worker {
            child,
            requests,
            replies,
        })
    }

    fn check(&mut self, path: &str) -> Result<ModelCheck> {
        writeln!(self.requests, "{}", serde_json::to_string(path)?)?;
        self.requests.flush()?;
        let mut reply = String::new();
        if self.replies.read_line(&mut reply)? == 0 {
            bail!("no reply");
        }
        serde_json::from_str(&reply).context("unreadable reply")
    }

    /// Ends a worker with no more work: a closed stdin ends its loop.
    fn close(self) {
        let Worker {
            mut child, requests, ..
        } = self;
        drop(requests);
        let _ = child.wait();
    }

    /// How the process ended, for the message of the model it was checking.
    fn end(mut self) -> String {
        let _ = self.child.kill();
        match self.child.wait() {
            Ok(status) => match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
                (Some(code), _) => format!("exited with code {code}"),
                (None, Some(signal)) => format!("was killed by signal {signal}"),
                _ => format!("ended ({status})"),
            },
            Err(err) => format!("could not be waited for ({err})"),
        }
    }
}

/// The worker side: check each model named on stdin, answer on the original stdout.
fn serve(global: &Global) -> Result<()> {
    let mut replies = take_stdout()?;
    let lite = runtime::load(global.lite_lib.as_deref(), global.verbose).map_err(|err| format!("{err:#}"));
    for request in std::io::stdin().lock().lines() {
        let path: String = serde_json::from_str(&request?).context("unreadable request")?;
        let path = PathBuf::from(path);
        let check = match &lite {
            Ok(lite) => check_model(lite, &path, global.verbose),
            Err(error) => ModelCheck::unchecked(&path, error.clone()),
        };
        writeln!(replies, "{}", serde_json::to_string(&check)?)?;
        replies.flush()?;
    }
    Ok(())
}
