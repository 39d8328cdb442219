//! An exit that comes from inside the engine becomes a report instead of a hang.
//!
//! MegEngine 1.13's bundled oneDNN calls `exit(1)` from an engine worker thread
//! on some AVX-512 CPUs. The exit handler the engine registered when it loaded
//! its first comp node (`CompNode::finalize`) then waits for that same worker:
//! the process never ends. Exit handlers run in reverse order of registration,
//! so a handler registered after the engine's runs first: it reports the exit
//! and leaves with `_exit`, before the engine's handler can wait forever.

use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

extern "C" {
    // glibc: like atexit, and the handler receives the exit status.
    fn on_exit(handler: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

/// Set once the tool itself is ending the process: its own exit is not the engine's.
static EXIT_EXPECTED: AtomicBool = AtomicBool::new(false);

/// Turns (status, name of the exiting thread) into the bytes to write on stderr.
type Reporter = fn(i32, &str) -> String;

static REPORTER: OnceLock<Reporter> = OnceLock::new();

/// Chooses how an engine exit is reported; the first choice stays.
pub fn report_engine_exit_with(reporter: Reporter) {
    let _ = REPORTER.set(reporter);
}

/// From here on an exit is the tool's own (call it just before returning from main).
pub fn expect_exit() {
    EXIT_EXPECTED.store(true, Ordering::SeqCst);
}

/// Registers the handler (again). Called after every point where the engine
/// may have registered a handler of its own, so that ours stays the last.
pub(super) fn arm() {
    // SAFETY: registers a plain function; a failed registration only loses the guard.
    unsafe { on_exit(engine_exit, std::ptr::null_mut()) };
}

extern "C" fn engine_exit(status: c_int, _: *mut c_void) {
    if EXIT_EXPECTED.load(Ordering::SeqCst) {
        return;
    }
    let thread = current_thread_name();
    let line = match REPORTER.get() {
        Some(report) => report(status, &thread),
        None => format!("mge: error: the engine ended the process with exit({status}) from its thread '{thread}'\n"),
    };
    // SAFETY: write(2) of a valid buffer, then `_exit`, which runs no further
    // handlers: nothing of the engine's can hang after this.
    unsafe {
        libc::write(2, line.as_ptr() as *const c_void, line.len());
        libc::_exit(2);
    }
}

fn current_thread_name() -> String {
    let mut name = [0 as libc::c_char; 32];
    // SAFETY: the buffer is larger than the 16 bytes Linux thread names take.
    let code = unsafe { libc::pthread_getname_np(libc::pthread_self(), name.as_mut_ptr(), name.len()) };
    if code != 0 {
        return String::from("?");
    }
    // SAFETY: pthread_getname_np wrote a NUL-terminated string into `name`.
    unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// A supervised child ends when its parent does: no engine left running unwatched.
pub fn end_with_parent() {
    // SAFETY: prctl with an integer argument; failure only loses this safeguard.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
}
