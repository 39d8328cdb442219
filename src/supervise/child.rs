//! The child's side: event lines on stderr for the parent.

use std::io::Write;
use std::time::{Duration, Instant};

use super::{is_child, Event, Phase, EVENT_MARKER};
use crate::engine;

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
        // A panic is ours, not the engine's: its exit is not to be reported as the engine's.
        let report_panic = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            engine::expect_exit();
            report_panic(info);
        }));
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
