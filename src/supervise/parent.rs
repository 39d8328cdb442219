//! The parent's side: start the child, pass its output on, watch it, and say
//! how it ended.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::LazyLock;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use regex::Regex;

use super::scratch::Scratch;
use super::stall::{StallWatch, STALL_LIMIT};
use super::{ChildSetup, Ending, Event, Phase, Whereabouts, CHILD_ENV, MAX_TEXT, STAGING_PREFIX};
use crate::engine;
use crate::interrupt::{interruption, signal_name, Interrupted};
use crate::memory::limited;
use crate::messages::to_stderr;
use crate::mge_command::MgeCommand;
use crate::mge_command::RECORD_ENV;
use crate::text::{cut, printable};

/// How often a quiet child is looked at (has it ended? is the deadline past? were we interrupted?).
const TICK: Duration = Duration::from_millis(100);

/// What a child printed on stderr is kept for a reproducer up to this many
/// bytes of its first lines and as many of its last.
const TRANSCRIPT_HALF: usize = super::KEPT_HALF;

/// A child's lines on stderr as the user would see them with `-v` (the
/// engine's, and the tool's own words), bounded: the first and the last
/// `TRANSCRIPT_HALF` bytes of lines, and how many lines between were left out.
#[derive(Default)]
struct Transcript {
    head: String,
    tail: VecDeque<String>,
    tail_bytes: usize,
    left_out: usize,
}

impl Transcript {
    fn push(&mut self, line: &str) {
        if self.tail.is_empty() && self.head.len() + line.len() < TRANSCRIPT_HALF {
            self.head.push_str(line);
            self.head.push('\n');
            return;
        }
        self.tail_bytes += line.len() + 1;
        self.tail.push_back(line.to_string());
        while self.tail_bytes > TRANSCRIPT_HALF {
            let dropped = self.tail.pop_front().expect("the bytes counted are the lines'");
            self.tail_bytes -= dropped.len() + 1;
            self.left_out += 1;
        }
    }

    fn text(&self) -> String {
        let mut text = self.head.clone();
        if self.left_out > 0 {
            text += &format!("[... {} lines left out ...]\n", self.left_out);
        }
        for line in &self.tail {
            text.push_str(line);
            text.push('\n');
        }
        text
    }
}

/// A child that reported the engine's `exit` ends at once (`_exit`); one that
/// has not after this long is stopped, so that no path can hang.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Once the child is gone, what its streams still hold is read for this long
/// at most: a process it started may keep them open.
const DRAIN: Duration = Duration::from_millis(500);

/// The longest line kept from the child's streams: the rest of a longer
/// line of the engine's is dropped, as is a line that long on the channel
/// (no event is: see `super::MAX_TEXT`); a reply that long stops the child.
const MAX_LINE: usize = 1 << 20;

/// Told what the child is doing: the presentation of a supervised run.
pub trait Watcher {
    /// The child entered a phase or made progress in it.
    fn moved(&mut self, whereabouts: &Whereabouts);
    /// Words of the child's for the user: its own, or the engine's with `-v`.
    fn text(&mut self, line: &str);
    /// A line of the error the child ends with.
    fn error(&mut self, line: &str) {
        self.text(line);
    }
}

/// Passes the child's lines on and shows no progress.
pub struct PassThrough;

impl Watcher for PassThrough {
    fn moved(&mut self, _: &Whereabouts) {}
    fn text(&mut self, line: &str) {
        to_stderr(line);
    }
}

/// Passes the child's lines on but its error, which the caller returns
/// (its `Outcome`).
pub struct ErrorReturned;

impl Watcher for ErrorReturned {
    fn moved(&mut self, _: &Whereabouts) {}
    fn text(&mut self, line: &str) {
        to_stderr(line);
    }
    fn error(&mut self, _: &str) {}
}

/// Keeps the child's words to itself (the engine's still make its last words).
pub struct Muted;

impl Watcher for Muted {
    fn moved(&mut self, _: &Whereabouts) {}
    fn text(&mut self, _: &str) {}
}

/// The head of an engine backtrace, or one of its frames:
/// `lib.so(symbol+0x4a) [0x7fb86344686a]`; or a line of the backtrace Rust
/// prints after mge's own failure under `RUST_BACKTRACE` (`stack backtrace:`,
/// `  4: mge::model::Reader<R>::take`, `at src/x.rs:1:2`, its closing note).
fn is_backtrace(line: &str) -> bool {
    static RUST_FRAME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(?:\d+: \S.*::|at \S+:\d+:\d+$)").expect("valid"));
    line == "backtrace:"
        || (line.ends_with(']') && line.contains("[0x"))
        || line == "stack backtrace:"
        || RUST_FRAME.is_match(line)
        || line.starts_with("note: Some details are omitted, run with `RUST_BACKTRACE=full`")
}

/// The message of a line of the engine's log, without the header its log
/// handlers put before it: MegEngine's `[DAY TIME FUNC@FILE:LINE][ERR] `
/// (where and when: nothing a reader of one line needs) and Lite's
/// `LITE[ERR] HH:MM:SS.UUUUUU `. Any other line is the message.
fn engine_message(line: &str) -> &str {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:\[[^\]\[]*@[^\]\[]*:\d+\](?:\[[A-Z]+\])?|LITE\[[A-Z]+\] \d\d:\d\d:\d\d\.\d+) ").expect("valid")
    });
    match HEADER.find(line) {
        Some(header) if header.end() < line.len() => &line[header.end()..],
        _ => line,
    }
}

/// A child that died or was stopped before it could answer.
#[derive(Debug)]
pub struct Failure {
    pub how: How,
    pub whereabouts: Whereabouts,
    /// Whether the child had begun to load the engine's library: a crash
    /// before is mge's own (a read of the model that ran out of memory).
    pub engine_loaded: bool,
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
    /// Exited with a code the tool does not end with (not 0 or 1, nor 2
    /// after saying its error): something else ended it (the C library, a
    /// loader that could not go on).
    Exited(i32),
    /// Stopped by us: it made no progress for this long, stuck (see
    /// `stall`) or since a thread could not start (`pthread_create`'s error code).
    Stalled { limit: Duration, thread_error: Option<i32> },
    /// Stopped by us at the deadline.
    TimedOut(Duration),
    /// Stopped by us because the user interrupted the tool with this signal.
    Interrupted(i32),
    /// Stopped by us: a line of its replies (on its stdout) was longer than
    /// `MAX_LINE`, so the answer in it cannot be read.
    Overlong,
}

/// A hint for a failure: what the engine said, or what the tool can see of
/// this process's situation, tells the likely cause.
fn hint(work: Work, how: &How, last_words: Option<&str>, engine_loaded: bool) -> Option<&'static str> {
    if let Some(hint) = work.hint(last_words) {
        return Some(hint);
    }
    if matches!(how, How::Interrupted(_) | How::TimedOut(_)) {
        return None;
    }
    // A path the C library's fixed buffers cannot hold fails the engine as a deleted folder does.
    let current_folder = std::env::current_dir();
    if current_folder.map_or(true, |folder| folder.as_os_str().len() >= libc::PATH_MAX as usize) {
        return Some(
            "the current folder was deleted or its path is too long, and the engine cannot load its library then: \
             run mge from another folder",
        );
    }
    if limited("Max address space") {
        return Some(match engine_loaded {
            true => {
                "the address space is limited (ulimit -v), and the engine may have failed to start its threads: \
                 raise the limit, or use fewer --threads and --instances"
            }
            false => "the address space is limited (ulimit -v), and mge ran out of it: raise the limit",
        });
    }
    None
}

impl Failure {
    /// The message and its hint on one line, for a report that has a line per model.
    pub fn one_line(&self) -> String {
        hint_on_the_line(&self.to_string())
    }
}

/// A message that may end in a failure's hint line, with the hint on its
/// line (as `Failure::one_line`), for a message that holds a failure.
pub fn hint_on_the_line(message: &str) -> String {
    message.replace("\nhint: ", "; hint: ")
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = &self.whereabouts;
        match &self.how {
            How::EngineExit { status, thread } => write!(
                f,
                "the engine ended the process with exit({status}) from its thread '{thread}' {place}"
            )?,
            How::Signal(signal) if crash(*signal) && !self.engine_loaded => write!(
                f,
                "mge's own process crashed ({}) before it loaded the engine",
                signal_name(*signal)
            )?,
            How::Signal(signal) => match crash(*signal) {
                true => write!(f, "the engine crashed ({}) {place}", signal_name(*signal))?,
                false => write!(
                    f,
                    "the engine's process was ended by {}{} {place}",
                    signal_name(*signal),
                    sent_by(*signal)
                )?,
            },
            How::Exited(code) => write!(f, "the engine's process ended with exit code {code} {place}")?,
            How::Stalled { limit, thread_error } => {
                write!(f, "the engine made no progress for {} {place}", seconds(*limit))?;
                match thread_error {
                    Some(code) => {
                        let error = io::Error::from_raw_os_error(*code).to_string();
                        let reason = error.split(" (os error").next().unwrap_or_default();
                        write!(f, ", since one of its threads could not start ({reason})")?
                    }
                    None => write!(f, ": its threads all wait, using no CPU time (a deadlock)")?,
                }
            }
            How::TimedOut(limit) => write!(f, "stopped after --timeout {} {place}", seconds(*limit))?,
            How::Interrupted(signal) => write!(f, "{} {place}", Interrupted(*signal))?,
            How::Overlong => write!(
                f,
                "the engine's process wrote a line of over {} MiB on its stdout, which mge does not read {place}",
                MAX_LINE >> 20
            )?,
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

/// Signals a process sends itself when its own code fails.
fn crash(signal: i32) -> bool {
    [
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGABRT,
        libc::SIGTRAP,
        libc::SIGSYS,
    ]
    .contains(&signal)
}

/// Who sends a signal that is no crash, where it is not a person.
fn sent_by(signal: i32) -> &'static str {
    match signal {
        // Past the hard limit of CPU time, the kernel sends SIGKILL.
        libc::SIGKILL if limited("Max cpu time") => " (its CPU time limit, ulimit -t; or the out-of-memory killer)",
        libc::SIGKILL => " (the kernel's out-of-memory killer, or kill -9)",
        libc::SIGXCPU => " (its CPU time limit, ulimit -t)",
        libc::SIGXFSZ => " (its file size limit, ulimit -f)",
        libc::SIGPIPE => " (a pipe it wrote to was closed)",
        _ => "",
    }
}

/// What `Supervisor::next` saw first.
pub enum Next {
    /// A line on the child's stdout (a worker's answer).
    Reply(String),
    /// The child is gone.
    Ended(Outcome),
}

/// How a supervised child ended: the one answer every parent gets, from the
/// way the process ended and what the child said of it (`Ending`).
#[derive(Debug)]
pub enum Outcome {
    /// It did its work (exit 0).
    Ran,
    /// It ended with one of the tool's own codes, as it said: a failed
    /// check (exit 1), or its error (exit 2): the engine returned an error,
    /// or mge refused; the process itself was sound.
    Ended(Ending),
    /// The engine took the process down (a signal, its `exit`, an exit code
    /// the tool never ends with), or the user's interruption stopped it.
    Crashed(Failure),
    /// Stopped at its deadline, or stuck.
    Hung(Failure),
}

impl Outcome {
    fn of(failure: Failure) -> Outcome {
        match failure.how {
            How::TimedOut(_) | How::Stalled { .. } => Outcome::Hung(failure),
            _ => Outcome::Crashed(failure),
        }
    }

    /// How the process died, where it did.
    pub fn failure(&self) -> Option<&Failure> {
        match self {
            Outcome::Crashed(failure) | Outcome::Hung(failure) => Some(failure),
            Outcome::Ran | Outcome::Ended(_) => None,
        }
    }

    /// The exit code the child ended with, where it ended with one of the tool's own.
    pub fn exit_code(&self) -> Option<u8> {
        match self {
            Outcome::Ran => Some(0),
            Outcome::Ended(ending) => Some(ending.exit_code()),
            Outcome::Crashed(_) | Outcome::Hung(_) => None,
        }
    }

    /// Whether `self` and `other` are the same failure: the same signal, the
    /// same exit status, a hang for a hang, non-finite outputs for non-finite
    /// outputs, the engine's error for the engine's error.
    pub fn fails_like(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Crashed(a), Outcome::Crashed(b)) => match (&a.how, &b.how) {
                (How::Signal(a), How::Signal(b)) | (How::Exited(a), How::Exited(b)) => a == b,
                (How::EngineExit { status: a, .. }, How::EngineExit { status: b, .. }) => a == b,
                _ => false,
            },
            (Outcome::Ended(a), Outcome::Ended(b)) => matches!(
                (a, b),
                (Ending::NonFinite { .. }, Ending::NonFinite { .. })
                    | (Ending::EngineRefused { .. }, Ending::EngineRefused { .. })
            ),
            (Outcome::Hung(_), Outcome::Hung(_)) => true,
            _ => false,
        }
    }
}

impl fmt::Display for Outcome {
    /// One line: what failed, or that it ran.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Ran => f.write_str("it ran"),
            Outcome::Ended(ending) => f.write_str(&ending.said()),
            Outcome::Crashed(failure) | Outcome::Hung(failure) => f.write_str(&failure.one_line()),
        }
    }
}

/// What a supervised child's stdout is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildStdout {
    /// This process's: the child's report is the user's.
    Ours,
    /// Lines the parent reads (`Next::Reply`): a worker's answers, a report.
    Replies,
    /// Nobody's: its report is not the user's.
    Discarded,
}

enum Message {
    Event(Event),
    Text(String),
    Reply(String),
    /// A line of the replies that was too long to read.
    Overlong,
    Closed,
}

/// A running child `mge`.
pub struct Supervisor {
    child: Child,
    /// The child's TMPDIR, removed with the supervisor (after the child ended: see `Drop`).
    scratch: Scratch,
    pub stdin: Option<ChildStdin>,
    messages: Receiver<Message>,
    /// Streams still open (the channel, stderr, and stdout when it carries replies).
    open_streams: usize,
    /// When the child was seen to have exited while its streams were still open.
    exited_at: Option<Instant>,
    whereabouts: Whereabouts,
    /// The child began to load the engine's library (in any task of its own).
    engine_loaded: bool,
    /// Watches the child while the engine loads.
    stall: StallWatch,
    /// The error of a thread that could not start, if one did not.
    thread_error: Option<i32>,
    /// When the child last told where it is, or that a thread did not start.
    last_event: Instant,
    /// The engine's `exit` the child reported, and when its grace runs out.
    engine_exit: Option<(i32, String, Instant)>,
    /// The last line the engine printed.
    last_words: Option<String>,
    /// How the child said its command ended.
    ending: Option<Ending>,
    /// What it printed on stderr since its task began.
    transcript: Transcript,
    /// Pass the engine's own lines on too (`-v`).
    show_engine_output: bool,
    work: Work,
    /// The staging files and folders the child has beside its outputs.
    staging: Vec<PathBuf>,
    /// It wrote a reply too long to read.
    overlong: bool,
}

impl Supervisor {
    /// Starts `command` as a supervised child. Its stdin is piped when
    /// `requests` is set (else inherited); `stdout` says what its stdout is.
    pub fn spawn(command: &MgeCommand, requests: bool, stdout: ChildStdout) -> Result<Supervisor> {
        let exe = std::env::current_exe().context("cannot find the mge executable to start the engine's process")?;
        let piped_if = |on: bool| if on { Stdio::piped() } else { Stdio::inherit() };
        // Whatever temporary files the child leaves (it may be killed) go with this folder;
        // from its making on, an interruption stops the child and removes them.
        let scratch = Scratch::new()?;
        let (channel, channel_end) = channel().context("cannot open a channel to the engine's process")?;
        let setup = ChildSetup {
            channel: channel_end.as_raw_fd(),
            staging_prefix: format!("{STAGING_PREFIX}{}-", scratch.token()),
            stdout_closed: stdout == ChildStdout::Ours && engine::stdout_closed(),
        };
        let mut child = Command::new(exe);
        child
            .args(command.args())
            // Set by the command only: none the user's environment holds.
            .env_remove(RECORD_ENV)
            .envs(command.env().map(|(name, value)| (name, value)))
            .env(CHILD_ENV, setup.to_env())
            .env("TMPDIR", scratch.path())
            .stdin(piped_if(requests))
            .stdout(match stdout {
                ChildStdout::Ours => Stdio::inherit(),
                ChildStdout::Replies => Stdio::piped(),
                ChildStdout::Discarded => Stdio::null(),
            })
            .stderr(Stdio::piped());
        if let Some(folder) = command.folder() {
            child.current_dir(folder);
        }
        engine::inherit(&mut child, channel_end.as_raw_fd());
        engine::end_with_this_process(&mut child);
        let mut child = child.spawn().context("cannot start the engine's process")?;
        // The child's end is the child's alone: the channel closes when the child is gone.
        drop(channel_end);
        let (sender, messages) = mpsc::channel();
        let mut readers = vec![read_lines(channel, sender.clone(), Stream::Channel)];
        let stderr = child.stderr.take().expect("piped");
        readers.push(read_lines(stderr, sender.clone(), Stream::Stderr));
        if let Some(stdout) = child.stdout.take() {
            readers.push(read_lines(stdout, sender, Stream::Replies));
        }
        let mut supervisor = Supervisor {
            stdin: child.stdin.take(),
            child,
            scratch,
            messages,
            open_streams: readers.len(),
            exited_at: None,
            whereabouts: Whereabouts::default(),
            engine_loaded: false,
            stall: StallWatch::default(),
            thread_error: None,
            last_event: Instant::now(),
            engine_exit: None,
            last_words: None,
            ending: None,
            transcript: Transcript::default(),
            show_engine_output: false,
            work: Work::default(),
            staging: Vec::new(),
            overlong: false,
        };
        if let Some(err) = readers.into_iter().find_map(Result::err) {
            supervisor.stop();
            return Err(err).context("cannot start a thread to read the engine's process");
        }
        Ok(supervisor)
    }

    /// Passes what the engine prints on to the user too (`-v`).
    pub fn show_engine_output(&mut self) {
        self.show_engine_output = true;
    }

    /// What the child does, for the hint of a failure.
    pub fn doing(&mut self, work: Work) {
        self.work = work;
    }

    /// What the child printed on stderr since its task began (see `Transcript`).
    pub fn transcript(&self) -> String {
        self.transcript.text()
    }

    /// Forgets where the child was: it starts on a new piece of work.
    pub fn new_task(&mut self) {
        self.whereabouts = Whereabouts::default();
        self.last_event = Instant::now();
        self.last_words = None;
        self.ending = None;
        self.transcript = Transcript::default();
    }

    /// Passes the child's output to `watcher` until it replies, ends, or
    /// `deadline` passes (then it is killed).
    pub fn next(&mut self, deadline: Option<(Instant, Duration)>, watcher: &mut dyn Watcher) -> Next {
        loop {
            if let Some(how) = self.reason_to_stop(deadline) {
                self.stop();
                self.drain(watcher);
                return Next::Ended(Outcome::of(self.failure(how)));
            }
            // Ended, but a process it started keeps its streams open: what they held is read.
            if self.exited_at.is_some_and(|at| at.elapsed() >= DRAIN) {
                return self.ended();
            }
            let wakeups = [deadline.map(|(at, _)| at), self.engine_exit.as_ref().map(|exit| exit.2)];
            let wait = wakeups
                .into_iter()
                .flatten()
                .fold(TICK, |wait, at| wait.min(at.saturating_duration_since(Instant::now())));
            match self.messages.recv_timeout(wait) {
                Ok(Message::Reply(line)) => return Next::Reply(line),
                Ok(Message::Closed) => {
                    self.open_streams -= 1;
                    if self.open_streams == 0 {
                        return self.ended();
                    }
                }
                Ok(message) => self.take(message, watcher),
                Err(RecvTimeoutError::Timeout) => {
                    if self.exited_at.is_none() && matches!(self.child.try_wait(), Ok(Some(_))) {
                        self.exited_at = Some(Instant::now());
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return self.ended(),
            }
        }
    }

    /// Why the child must be stopped now, if it must: the user interrupted
    /// the tool, the deadline passed, the engine's exit did not end it, or it is stuck.
    fn reason_to_stop(&mut self, deadline: Option<(Instant, Duration)>) -> Option<How> {
        if let Some(Interrupted(signal)) = interruption() {
            return Some(How::Interrupted(signal));
        }
        if let Some((at, limit)) = deadline {
            if Instant::now() >= at {
                return Some(How::TimedOut(limit));
            }
        }
        if self.overlong {
            return Some(How::Overlong);
        }
        if let Some((status, thread, grace)) = self.engine_exit.clone() {
            if Instant::now() >= grace {
                return Some(How::EngineExit { status, thread });
            }
        }
        if self.exited_at.is_some() {
            return None;
        }
        let stalled = Some(How::Stalled {
            limit: STALL_LIMIT,
            thread_error: self.thread_error,
        });
        // An engine without one of its threads may wait for it forever, spinning.
        if self.thread_error.is_some() && self.last_event.elapsed() >= STALL_LIMIT {
            return stalled;
        }
        let loading = matches!(self.whereabouts.phase, Some(Phase::Runtime | Phase::Load));
        match loading && self.stall.stalled(self.child.id()) {
            true => stalled,
            false => None,
        }
    }

    /// An event or a line of the engine's.
    fn take(&mut self, message: Message, watcher: &mut dyn Watcher) {
        let event = match message {
            Message::Event(event) => event,
            Message::Text(line) => {
                self.remember(&line);
                // The engine prints a model's names as they are: a line of its
                // own could carry escape sequences or a bell.
                if self.show_engine_output {
                    watcher.text(&printable(&line));
                }
                return;
            }
            Message::Overlong => {
                self.overlong = true;
                return;
            }
            Message::Reply(_) | Message::Closed => return,
        };
        self.last_event = Instant::now();
        match event {
            Event::Phase { phase } => {
                self.engine_loaded |= phase == Phase::Runtime;
                self.whereabouts.enter(phase);
                self.stall = StallWatch::default();
                watcher.moved(&self.whereabouts);
            }
            Event::Progress { done } => {
                self.whereabouts.done = done;
                watcher.moved(&self.whereabouts);
            }
            Event::EngineExit { status, thread } => {
                self.engine_exit = Some((status, thread, Instant::now() + EXIT_GRACE));
            }
            Event::ThreadNotStarted { code } => self.thread_error = Some(code),
            Event::Said { text } => text.lines().for_each(|line| {
                self.transcript.push(line);
                watcher.text(line)
            }),
            Event::Ended { ending } => {
                ending.words().lines().for_each(|line| {
                    self.transcript.push(line);
                    match ending.is_error() {
                        true => watcher.error(line),
                        false => watcher.text(line),
                    }
                });
                self.ending = Some(ending);
            }
            Event::Staging { path, exists: true } if self.stages(&path) => self.staging.push(path),
            Event::Staging { path, exists: false } => self.staging.retain(|staged| *staged != path),
            Event::Staging { .. } => {}
        }
    }

    /// Is `path` named as the child's staging files are (with the prefix drawn for it alone)?
    fn stages(&self, path: &Path) -> bool {
        let prefix = format!("{STAGING_PREFIX}{}-", self.scratch.token());
        path.file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with(&prefix))
    }

    /// Waits for the child to end (it has closed its output or is about to).
    fn ended(&mut self) -> Next {
        match self.child.wait() {
            Ok(status) => self.judge(status),
            Err(_) => Next::Ended(Outcome::of(self.failure(How::Signal(libc::SIGKILL)))),
        }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Takes what the streams of a child that is gone still hold (its last
    /// words among it), for `DRAIN` at most.
    fn drain(&mut self, watcher: &mut dyn Watcher) {
        let until = Instant::now() + DRAIN;
        while self.open_streams > 0 {
            match self
                .messages
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Ok(Message::Closed) => self.open_streams -= 1,
                Ok(message) => self.take(message, watcher),
                Err(_) => break,
            }
        }
    }

    /// How the child ended: a code of the tool's own counts only with the
    /// ending the child said (a process that exits 2 unheard is no refusal).
    fn judge(&mut self, status: ExitStatus) -> Next {
        use std::os::unix::process::ExitStatusExt;
        let how = if let Some(Interrupted(signal)) = interruption() {
            How::Interrupted(signal)
        } else if let Some((status, thread, _)) = self.engine_exit.take() {
            How::EngineExit { status, thread }
        } else {
            match (status.signal(), status.code()) {
                (Some(signal), _) => How::Signal(signal),
                (None, Some(0)) => return Next::Ended(Outcome::Ran),
                (None, code) => {
                    let code = code.unwrap_or(2);
                    match self.ending.take() {
                        Some(ending) if i32::from(ending.exit_code()) == code => {
                            return Next::Ended(Outcome::Ended(ending))
                        }
                        _ => How::Exited(code),
                    }
                }
            }
        };
        Next::Ended(Outcome::of(self.failure(how)))
    }

    fn failure(&mut self, how: How) -> Failure {
        Failure {
            hint: hint(self.work, &how, self.last_words.as_deref(), self.engine_loaded),
            how,
            whereabouts: self.whereabouts,
            engine_loaded: self.engine_loaded,
            last_words: self.last_words.clone(),
        }
    }

    fn remember(&mut self, line: &str) {
        self.transcript.push(line);
        let line = line.trim();
        // A backtrace says where, not what: the line before it does.
        if !line.is_empty() && !is_backtrace(line) {
            self.last_words = Some(cut(engine_message(line), MAX_TEXT).into_owned());
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
        // What a child that was stopped or died left half-written: only
        // paths named with its own prefix (see `stages`).
        for path in &self.staging {
            let _ = std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path));
        }
    }
}

/// A pipe whose write end the child inherits (see `engine::inherit`): the
/// read end, and the write end under a number above stdio's.
fn channel() -> io::Result<(io::PipeReader, OwnedFd)> {
    let (reader, writer) = io::pipe()?;
    let writer = OwnedFd::from(writer);
    // A process started with stdio closed gets a pipe among fds 0 to 2: the
    // copy takes the lowest free number from 3.
    match writer.as_raw_fd() > 2 {
        true => Ok((reader, writer)),
        false => Ok((reader, writer.try_clone()?)),
    }
}

/// A stream of the child's, and what its lines are.
#[derive(Clone, Copy)]
enum Stream {
    /// Events; anything else there is dropped (the engine cannot write there).
    Channel,
    /// The engine's text, and a panic's.
    Stderr,
    /// A worker's answers.
    Replies,
}

impl Stream {
    /// The message a line of the stream makes, if any; `whole` is false
    /// for the first `MAX_LINE` bytes of a longer line.
    fn message(self, line: String, whole: bool) -> Option<Message> {
        match (self, whole) {
            // The start of an endless line is the engine's text still.
            (Stream::Stderr, _) => Some(Message::Text(line)),
            (Stream::Channel, true) => serde_json::from_str(&line).ok().map(Message::Event),
            // No event is that long (see `super::MAX_TEXT`): garbage, which names nothing.
            (Stream::Channel, false) => None,
            (Stream::Replies, true) => Some(Message::Reply(line)),
            // An answer was lost: waiting for it would be waiting forever.
            (Stream::Replies, false) => Some(Message::Overlong),
        }
    }
}

/// A thread that turns each line of `stream` into a message, then says `Closed`.
fn read_lines(stream: impl Read + Send + 'static, sender: Sender<Message>, kind: Stream) -> io::Result<()> {
    let reading = move || {
        let mut reader = BufReader::new(stream);
        let mut bytes = Vec::new();
        while let Ok(Some(whole)) = next_line(&mut reader, &mut bytes) {
            let line = String::from_utf8_lossy(&bytes).trim_end_matches('\r').to_string();
            if let Some(message) = kind.message(line, whole) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        }
        let _ = sender.send(Message::Closed);
    };
    thread::Builder::new().spawn(reading).map(drop)
}

/// Reads the next line of `reader` into `line` (without its newline), up
/// to `MAX_LINE` bytes of it, the rest skipped. `Some(whole)`, or `None` at the end.
fn next_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Option<bool>> {
    line.clear();
    let (mut read_any, mut whole) = (false, true);
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if buffer.is_empty() {
            return Ok(read_any.then_some(whole));
        }
        read_any = true;
        let end = buffer.iter().position(|&byte| byte == b'\n');
        let piece = &buffer[..end.unwrap_or(buffer.len())];
        let room = MAX_LINE - line.len();
        line.extend_from_slice(&piece[..piece.len().min(room)]);
        whole &= piece.len() <= room;
        let used = end.map_or(buffer.len(), |end| end + 1);
        reader.consume(used);
        if end.is_some() {
            return Ok(Some(whole));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply longer than the parent reads stops the child (a message, not
    /// a drop that leaves the parent waiting for the answer); no event is
    /// that long, so such a line on the channel is garbage; the engine's
    /// longest lines are text still.
    #[test]
    fn a_reply_too_long_to_read_is_said_not_dropped() {
        let long = "x".repeat(MAX_LINE + 10);
        let mut reader = std::io::Cursor::new(format!("{long}\nshort\n"));
        let mut line = Vec::new();
        assert_eq!(next_line(&mut reader, &mut line).unwrap(), Some(false));
        assert_eq!(line.len(), MAX_LINE);
        assert_eq!(next_line(&mut reader, &mut line).unwrap(), Some(true));
        assert_eq!(line, b"short");
        let cut = || "x".repeat(MAX_LINE);
        assert!(Stream::Channel.message(cut(), false).is_none());
        assert!(matches!(Stream::Replies.message(cut(), false), Some(Message::Overlong)));
        assert!(matches!(Stream::Stderr.message(cut(), false), Some(Message::Text(_))));
        assert!(Stream::Channel.message("not an event".into(), true).is_none());
    }

    /// The engine's last words are its message, not its log's header: tune's
    /// table gave a crashed candidate's reason with the time and the place.
    #[test]
    fn the_engines_last_words_are_its_message() {
        for (line, message) in [
            (
                "[23 08:29:00 apply@framework.cpp:580][ERR] fault: the pass failed",
                "fault: the pass failed",
            ),
            ("[08:29:00 run@opr.cpp:12] load done", "load done"),
            (
                "LITE[ERR] 12:34:56.123456 Lite exception: fault",
                "Lite exception: fault",
            ),
            ("bad err=45 in Xbyak::Error", "bad err=45 in Xbyak::Error"),
            ("[not a header] text", "[not a header] text"),
            ("LITE[ERR] 12:34:56.123456 ", "LITE[ERR] 12:34:56.123456 "),
        ] {
            assert_eq!(engine_message(line), message, "{line}");
        }
    }

    /// A crash before the child loaded the engine's library is mge's own (a
    /// read of the model that ran out of memory), said with what it said
    /// before its backtrace; one after is the engine's, even in a later
    /// task of a worker whose engine is loaded.
    #[test]
    fn a_crash_before_the_engine_loaded_is_mges_own() {
        let failure = |engine_loaded: bool| Failure {
            how: How::Signal(libc::SIGABRT),
            whereabouts: Whereabouts::default(),
            engine_loaded,
            last_words: Some("memory allocation of 1073741828 bytes failed".into()),
            hint: None,
        };
        assert_eq!(
            failure(false).to_string(),
            "mge's own process crashed (SIGABRT) before it loaded the engine; it said last: 'memory allocation of 1073741828 bytes failed'"
        );
        assert!(failure(true)
            .to_string()
            .starts_with("the engine crashed (SIGABRT) before the engine loaded the model"));
        for line in [
            "stack backtrace:",
            "4: mge::model::Reader<R>::take",
            "at /rustc/abc/library/alloc/src/raw_vec.rs:12:5",
            "5: <alloc::vec::Vec<T> as alloc::vec::spec_from_iter::SpecFromIter<T,I>>::from_iter",
            "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.",
            "backtrace:",
        ] {
            assert!(is_backtrace(line), "{line}");
        }
        for line in [
            "memory allocation of 1073741828 bytes failed",
            "at least 2 runs",
            "3: the third",
        ] {
            assert!(!is_backtrace(line), "{line}");
        }
    }
}
