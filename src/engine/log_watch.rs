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

/// The variable the engine reads its log level from as its library loads,
/// with C++'s `std::stoi`: what that throws on (no digits, a value past a
/// 32-bit int) ends the process with SIGABRT (checked with 1.13).
const LEVEL_OVERRIDE: &str = "RUNTIME_OVERRIDE_LOG_LEVEL";

/// An error line, before the engine loads, where `RUNTIME_OVERRIDE_LOG_LEVEL`
/// holds what the engine would abort on.
pub(super) fn ensure_readable_level_override() -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    match std::env::var_os(LEVEL_OVERRIDE) {
        Some(value) if !stoi_reads(value.as_bytes()) => anyhow::bail!(
            "{LEVEL_OVERRIDE}={} is no whole number, and the engine aborts on it: \
             set it to 0 (the engine's debug log) or another int, or unset it",
            crate::text::printable(&value.to_string_lossy())
        ),
        _ => Ok(()),
    }
}

/// Whether `std::stoi` reads `text`: white space, a sign, then at least one
/// decimal digit (what follows is ignored), the number within a C `int`.
fn stoi_reads(text: &[u8]) -> bool {
    let text = match text.iter().position(|byte| !b" \t\n\x0b\x0c\r".contains(byte)) {
        Some(start) => &text[start..],
        None => return false,
    };
    let (negative, text) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let digits = text.iter().take_while(|byte| byte.is_ascii_digit()).count();
    let limit = if negative { 1 << 31 } else { (1 << 31) - 1 };
    digits > 0
        && text[..digits]
            .iter()
            .try_fold(0i64, |value, digit| {
                Some(value * 10 + i64::from(digit - b'0')).filter(|value| *value <= limit)
            })
            .is_some()
}
