//! How the engine chose each operator's algorithm, counted from its debug log:
//! the engine has no API that tells, but its algorithm chooser logs each
//! choice (`setup_algo`), each operator the fast-run cache had nothing for
//! (`construct_execution_policy`: "No algo get from cache") and each
//! profiling step (`profile`). A log handler of ours counts those by the
//! function that logs them and passes on what the user would have seen.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::ffi::{EngineLog, LogHandler, LITE_LOG_DEBUG, LITE_LOG_ERROR, LITE_LOG_INFO};

/// The engine's handler, which prints; ours passes messages on to it.
static PREVIOUS: OnceLock<LogHandler> = OnceLock::new();
/// Messages at this level and above go on to the engine's handler.
static SHOWN_FROM: AtomicI32 = AtomicI32::new(LITE_LOG_ERROR);
static CHOSEN: AtomicUsize = AtomicUsize::new(0);
static NOT_IN_CACHE: AtomicUsize = AtomicUsize::new(0);
static PROFILED: AtomicUsize = AtomicUsize::new(0);

/// What the engine's algorithm chooser did since the watch began.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AlgoChoices {
    /// Operators whose algorithm was set.
    pub chosen: usize,
    /// Of those, the ones the fast-run cache had no algorithm for.
    pub not_in_cache: usize,
    /// Profiling steps (an algorithm tried or skipped): none means nothing was profiled.
    pub profiled: usize,
}

pub(super) fn start(log: &EngineLog, verbose: bool) -> Option<()> {
    SHOWN_FROM.store(if verbose { LITE_LOG_INFO } else { LITE_LOG_ERROR }, Ordering::SeqCst);
    PREVIOUS.get_or_init(|| {
        // SAFETY: the engine's own setter, given a handler that lives as long as the process.
        unsafe { (log.set_handler)(count) }
    });
    // SAFETY: plain call; debug messages now reach `count`, which drops what it does not show.
    unsafe { (log.set_level)(LITE_LOG_DEBUG) };
    Some(())
}

pub(super) fn choices() -> AlgoChoices {
    AlgoChoices {
        chosen: CHOSEN.load(Ordering::SeqCst),
        not_in_cache: NOT_IN_CACHE.load(Ordering::SeqCst),
        profiled: PROFILED.load(Ordering::SeqCst),
    }
}

/// The log handler: counts, then passes on what the user's log level shows.
unsafe extern "C" fn count(
    level: c_int,
    file: *const c_char,
    func: *const c_char,
    line: c_int,
    fmt: *const c_char,
    ap: *mut c_void,
) {
    if level == LITE_LOG_DEBUG && !func.is_null() {
        // SAFETY: the engine passes its `__func__`, a NUL-terminated string.
        let counter = match unsafe { CStr::from_ptr(func) }.to_bytes() {
            b"setup_algo" => Some(&CHOSEN),
            b"construct_execution_policy" => Some(&NOT_IN_CACHE),
            b"profile" => Some(&PROFILED),
            _ => None,
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    }
    if level >= SHOWN_FROM.load(Ordering::SeqCst) {
        if let Some(previous) = PREVIOUS.get() {
            // SAFETY: the engine's handler, with the arguments the engine gave us, untouched.
            unsafe { previous(level, file, func, line, fmt, ap) };
        }
    }
}
