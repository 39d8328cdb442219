//! The child's side: event lines on the channel for the parent.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::{is_child, ChildSetup, Ending, Event, Phase, CHILD_ENV};
use crate::engine;
use crate::messages::{self, say, to_stderr};
use crate::output_files;

/// Progress is sent no more often than this, so that it costs nothing on a timed path.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// The channel's write end, in a supervised child.
static CHANNEL: OnceLock<Mutex<File>> = OnceLock::new();

/// Prepares a supervised child (one started with a channel): an exit from
/// inside the engine becomes an event, the child ends with its parent, and
/// its staging files are announced.
pub fn init() {
    let Some(setup) = std::env::var(CHILD_ENV)
        .ok()
        .and_then(|value| ChildSetup::from_env(&value))
    else {
        return;
    };
    let Some(channel) = engine::take_inherited_pipe(setup.channel) else {
        return;
    };
    if setup.stdout_closed {
        engine::stdout_closed_in_parent();
    }
    // Each on a line of its own, even should it land amid a long event another thread writes.
    engine::report_to(engine::Reports {
        fd: channel.as_raw_fd(),
        exit: |status, thread| {
            let thread = thread.to_string();
            format!("\n{}", event_line(&Event::EngineExit { status, thread }))
        },
        thread_not_started: |code| format!("\n{}", event_line(&Event::ThreadNotStarted { code })),
    });
    let descriptor = format!("/proc/self/fd/{}", channel.as_raw_fd());
    let _ = output_files::reserve("mge's channel to its parent", Path::new(&descriptor));
    let _ = CHANNEL.set(Mutex::new(channel));
    messages::to_parent(|text| send(&Event::Said { text: text.to_string() }));
    engine::stderr_read_by_parent();
    output_files::watch_staging(setup.staging_prefix, |path, exists| {
        send(&Event::Staging {
            path: path.to_path_buf(),
            exists,
        })
    });
    super::repro_record::start();
    // A panic is the tool's own message, not engine output to hide.
    std::panic::set_hook(Box::new(|info| say(&info.to_string())));
}

pub(super) fn channel_open() -> bool {
    CHANNEL.get().is_some()
}

/// How this process's command ended, where it ends with one of the tool's
/// own codes: a supervised child tells its parent, once; any other process
/// says it on stderr.
pub fn end(ending: &Ending) {
    match is_child() {
        true => send(&Event::Ended { ending: ending.clone() }),
        false => to_stderr(&ending.words()),
    }
}

/// Tells the parent that `phase` began.
pub fn announce(phase: Phase) {
    if is_child() {
        send(&Event::Phase { phase });
    }
}

/// Counts the runs of a warm-up or timed phase for the parent's progress bar.
pub struct RunCounter {
    supervised: bool,
    done: u64,
    last_sent: Instant,
}

impl RunCounter {
    /// Announces the phase and starts counting.
    pub fn start(phase: Phase) -> RunCounter {
        announce(phase);
        RunCounter {
            supervised: is_child(),
            done: 0,
            last_sent: Instant::now(),
        }
    }

    pub fn add_one(&mut self) {
        self.done += 1;
        if self.supervised && self.last_sent.elapsed() >= PROGRESS_INTERVAL {
            send(&Event::Progress { done: self.done });
            self.last_sent = Instant::now();
        }
    }
}

fn event_line(event: &Event) -> String {
    super::json_line(event).expect("events serialize")
}

/// One whole line at a time, whichever thread sends. A parent that is gone
/// loses it (it ends this process anyway: see `engine::end_with_this_process`).
fn send(event: &Event) {
    if let Some(channel) = CHANNEL.get() {
        let line = event_line(event);
        let mut channel = channel.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = channel.write_all(line.as_bytes());
    }
}
