//! The child's side: event lines on stderr for the parent.

use std::io::Write;
use std::time::{Duration, Instant};

use super::{error_line, is_child, Event, Phase, EVENT_MARKER};
use crate::engine;
use crate::output_files;

/// Progress is sent no more often than this, so that it costs nothing on a timed path.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// Prepares a supervised child: an exit from inside the engine becomes an event.
pub fn init() {
    if is_child() {
        engine::report_engine_exit_with(|status, thread| {
            event_line(&Event::EngineExit {
                status,
                thread: thread.to_string(),
            })
        });
        engine::end_with_parent();
        output_files::watch_staging(|path, exists| {
            send(&Event::Staging {
                path: path.to_path_buf(),
                exists,
            })
        });
        super::record::start();
        // A panic is the tool's own message, not engine output to hide.
        std::panic::set_hook(Box::new(|info| say(&info.to_string())));
    }
}

/// The tool's own words for the user on stderr. A supervised child sends them
/// as an event, so that its parent tells them from what the engine prints.
pub fn say(text: &str) {
    if is_child() {
        send(&Event::Said { text: text.to_string() });
    } else {
        eprintln!("{text}");
    }
}

/// The error the tool ends with, said as `say` does.
pub fn say_error(message: &str) {
    if is_child() {
        send(&Event::Error {
            message: message.to_string(),
        });
    } else {
        eprintln!("{}", error_line(message));
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
    let json = serde_json::to_string(event).expect("events serialize");
    format!("{EVENT_MARKER}{json}\n")
}

/// One write of the whole line: a pipe write that small is atomic, so the
/// engine's own output cannot land inside it.
fn send(event: &Event) {
    let line = event_line(event);
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
