//! An `exit` from inside the engine ends the process at once, with a report,
//! instead of a hang.
//!
//! MegEngine 1.13's bundled oneDNN calls `exit(1)` from an engine worker
//! thread on some AVX-512 CPUs. The exit handler the engine registered
//! (`CompNode::finalize`) then waits for that same thread: the process never
//! ends. When the engine registers that handler depends on its thread count,
//! so no handler of ours can be sure to run first. Instead the binary defines
//! `exit` and `quick_exit` itself and exports them (see `build.rs`): the
//! dynamic linker binds the engine library's calls to ours, whichever thread
//! makes them, before any handler runs. Once the engine is loaded, such a
//! call is the engine's: it is reported and the process ends with `_exit`,
//! which runs no handler. Any other call goes on to the C library.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Set when the engine library is loaded: from then on an `exit` call that
/// reaches us is the engine's (the tool itself ends by returning from `main`,
/// and the C library's own call to `exit` does not come through here).
static ENGINE_LOADED: AtomicBool = AtomicBool::new(false);

/// Turns (status, name of the exiting thread) into the bytes to write on stderr.
type Reporter = fn(i32, &str) -> String;

static REPORTER: OnceLock<Reporter> = OnceLock::new();

/// Chooses how an engine exit is reported; the first choice stays.
pub fn report_engine_exit_with(reporter: Reporter) {
    let _ = REPORTER.set(reporter);
}

pub(super) fn engine_loaded() {
    ENGINE_LOADED.store(true, Ordering::SeqCst);
}

/// The unit-test harness ends with `process::exit`: it keeps the C library's.
#[cfg(not(test))]
mod interposed {
    use std::ffi::CStr;
    use std::os::raw::{c_int, c_void};
    use std::sync::atomic::Ordering;

    use super::{ENGINE_LOADED, REPORTER};

    #[no_mangle]
    pub extern "C" fn exit(status: c_int) -> ! {
        trap(status);
        // SAFETY: the C library's own `exit`, looked up past this definition.
        unsafe { libc_function::<extern "C" fn(c_int) -> !>(c"exit")(status) }
    }

    #[no_mangle]
    pub extern "C" fn quick_exit(status: c_int) -> ! {
        trap(status);
        // SAFETY: as in `exit`.
        unsafe { libc_function::<extern "C" fn(c_int) -> !>(c"quick_exit")(status) }
    }

    /// Ends the process here when the engine is the caller.
    fn trap(status: c_int) {
        if !ENGINE_LOADED.load(Ordering::SeqCst) {
            return;
        }
        let thread = current_thread_name();
        let line = match REPORTER.get() {
            Some(report) => report(status, &thread),
            None => {
                format!("mge: error: the engine ended the process with exit({status}) from its thread '{thread}'\n")
            }
        };
        // SAFETY: write(2) of a valid buffer, then `_exit`, which runs no handler:
        // nothing of the engine's can hang after this.
        unsafe {
            libc::write(2, line.as_ptr() as *const c_void, line.len());
            libc::_exit(2);
        }
    }

    /// The next definition of `name` after ours: the C library's.
    ///
    /// # Safety
    /// `F` must be the function pointer type of the C function `name`.
    unsafe fn libc_function<F: Copy>(name: &CStr) -> F {
        let symbol = libc::dlsym(libc::RTLD_NEXT, name.as_ptr());
        if symbol.is_null() {
            // No C library behind us cannot happen in a dynamically linked
            // binary; end without handlers rather than recurse.
            libc::_exit(2);
        }
        std::mem::transmute_copy(&symbol)
    }

    fn current_thread_name() -> String {
        let mut name = [0 as libc::c_char; 32];
        // SAFETY: the buffer is larger than the 16 bytes Linux thread names take.
        let code = unsafe { libc::pthread_getname_np(libc::pthread_self(), name.as_mut_ptr(), name.len()) };
        if code != 0 {
            return String::from("?");
        }
        // SAFETY: pthread_getname_np wrote a NUL-terminated string into `name`.
        unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned()
    }
}

/// A supervised child ends when its parent does: no engine left running unwatched.
pub fn end_with_parent() {
    // SAFETY: prctl with an integer argument; failure only loses this safeguard.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
}
