//! The user's interruptions (SIGINT, SIGTERM, SIGHUP): caught once asked for,
//! noted, and turned into the error the tool exits with (128 + the signal);
//! and the names of signals, for the lines that say how a process ended.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

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

/// A signal's name (`SIGSEGV`), or its number where it has none here.
pub fn signal_name(signal: i32) -> String {
    const NAMES: [(i32, &str); 31] = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGSTKFLT, "SIGSTKFLT"),
        (libc::SIGCHLD, "SIGCHLD"),
        (libc::SIGCONT, "SIGCONT"),
        (libc::SIGSTOP, "SIGSTOP"),
        (libc::SIGTSTP, "SIGTSTP"),
        (libc::SIGTTIN, "SIGTTIN"),
        (libc::SIGTTOU, "SIGTTOU"),
        (libc::SIGURG, "SIGURG"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGVTALRM, "SIGVTALRM"),
        (libc::SIGPROF, "SIGPROF"),
        (libc::SIGWINCH, "SIGWINCH"),
        (libc::SIGIO, "SIGIO"),
        (libc::SIGPWR, "SIGPWR"),
        (libc::SIGSYS, "SIGSYS"),
    ];
    match NAMES.iter().find(|(number, _)| *number == signal) {
        Some((_, name)) => name.to_string(),
        None => format!("signal {signal}"),
    }
}
