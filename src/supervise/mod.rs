//! Engine work runs in a child process that the tool watches, because the
//! engine is not trusted to return: it can end the process from one of its
//! threads (and then hang in its own exit handler), crash, or never finish.
//!
//! The child is `mge` itself, started with the same command line and
//! `MGE_SUPERVISED` set. It does the work as usual, with stdin and stdout the
//! parent's, and tells the parent where it is (loading, warm-up, iteration N)
//! and what it has to say to the user (notes, its error) with event lines on a
//! pipe of their own, the channel, which it inherits under a descriptor number
//! the engine is never told: nothing the engine prints (var names included)
//! can pass for an event. Its stderr is the engine's alone: the parent shows
//! those lines with `-v` only and keeps the last as the engine's last words.
//! The parent draws the progress, enforces `--timeout`, and turns a child that
//! died, or ended with a code it has no words for, into one line saying how,
//! where, and what the engine said last.

pub mod child;
pub mod child_run;
pub mod parent;
pub mod repro_record;
mod scratch;
mod stall;

pub use scratch::Scratch;

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::exit::NonFinite;
use crate::text;

use crate::text::counted;

/// Set in the environment of a supervised child, as `ChildSetup` writes it.
const CHILD_ENV: &str = "MGE_SUPERVISED";

/// What a supervised child is told by its parent.
#[derive(Debug, PartialEq)]
struct ChildSetup {
    /// The descriptor of the channel's write end.
    channel: i32,
    /// How the names of its staging files and folders begin: the parent
    /// removes those a dead child left, and nothing else.
    staging_prefix: String,
    /// The stdout it inherits is the parent's, which was closed when the
    /// parent started (see `engine::stdout_closed`).
    stdout_closed: bool,
}

/// How `ChildSetup` says that the stdout a child inherits was closed.
const STDOUT_CLOSED: &str = "stdout-closed";

impl ChildSetup {
    fn to_env(&self) -> String {
        let closed = if self.stdout_closed { STDOUT_CLOSED } else { "" };
        format!("{}:{}:{closed}", self.channel, self.staging_prefix)
    }

    /// `None` for anything the parent would not have written.
    fn from_env(value: &str) -> Option<ChildSetup> {
        let mut fields = value.split(':');
        let (channel, prefix, closed) = (fields.next()?, fields.next()?, fields.next()?);
        let token = prefix.strip_prefix(STAGING_PREFIX)?.strip_suffix('-')?;
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_alphanumeric()) || fields.next().is_some() {
            return None;
        }
        Some(ChildSetup {
            channel: channel.parse().ok()?,
            staging_prefix: prefix.to_string(),
            stdout_closed: match closed {
                STDOUT_CLOSED => true,
                "" => false,
                _ => return None,
            },
        })
    }
}

/// How the names of the tool's staging files begin (`output_files`).
const STAGING_PREFIX: &str = ".mge-";

/// What the child tells its parent.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A phase of the work began.
    Phase { phase: Phase },
    /// Runs finished so far in the current warm-up or timed phase (sent at most a few times a second).
    Progress { done: u64 },
    /// The engine called `exit(status)` (reported from the trapped call, see `engine::report_to`).
    EngineExit { status: i32, thread: String },
    /// A thread could not start: `pthread_create` failed with this error code.
    ThreadNotStarted { code: i32 },
    /// The tool's own words for the user (a note, a warning), shown as they are.
    Said { text: String },
    /// How the child's command ended, where it ended with one of the tool's
    /// own codes (1, 2): its last word, said once.
    Ended { ending: Ending },
    /// A staging file or folder beside an output now `exists`, or no longer
    /// does: the parent removes what a child that died left.
    Staging {
        #[serde(with = "path_bytes")]
        path: PathBuf,
        exists: bool,
    },
}

/// How a child's command ended with the tool's own exit code, as the child
/// says it (`child::end`): its parent learns what happened here, never from
/// the child's words. Names and the engine's words in it are printable
/// (`text::printable`) and, on the channel, within `MAX_TEXT`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum Ending {
    /// Outputs held NaN or infinities under `--check-finite` (exit 1): what was found.
    NonFinite { found: String },
    /// Another of its checks failed (exit 1).
    CheckFailed { message: String },
    /// The engine returned an error (exit 2): the tool's message, which holds the engine's.
    EngineRefused { message: String },
    /// mge refused the work (exit 2).
    Refused { message: String },
}

impl Ending {
    pub fn exit_code(&self) -> u8 {
        match self {
            Ending::NonFinite { .. } | Ending::CheckFailed { .. } => 1,
            Ending::EngineRefused { .. } | Ending::Refused { .. } => 2,
        }
    }

    /// What failed, in a line (a name's or the engine's line breaks kept).
    pub fn said(&self) -> String {
        match self {
            Ending::NonFinite { found } => NonFinite(found.clone()).to_string(),
            Ending::CheckFailed { message } | Ending::EngineRefused { message } | Ending::Refused { message } => {
                message.clone()
            }
        }
    }

    /// Whether it ended with an error (exit 2), not a failed check.
    pub fn is_error(&self) -> bool {
        self.exit_code() == 2
    }

    /// What failed, as its line on stderr says it (`check failed: ...`, `error: ...`).
    pub fn line(&self) -> String {
        match self.is_error() {
            true => format!("error: {}", self.said()),
            false => format!("check failed: {}", self.said()),
        }
    }

    /// How it reads on stderr, whichever process says it.
    pub fn words(&self) -> String {
        format!("mge: {}", self.line())
    }
}

/// A path as its bytes, which need not be UTF-8.
mod path_bytes {
    use std::ffi::OsString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::{Path, PathBuf};

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(path.as_os_str().as_bytes())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<PathBuf, D::Error> {
        Vec::<u8>::deserialize(deserializer).map(|bytes| OsString::from_vec(bytes).into())
    }
}

/// What the engine prints is kept for a reproducer up to this many bytes of
/// the first it printed and as many of the last (its stderr by the parent,
/// its stdout by the child's record).
pub const KEPT_HALF: usize = 256 << 10;

/// The longest text (a message, a name) an event or a worker's reply
/// carries: a longer one keeps its ends (`text::cut`), so that every line
/// a child sends its parent stays far within what the parent reads of one.
pub const MAX_TEXT: usize = 16 << 10;

/// `value` as one line of JSON for the parent (an event, a worker's reply),
/// every string in it within `MAX_TEXT`.
pub fn json_line(value: &impl Serialize) -> serde_json::Result<String> {
    let mut value = serde_json::to_value(value)?;
    cut_strings(&mut value);
    Ok(format!("{value}\n"))
}

fn cut_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(cut) = text::cut(text, MAX_TEXT) {
                *text = cut;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(cut_strings),
        Value::Object(fields) => fields.values_mut().for_each(cut_strings),
        _ => {}
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum Phase {
    /// The engine's library loads.
    Runtime,
    /// The engine loads a model (the layout transform's profiling happens here).
    Load,
    /// The engine profiles algorithms for fast-run (in a first run of a copy of the network).
    Profiling,
    /// Embedded testcase number `index` (from 0) runs.
    Testcase { index: usize },
    /// `runs` untimed runs.
    Warmup { runs: u64 },
    /// `runs` timed runs, or with `--duration` as many more as fill it.
    Iterations {
        runs: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
}

/// Where the child was: its last phase and how far it got in it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Whereabouts {
    pub testcase: Option<usize>,
    pub phase: Option<Phase>,
    pub done: u64,
}

impl Whereabouts {
    pub fn enter(&mut self, phase: Phase) {
        match phase {
            Phase::Testcase { index } => {
                self.testcase = Some(index);
                self.phase = None;
            }
            _ => self.phase = Some(phase),
        }
        self.done = 0;
    }
}

impl fmt::Display for Whereabouts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Progress comes a few times a second: at least `done` runs are over.
        let done = self.done;
        match (self.phase, self.testcase) {
            (None, None) => return write!(f, "before the engine loaded the model"),
            (None, Some(index)) => return write!(f, "in testcase #{index}"),
            (Some(Phase::Runtime), _) => write!(f, "while the engine's library loaded")?,
            (Some(Phase::Load), _) => write!(f, "while the engine loaded the model")?,
            (Some(Phase::Profiling), _) => write!(f, "while the engine profiled algorithms (fast-run)")?,
            (Some(Phase::Warmup { runs }), _) => write!(f, "during the warm-up ({})", runs_done(done, runs))?,
            (
                Some(Phase::Iterations {
                    runs,
                    duration_ms: None,
                }),
                _,
            ) => write!(f, "during the timed runs ({})", runs_done(done, runs))?,
            (
                Some(Phase::Iterations {
                    duration_ms: Some(ms), ..
                }),
                _,
            ) => write!(
                f,
                "during the timed runs of --duration {}s ({})",
                ms as f64 / 1e3,
                match done {
                    0 => "no run done yet".to_string(),
                    _ => format!("at least {} done", counted(done as usize, "run")),
                }
            )?,
            (Some(Phase::Testcase { .. }), _) => unreachable!("`enter` keeps the testcase apart from the phase"),
        }
        match self.testcase {
            Some(index) => write!(f, " of testcase #{index}"),
            None => Ok(()),
        }
    }
}

fn runs_done(done: u64, runs: u64) -> String {
    let plural = if runs == 1 { "" } else { "s" };
    match done {
        0 => format!("{runs} run{plural}"),
        _ => format!("at least {done} of {runs} run{plural} done"),
    }
}

/// Is this process a supervised child (with its channel to the parent)?
pub fn is_child() -> bool {
    child::channel_open()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_takes_only_the_setup_its_parent_writes() {
        for stdout_closed in [false, true] {
            let setup = ChildSetup {
                channel: 5,
                staging_prefix: ".mge-a1B2c3-".into(),
                stdout_closed,
            };
            assert_eq!(ChildSetup::from_env(&setup.to_env()), Some(setup));
        }
        for value in [
            "1",
            "",
            "5",
            "5:.mge-a1-",
            "x:.mge-a1-:",
            "5:.mge--:",
            "5:.mge-a/b-:",
            "5:/tmp/.mge-a-:",
            "5:.mge-a:",
            "5:.mge-a1-:closed",
            "5:.mge-a1-:stdout-closed:",
        ] {
            assert_eq!(ChildSetup::from_env(value), None, "{value:?}");
        }
    }

    /// Every event a child sends fits the line its parent reads, whatever
    /// the names in it, and a staging path that is not UTF-8 travels whole.
    #[test]
    fn events_are_bounded_lines_and_paths_any_bytes() {
        use std::os::unix::ffi::OsStringExt;
        let name = "n".repeat(3 << 20);
        let error = Event::Ended {
            ending: Ending::Refused {
                message: format!("unknown input 'nope': the model's inputs are '{name}'; give one of them"),
            },
        };
        let line = json_line(&error).unwrap();
        assert!(line.len() < MAX_TEXT + 100 && line.ends_with('\n'), "{}", line.len());
        let Ok(Event::Ended {
            ending: Ending::Refused { message },
        }) = serde_json::from_str(&line)
        else {
            panic!("{line}")
        };
        assert!(message.starts_with("unknown input 'nope'") && message.ends_with("give one of them"));
        let path = PathBuf::from(std::ffi::OsString::from_vec(b"/tmp/d\xfe/.mge-a1-o".to_vec()));
        let staging = Event::Staging { path, exists: true };
        let line = json_line(&staging).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), staging);
    }
}
