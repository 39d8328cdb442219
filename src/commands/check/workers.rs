//! The worker processes of `mge check`: the parent's side (`Workers`: a
//! thread per job, each feeding models to its own supervised worker and
//! starting a new one when a worker dies) and the worker's side (`serve`).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::InOrder;
use crate::compare::Rules;
use crate::engine::{silence_stdout, take_stdout, Lite};
use crate::loading::{load_runtime, read_model, ready_runtime, with_carried};
use crate::mge_command::MgeCommand;
use crate::options::EngineOption;
use crate::output_checks::finite::judge_testcases;
use crate::pool::share_out;
use crate::report::check::{ModelCheck, TestcaseCheck};
use crate::report::repro::discard_record;
use crate::runner::testcase::{run_testcases, Judge};
use crate::runner::{RunPlan, Session};
use crate::runtime;
use crate::runtime::algo_cache::ModelRecord;
use crate::settings::EngineSettings;
use crate::settings::Global;
use crate::supervise::parent::{ChildStdout, Next, PassThrough, Supervisor};
use crate::supervise::{json_line, repro_record};
use crate::text::path_text;

/// What every worker process is started with.
pub struct Workers<'a> {
    pub models: &'a [PathBuf],
    /// The user's engine options, for each worker to check under.
    pub engine: &'a [EngineOption],
    /// The user's comparison rules, when the outputs are judged by them.
    pub rules: Option<&'a Rules>,
    pub runtime: &'a runtime::Located,
    pub timeout: Option<Duration>,
    pub verbose: bool,
    pub check_finite: bool,
    /// `--require-testcases`: a plain model fails.
    pub require_testcases: bool,
    /// Where the workers record what they feed the engine, for `--repro`
    /// (each model in its own folder, by its index).
    pub record: Option<PathBuf>,
}

/// A model's check, with what its worker printed on stderr meanwhile when
/// the model's failure is one `--repro` reproduces.
pub type Checked = (ModelCheck, Option<String>);

impl Workers<'_> {
    /// `jobs` threads, each feeding models to its own worker process and
    /// starting a new one when a worker dies. A worker that cannot be started
    /// (no process, no descriptor left: `ulimit -n`) ends the command: the
    /// machine failed, not the model. Returns each model's transcript (`Checked`).
    pub fn check_all(&self, jobs: usize, printer: &mut InOrder) -> Result<Vec<Option<String>>> {
        let mut transcripts = vec![None; self.models.len()];
        share_out(
            self.models.len(),
            jobs,
            "check the models",
            |worker, index| self.check_in_worker(worker, index),
            |worker: Option<Supervisor>| {
                if let Some(worker) = worker {
                    worker.close(&mut PassThrough);
                }
            },
            |index, (check, transcript)| {
                transcripts[index] = transcript;
                printer.add(index, check)
            },
        )?;
        Ok(transcripts)
    }

    fn spawn(&self) -> Result<Supervisor> {
        let mut command = MgeCommand::check_worker()
            .runtime(Ok(self.runtime))
            .verbose(self.verbose)
            .engine(self.engine)
            .rules(self.rules)
            .check_finite(self.check_finite)
            .models(self.models);
        if let Some(record) = &self.record {
            command = command.record_for_repro(record);
        }
        let mut worker = Supervisor::spawn(&command, true, ChildStdout::Replies)?;
        if self.verbose {
            worker.show_engine_output();
        }
        Ok(worker)
    }

    /// The model's check, by `worker` or a new one; `Err` only when no worker can be started.
    fn check_in_worker(&self, worker: &mut Option<Supervisor>, index: usize) -> Result<Checked> {
        let path = &self.models[index];
        let failed = |error: String| ModelCheck::unchecked(path, error);
        let fresh = worker.is_none();
        if fresh {
            *worker = Some(self.spawn().context("cannot start a worker process")?);
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
                true => Ok((failed("the worker process ended before it took the model".into()), None)),
                false => self.check_in_worker(worker, index),
            };
        }
        let deadline = self.timeout.map(|limit| (Instant::now() + limit, limit));
        let answer = match running.next(deadline, &mut PassThrough) {
            Next::Reply(reply) => serde_json::from_str(&reply)
                .map(Answer::check)
                .map_err(|err| failed(format!("unreadable reply from the worker process ({err})"))),
            Next::Ended(outcome) => Err(match (outcome.failure(), outcome.exit_code()) {
                (Some(failure), _) => ModelCheck::engine_failed(path, failure.one_line()),
                (None, code) => failed(format!(
                    "the worker process exited with code {} without an answer",
                    code.unwrap_or_default()
                )),
            }),
        };
        let check = answer.as_ref().unwrap_or_else(|check| check);
        let transcript = (self.record.is_some() && check.failed_in_the_run()).then(|| running.transcript());
        if let (Some(record), None) = (&self.record, &transcript) {
            discard_record(&record.join(index.to_string()));
        }
        let check = answer.unwrap_or_else(|check| {
            *worker = None;
            check
        });
        Ok((check.require_testcases(self.require_testcases), transcript))
    }
}

/// The worker side: check each model whose index arrives on stdin, answer on
/// the original stdout. The engine options come from the parent, defaults included.
pub fn serve(
    models: &[PathBuf],
    engine: &EngineSettings,
    rules: Option<&Rules>,
    check_finite: bool,
    global: &Global,
) -> Result<()> {
    let judging = Judging {
        judge: rules.map_or(Judge::Engine, Judge::Rules),
        check_finite,
    };
    let mut replies = take_stdout()?;
    let lite = load_runtime(global, engine.network.device).map_err(|err| format!("{err:#}"));
    for request in std::io::stdin().lock().lines() {
        let request = request?;
        let (index, path) = request
            .trim()
            .parse::<usize>()
            .ok()
            .and_then(|index| Some((index, models.get(index)?)))
            .with_context(|| format!("unreadable request '{request}'"))?;
        repro_record::task(index);
        let check = match &lite {
            Ok(lite) => check_model(lite, path, engine, judging, global),
            Err(error) => ModelCheck::unchecked(path, error.clone()),
        };
        replies.write_all(json_line(&Answer::of(check))?.as_bytes())?;
        replies.flush()?;
    }
    Ok(())
}

/// A worker's answer for one model: its check, and which of its testcases
/// failed `--check-finite` (which the check's report says in words only).
#[derive(Serialize, Deserialize)]
struct Answer {
    check: ModelCheck,
    non_finite: Vec<usize>,
}

impl Answer {
    fn of(check: ModelCheck) -> Answer {
        let non_finite = check
            .testcases
            .iter()
            .filter(|testcase| testcase.non_finite)
            .map(|testcase| testcase.index)
            .collect();
        Answer { check, non_finite }
    }

    fn check(self) -> ModelCheck {
        let Answer { mut check, non_finite } = self;
        for testcase in &mut check.testcases {
            testcase.non_finite = non_finite.contains(&testcase.index);
        }
        check
    }
}

/// How a worker judges each testcase.
#[derive(Clone, Copy)]
struct Judging<'a> {
    /// The model's assertions, or the user's comparison rules.
    judge: Judge<'a>,
    /// `--check-finite`: outputs that hold NaN or infinities fail the testcase.
    check_finite: bool,
}

/// Checks one model in this process; any error is the model's, not the command's.
fn check_model(lite: &Lite, path: &Path, engine: &EngineSettings, judging: Judging, global: &Global) -> ModelCheck {
    let mut load_s = None;
    match check_testcases(lite, path, engine, judging, global, &mut load_s) {
        Ok(Some(testcases)) => ModelCheck {
            model: path_text(path),
            error: None,
            engine_failed: false,
            no_testcases: false,
            load_s,
            testcases,
        },
        Ok(None) => ModelCheck::plain(path),
        Err(err) => ModelCheck {
            load_s,
            ..ModelCheck::unchecked(path, format!("{err:#}"))
        },
    }
}

/// The model's testcases, having set `load_s` once the model was read and
/// loaded; `None` for a plain model, which embeds none and is not loaded.
fn check_testcases(
    lite: &Lite,
    path: &Path,
    engine: &EngineSettings,
    judging: Judging,
    global: &Global,
    load_s: &mut Option<f64>,
) -> Result<Option<Vec<TestcaseCheck>>> {
    let loading = Instant::now();
    let model = read_model(path, engine)?;
    if !model.is_container() {
        return Ok(None);
    }
    // The options a packed model carries are mirrored, without a note per model.
    let quiet = Global {
        runtime: Default::default(),
        verbose: global.verbose,
        quiet: true,
        mute: false,
    };
    let engine = with_carried(engine, &model, path, &quiet)?;
    let ready = ready_runtime(lite, &engine, &model, &engine.network, global)?;
    let verbose = global.verbose;
    let _engine_output = silence_stdout(verbose);
    let judge = judging.judge;
    let mut session = Session::load(lite, &model, judge.outputs(), &engine.network)?;
    *load_s = Some(loading.elapsed().as_secs_f64());
    let mut runs = run_testcases(lite, &model, &mut session, &RunPlan::once(verbose), judge)?;
    ready.keep_algorithms(lite, ModelRecord::default(), global);
    judge_testcases(
        &mut runs,
        &format!("{} #", path.display()),
        judging.check_finite,
        global,
    );
    Ok(Some(runs.iter().map(TestcaseCheck::new).collect()))
}
