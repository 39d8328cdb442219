//! One `mge` command (`run --json`, `info --json`) in a supervised child of
//! its own, and what became of it: a sweep's shapes and `--reduce`'s tries,
//! each in a process the engine may take down, end in one of these ways.

use std::fmt;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::exit::FINITE_CHECK;
use crate::interrupt::Interrupted;
use crate::mge_command::MgeCommand;
use crate::supervise::parent::{ChildStdout, Failure, How, Muted, Next, PassThrough, Supervisor, Watcher};

/// How a child ended.
#[derive(Debug)]
pub enum Outcome {
    /// It did its work (exit 0).
    Ran,
    /// An output held NaN or infinities under `--check-finite` (exit 1).
    NonFinite(String),
    /// Another of its checks failed (exit 1).
    CheckFailed(String),
    /// It ended with its error (exit 2): the engine returned an error, or
    /// mge refused; the process itself was sound.
    Refused(String),
    /// The engine took the process down: a signal, its `exit`, or an exit
    /// code the tool never ends with.
    Crashed(Failure),
    /// Stopped at its deadline, or stuck.
    Hung(Failure),
}

impl Outcome {
    /// Whether `self` and `other` are the same failure: the same signal, the
    /// same exit status, a hang for a hang, non-finite outputs for non-finite outputs.
    pub fn fails_like(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Crashed(a), Outcome::Crashed(b)) => match (&a.how, &b.how) {
                (How::Signal(a), How::Signal(b)) | (How::Exited(a), How::Exited(b)) => a == b,
                (How::EngineExit { status: a, .. }, How::EngineExit { status: b, .. }) => a == b,
                _ => false,
            },
            (Outcome::Hung(_), Outcome::Hung(_)) | (Outcome::NonFinite(_), Outcome::NonFinite(_)) => true,
            _ => false,
        }
    }
}

impl fmt::Display for Outcome {
    /// One line: what failed, or that it ran.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Ran => f.write_str("it ran"),
            Outcome::NonFinite(said) | Outcome::CheckFailed(said) | Outcome::Refused(said) => f.write_str(said),
            Outcome::Crashed(failure) | Outcome::Hung(failure) => f.write_str(&failure.one_line()),
        }
    }
}

/// A child's end, and what it printed.
pub struct ChildRun {
    pub outcome: Outcome,
    /// Its stdout: the JSON report, where it printed one.
    pub report: String,
    /// What it printed on stderr (see `Supervisor::transcript`).
    pub transcript: String,
}

/// Runs `command`, whose stdout is read as its report, supervised until
/// `timeout` passes; what it says on stderr is shown with `verbose` only.
/// The user's interruption is the error.
pub fn run_child(command: &MgeCommand, timeout: Option<Duration>, verbose: bool) -> Result<ChildRun> {
    let mut child = Supervisor::spawn(command, false, ChildStdout::Replies)?;
    let mut watcher: Box<dyn Watcher> = match verbose {
        true => {
            child.show_engine_output();
            Box::new(PassThrough)
        }
        false => Box::new(Muted),
    };
    let deadline = timeout.map(|limit| (Instant::now() + limit, limit));
    let mut report = String::new();
    let ended = loop {
        match child.next(deadline, watcher.as_mut()) {
            Next::Reply(line) => {
                report.push_str(&line);
                report.push('\n');
            }
            ended => break ended,
        }
    };
    let transcript = child.transcript();
    let outcome = match ended {
        Next::Exited(0) => Outcome::Ran,
        Next::Exited(1) => {
            let said = check_failure(&transcript).unwrap_or_else(|| child.why_it_exited(1));
            match said.ends_with(FINITE_CHECK) {
                true => Outcome::NonFinite(said),
                false => Outcome::CheckFailed(said),
            }
        }
        Next::Exited(code) => Outcome::Refused(child.why_it_exited(code)),
        Next::Failed(failure) => match failure.how {
            How::Interrupted(signal) => return Err(Interrupted(signal).into()),
            How::TimedOut(_) | How::Stalled { .. } => Outcome::Hung(failure),
            _ => Outcome::Crashed(failure),
        },
        Next::Reply(_) => unreachable!("replies are read in the loop above"),
    };
    Ok(ChildRun {
        outcome,
        report,
        transcript,
    })
}

/// The failed check a child said last (`mge: check failed: ...`), without its prefix.
pub fn check_failure(transcript: &str) -> Option<String> {
    transcript
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("mge: check failed: "))
        .map(str::to_string)
}
