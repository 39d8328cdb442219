//! The parent's side: start the child, pass its output on, watch it, and say
//! how it ended.

use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::command::MgeCommand;
use super::{error_line, Event, Whereabouts, CHILD_ENV, EVENT_MARKER};
use crate::runtime::Located;

/// How often a quiet child is looked at (has it ended? is the deadline past? were we interrupted?).
const TICK: Duration = Duration::from_millis(100);

/// A child that reported the engine's `exit` ends at once (`_exit`); one that
/// has not after this long is stopped, so that no path can hang.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The user stopped the tool (SIGINT, SIGTERM, SIGHUP when the terminal
/// closed): the child is stopped, its temporary files removed, and the tool
/// exits with 128 + the signal, as shells expect.
#[derive(Debug)]
pub struct Interrupted(pub i32);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "interrupted ({})", signal_name(self.0))
    }
}

impl std::error::Error for Interrupted {}

/// From here on, SIGINT, SIGTERM and SIGHUP no longer end the tool at once:
/// they are noted for `interruption`, so that what was begun can be undone.
pub fn catch_interruptions() {
    interruptions();
}

/// The signal that interrupted the tool, if one did (see `catch_interruptions`).
pub fn interruption() -> Option<Interrupted> {
    match interruptions().load(Ordering::SeqCst) {
        0 => None,
        signal => Some(Interrupted(signal as i32)),
    }
}

fn interruptions() -> &'static Arc<AtomicUsize> {
    static SIGNAL: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    SIGNAL.get_or_init(|| {
        let signal = Arc::new(AtomicUsize::new(0));
        for caught in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // Without the handler the signal keeps its default: the tool ends at once.
            let _ = signal_hook::flag::register_usize(caught, Arc::clone(&signal), caught as usize);
        }
        signal
    })
}

/// Told what the child is doing: the presentation of a supervised run.
pub trait Watcher {
    /// The child entered a phase or made progress in it.
    fn moved(&mut self, whereabouts: &Whereabouts);
    /// Words of the child's for the user: its own, or the engine's with `-v`.
    fn text(&mut self, line: &str);
}

/// Passes the child's lines on and shows no progress.
pub struct PassThrough;

impl Watcher for PassThrough {
    fn moved(&mut self, _: &Whereabouts) {}
    fn text(&mut self, line: &str) {
        pass_on(line);
    }
}

/// Keeps the child's words to itself (the engine's still make its last words).
pub struct Muted;

impl Watcher for Muted {
    fn moved(&mut self, _: &Whereabouts) {}
    fn text(&mut self, _: &str) {}
}

/// The head of an engine backtrace, or one of its frames:
/// `lib.so(symbol+0x4a) [0x7fb86344686a]`.
fn is_backtrace(line: &str) -> bool {
    line == "backtrace:" || (line.ends_with(']') && line.contains("[0x"))
}

/// A line of the child's on our stderr. A stderr that is gone (`2>&-`, a
/// reader that quit) must not end the supervision: the line is dropped.
pub fn pass_on(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// A child that died or was stopped before it could answer.
#[derive(Debug)]
pub struct Failure {
    pub how: How,
    pub whereabouts: Whereabouts,
    /// The last line the engine printed before the child died.
    pub last_words: Option<String>,
    /// What to try, where the engine's last words tell.
    pub hint: Option<&'static str>,
}

/// The work a child does, for a hint that fits it when the engine's bundled
/// oneDNN fails (`Xbyak` in its last words: seen on AMD CPUs with AVX-512).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Work {
    /// Runs a model: the options that use oneDNN's kernels can be left out.
    #[default]
    Model,
    /// Makes a layout-transformed model: the transform itself needs those kernels.
    LayoutTransformModel,
}

impl Work {
    fn hint(self, last_words: Option<&str>) -> Option<&'static str> {
        if !last_words?.contains("Xbyak") {
            return None;
        }
        Some(match self {
            Work::Model => {
                "the engine's bundled oneDNN kernels fail on this CPU (seen on AMD CPUs with AVX-512) under \
                 --layout-transform and --layout nchw88; run without them (--layout nchw44 and --fast-run work here)"
            }
            Work::LayoutTransformModel => {
                "the engine's global layout transform runs oneDNN kernels that fail on this CPU (seen on AMD \
                 CPUs with AVX-512); make the layout-transformed model on another CPU"
            }
        })
    }
}

#[derive(Debug)]
pub enum How {
    /// The engine called exit() (and would have hung in its exit handler).
    EngineExit { status: i32, thread: String },
    /// Ended by a signal it did not handle.
    Signal(i32),
    /// Stopped by us at the deadline.
    TimedOut(Duration),
    /// Stopped by us because the user interrupted the tool with this signal.
    Interrupted(i32),
}

impl Failure {
    /// The message and its hint on one line, for a report that has a line per model.
    pub fn one_line(&self) -> String {
        self.to_string().replace("\nhint: ", "; hint: ")
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = &self.whereabouts;
        match &self.how {
            How::EngineExit { status, thread } => write!(
                f,
                "the engine ended the process with exit({status}) from its thread '{thread}' {place}"
            )?,
            How::Signal(signal) => write!(f, "the engine crashed ({}) {place}", signal_name(*signal))?,
            How::TimedOut(limit) => write!(f, "stopped after --timeout {} {place}", seconds(*limit))?,
            How::Interrupted(signal) => write!(f, "{} {place}", Interrupted(*signal))?,
        }
        if let Some(words) = &self.last_words {
            write!(f, "; it said last: '{words}'")?;
        }
        if let Some(hint) = self.hint {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

fn seconds(limit: Duration) -> String {
    format!("{}s", limit.as_secs_f64())
}

fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        _ => return format!("signal {signal}"),
    };
    name.to_string()
}

/// What `Supervisor::next` saw first.
pub enum Next {
    /// A line on the child's stdout (a worker's answer).
    Reply(String),
    /// The child exited normally with this code.
    Exited(i32),
    Failed(Failure),
}

enum Message {
    Event(Event),
    Text(String),
    Reply(String),
    Closed,
}

/// A running child `mge`.
pub struct Supervisor {
    child: Child,
    /// The child's TMPDIR, removed with the supervisor (after the child ended: see `Drop`).
    _scratch: tempfile::TempDir,
    pub stdin: Option<ChildStdin>,
    messages: Receiver<Message>,
    /// Streams still open (stderr, and stdout when it carries replies).
    open_streams: usize,
    whereabouts: Whereabouts,
    /// The engine's `exit` the child reported, and when its grace runs out.
    engine_exit: Option<(i32, String, Instant)>,
    /// The last line the engine printed.
    last_words: Option<String>,
    /// The error the child said it ends with.
    error: Option<String>,
    /// Pass the engine's own lines on too (`-v`).
    show_engine_output: bool,
    work: Work,
    /// The staging files and folders the child has beside its outputs.
    staging: Vec<PathBuf>,
}

impl Supervisor {
    /// Starts `command` as a supervised child. Its stdin is piped when
    /// `requests` is set (else inherited); its stdout carries replies when
    /// `replies` is set (else it is ours).
    pub fn spawn(command: &MgeCommand, requests: bool, replies: bool) -> Result<Supervisor> {
        let exe = std::env::current_exe().context("cannot find the mge executable to start the engine's process")?;
        let piped_if = |on: bool| if on { Stdio::piped() } else { Stdio::inherit() };
        catch_interruptions();
        // Whatever temporary files the child leaves (it may be killed) go with this folder.
        let scratch = tempfile::Builder::new()
            .prefix("mge-")
            .tempdir()
            .context("cannot create a temporary folder for the engine's process")?;
        let mut child = Command::new(exe)
            .args(command.args())
            .envs(command.env().map(|(name, value)| (name, value)))
            .env(CHILD_ENV, "1")
            .env("TMPDIR", scratch.path())
            .stdin(piped_if(requests))
            .stdout(piped_if(replies))
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start the engine's process")?;
        let (sender, messages) = mpsc::channel();
        let stderr = child.stderr.take().expect("piped");
        read_lines(stderr, sender.clone(), |line| match line.split_once(EVENT_MARKER) {
            Some((before, event)) => {
                let mut messages = Vec::new();
                if !before.is_empty() {
                    messages.push(Message::Text(before.to_string()));
                }
                match serde_json::from_str(event) {
                    Ok(event) => messages.push(Message::Event(event)),
                    Err(_) => messages.push(Message::Text(line.replace(EVENT_MARKER, ""))),
                }
                messages
            }
            None => vec![Message::Text(line)],
        });
        if let Some(stdout) = child.stdout.take() {
            read_lines(stdout, sender, |line| vec![Message::Reply(line)]);
        }
        Ok(Supervisor {
            stdin: child.stdin.take(),
            child,
            _scratch: scratch,
            messages,
            open_streams: if replies { 2 } else { 1 },
            whereabouts: Whereabouts::default(),
            engine_exit: None,
            last_words: None,
            error: None,
            show_engine_output: false,
            work: Work::default(),
            staging: Vec::new(),
        })
    }

    /// Passes what the engine prints on to the user too (`-v`).
    pub fn show_engine_output(&mut self) {
        self.show_engine_output = true;
    }

    /// What the child does, for the hint of a failure.
    pub fn doing(&mut self, work: Work) {
        self.work = work;
    }

    /// The error the child said it ends with, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Forgets where the child was: it starts on a new piece of work.
    pub fn new_task(&mut self) {
        self.whereabouts = Whereabouts::default();
        self.last_words = None;
        self.error = None;
    }

    /// Passes the child's output to `watcher` until it replies, ends, or
    /// `deadline` passes (then it is killed).
    pub fn next(&mut self, deadline: Option<(Instant, Duration)>, watcher: &mut dyn Watcher) -> Next {
        loop {
            if let Some(Interrupted(signal)) = interruption() {
                self.stop();
                return Next::Failed(self.failure(How::Interrupted(signal)));
            }
            if let Some((at, limit)) = deadline {
                if Instant::now() >= at {
                    self.stop();
                    return Next::Failed(self.failure(How::TimedOut(limit)));
                }
            }
            if let Some((status, thread, grace)) = self.engine_exit.clone() {
                if Instant::now() >= grace {
                    self.stop();
                    return Next::Failed(self.failure(How::EngineExit { status, thread }));
                }
            }
            let wakeups = [deadline.map(|(at, _)| at), self.engine_exit.as_ref().map(|exit| exit.2)];
            let wait = wakeups
                .into_iter()
                .flatten()
                .fold(TICK, |wait, at| wait.min(at.saturating_duration_since(Instant::now())));
            match self.messages.recv_timeout(wait) {
                Ok(Message::Reply(line)) => return Next::Reply(line),
                Ok(Message::Event(event)) => self.take(event, watcher),
                Ok(Message::Text(line)) => {
                    self.remember(&line);
                    if self.show_engine_output {
                        watcher.text(&line);
                    }
                }
                Ok(Message::Closed) => {
                    self.open_streams -= 1;
                    if self.open_streams == 0 {
                        return self.ended();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return self.ended(),
            }
        }
    }

    fn take(&mut self, event: Event, watcher: &mut dyn Watcher) {
        match event {
            Event::Phase { phase } => {
                self.whereabouts.enter(phase);
                watcher.moved(&self.whereabouts);
            }
            Event::Progress { done } => {
                self.whereabouts.done = done;
                watcher.moved(&self.whereabouts);
            }
            Event::EngineExit { status, thread } => {
                self.engine_exit = Some((status, thread, Instant::now() + EXIT_GRACE));
            }
            Event::Said { text } => text.lines().for_each(|line| watcher.text(line)),
            Event::Error { message } => {
                error_line(&message).lines().for_each(|line| watcher.text(line));
                self.error = Some(message);
            }
            Event::Staging { path, exists: true } => self.staging.push(path),
            Event::Staging { path, exists: false } => self.staging.retain(|staged| *staged != path),
        }
    }

    /// Waits for the child to end (it has closed its output or is about to).
    fn ended(&mut self) -> Next {
        match self.child.wait() {
            Ok(status) => self.judge(status),
            Err(_) => Next::Failed(self.failure(How::Signal(libc::SIGKILL))),
        }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn judge(&mut self, status: ExitStatus) -> Next {
        use std::os::unix::process::ExitStatusExt;
        if let Some(Interrupted(signal)) = interruption() {
            return Next::Failed(self.failure(How::Interrupted(signal)));
        }
        if let Some((status, thread, _)) = self.engine_exit.take() {
            return Next::Failed(self.failure(How::EngineExit { status, thread }));
        }
        match status.signal() {
            Some(signal) => Next::Failed(self.failure(How::Signal(signal))),
            None => Next::Exited(status.code().unwrap_or(2)),
        }
    }

    fn failure(&mut self, how: How) -> Failure {
        Failure {
            how,
            whereabouts: self.whereabouts,
            last_words: self.last_words.clone(),
            hint: self.work.hint(self.last_words.as_deref()),
        }
    }

    fn remember(&mut self, line: &str) {
        let line = line.trim();
        // A backtrace says where, not what: the line before it does.
        if !line.is_empty() && !is_backtrace(line) {
            self.last_words = Some(line.to_string());
        }
    }

    /// Ends a child with nothing more to do: a closed stdin ends a worker's
    /// loop. What it says after its last reply still goes to `watcher`.
    pub fn close(mut self, watcher: &mut dyn Watcher) {
        drop(self.stdin.take());
        while let Next::Reply(_) = self.next(None, watcher) {}
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        // A child still running here was abandoned (an error, a deadline): stop it.
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
        // What a child that was stopped or died left half-written; only the
        // tool's own staging names, whatever the child said.
        for path in &self.staging {
            if path
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(".mge-"))
            {
                let _ = std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path));
            }
        }
    }
}

/// A thread that turns each line of `stream` into messages, then says `Closed`.
fn read_lines(stream: impl Read + Send + 'static, sender: Sender<Message>, parse: fn(String) -> Vec<Message>) {
    thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut bytes = Vec::new();
        loop {
            bytes.clear();
            match reader.read_until(b'\n', &mut bytes) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&bytes)
                        .trim_end_matches(['\n', '\r'])
                        .to_string();
                    for message in parse(line) {
                        if sender.send(message).is_err() {
                            return;
                        }
                    }
                }
            }
        }
        let _ = sender.send(Message::Closed);
    });
}

/// Runs this process's own command line again in a supervised child, which
/// loads the runtime this process located (or says why there is none), and
/// returns its exit code; a child that died is the error.
pub fn rerun_supervised(
    runtime: Result<&Located, &anyhow::Error>,
    timeout: Option<Duration>,
    verbose: bool,
    work: Work,
    watcher: &mut dyn Watcher,
) -> Result<i32> {
    let mut supervisor = Supervisor::spawn(&MgeCommand::this_process().runtime(runtime), false, false)?;
    supervisor.doing(work);
    if verbose {
        supervisor.show_engine_output();
    }
    let deadline = timeout.map(|limit| (Instant::now() + limit, limit));
    loop {
        match supervisor.next(deadline, watcher) {
            // Its stdout is ours: nothing arrives as a reply.
            Next::Reply(_) => {}
            Next::Exited(code) => return Ok(code),
            Next::Failed(Failure {
                how: How::Interrupted(signal),
                ..
            }) => return Err(Interrupted(signal).into()),
            Next::Failed(failure) => return Err(failure.into()),
        }
    }
}
