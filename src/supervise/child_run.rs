//! One `mge` command in a supervised child of its own, run to its end: the
//! supervised re-run of the user's command, a sweep's shapes, `--reduce`'s
//! tries, the rounds' timed and profiled runs, `compare`'s runs, the
//! runtime's probe. Each ends in one of the ways `Outcome` says.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::interrupt::Interrupted;
use crate::mge_command::MgeCommand;
use crate::supervise::parent::{ChildStdout, How, Muted, Next, Outcome, PassThrough, Supervisor, Watcher, Work};

/// How a child is watched on its way.
pub struct Watch<'w> {
    /// What its stdout is: with `Replies`, its report, kept in `ChildRun::report`.
    pub stdout: ChildStdout,
    /// It is stopped at this instant, a hang after this long.
    pub deadline: Option<(Instant, Duration)>,
    /// What the engine prints is passed to `watcher` too (`-v`).
    pub verbose: bool,
    /// What it does, for the hint of a failure.
    pub work: Work,
    /// Told what the child does; without one, its words are passed on with `verbose` only.
    pub watcher: Option<&'w mut dyn Watcher>,
}

impl Watch<'_> {
    /// A child whose report is read, its words passed on with `verbose`
    /// only, stopped after `timeout`.
    pub fn reporting(timeout: Option<Duration>, verbose: bool) -> Watch<'static> {
        Watch {
            stdout: ChildStdout::Replies,
            deadline: deadline_after(timeout),
            verbose,
            work: Work::Model,
            watcher: None,
        }
    }
}

/// The deadline of a child started now and stopped after `timeout`.
pub fn deadline_after(timeout: Option<Duration>) -> Option<(Instant, Duration)> {
    timeout.map(|limit| (Instant::now() + limit, limit))
}

/// A child's end, and what it printed.
pub struct ChildRun {
    pub outcome: Outcome,
    /// Its stdout (with `ChildStdout::Replies`): the JSON report, where it printed one.
    pub report: String,
    /// What it printed on stderr (see `Supervisor::transcript`).
    pub transcript: String,
}

/// Runs `command` in a supervised child to its end, watched as `watch`
/// says. The user's interruption is the error.
pub fn run_child(command: &MgeCommand, watch: Watch) -> Result<ChildRun> {
    let mut child = Supervisor::spawn(command, false, watch.stdout)?;
    child.doing(watch.work);
    if watch.verbose {
        child.show_engine_output();
    }
    let (mut muted, mut passed_on) = (Muted, PassThrough);
    let watcher: &mut dyn Watcher = match watch.watcher {
        Some(watcher) => watcher,
        None if watch.verbose => &mut passed_on,
        None => &mut muted,
    };
    let mut report = String::new();
    let outcome = loop {
        match child.next(watch.deadline, watcher) {
            Next::Reply(line) => {
                report.push_str(&line);
                report.push('\n');
            }
            Next::Ended(outcome) => break outcome,
        }
    };
    if let Some(How::Interrupted(signal)) = outcome.failure().map(|failure| &failure.how) {
        return Err(Interrupted(*signal).into());
    }
    Ok(ChildRun {
        outcome,
        report,
        transcript: child.transcript(),
    })
}
