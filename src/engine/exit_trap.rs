//! An `exit` from inside the engine ends the process at once, with a report,
//! instead of a hang; a thread the engine cannot start is reported.
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
//!
//! `pthread_create` is defined and exported the same way: the engine goes on
//! without a worker thread it could not start (under `ulimit -v`), and then
//! waits for it forever, spinning. The failure is reported, so that a
//! supervising parent knows why the engine stopped making progress.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

/// The process that loaded the engine library, once it did: from then on an
/// `exit` call that reaches us there is the engine's (the tool itself ends by
/// returning from `main`, and the C library's own call to `exit` does not
/// come through here). A process the engine forks ends as it will: MegEngine
/// counts CUDA devices in a child that calls `exit(0)`.
static ENGINE_LOADED_IN: AtomicI32 = AtomicI32::new(0);

/// Whether this process loaded the engine (not merely a fork of one that did).
// Read by the traps only, which the unit tests leave out.
#[cfg_attr(test, allow(dead_code))]
fn engine_loaded_here() -> bool {
    // SAFETY: getpid(2) cannot fail.
    ENGINE_LOADED_IN.load(Ordering::SeqCst) == unsafe { libc::getpid() }
}

/// Where the engine's exits and failed threads are reported, and how: each
/// function makes the bytes to write. Without them, an exit is an error line
/// on stderr, and a failed thread is left to the caller.
// Read by the traps only, which the unit tests leave out.
#[cfg_attr(test, allow(dead_code))]
pub struct Reports {
    pub fd: RawFd,
    /// From the exit status and the name of the exiting thread.
    pub exit: fn(i32, &str) -> String,
    /// From the error code of `pthread_create`.
    pub thread_not_started: fn(i32) -> String,
}

static REPORTS: OnceLock<Reports> = OnceLock::new();

/// Reports the engine's exits and failed threads as `reports` says (`fd`
/// must stay open); the first choice stays.
pub fn report_to(reports: Reports) {
    let _ = REPORTS.set(reports);
}

pub(super) fn engine_loaded() {
    // SAFETY: getpid(2) cannot fail.
    ENGINE_LOADED_IN.store(unsafe { libc::getpid() }, Ordering::SeqCst);
}

/// The unit-test harness ends with `process::exit`: it keeps the C library's.
#[cfg(not(test))]
mod interposed {
    use std::ffi::CStr;
    use std::os::raw::{c_int, c_void};
    use std::sync::OnceLock;

    use super::{engine_loaded_here, REPORTS};

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
        if !engine_loaded_here() {
            return;
        }
        let thread = current_thread_name();
        let (fd, line) = match REPORTS.get() {
            Some(reports) => (reports.fd, (reports.exit)(status, &thread)),
            None => (
                crate::engine::stdio::tool_stderr(),
                format!("mge: error: the engine ended the process with exit({status}) from its thread '{thread}'\n"),
            ),
        };
        // SAFETY: write(2) of a valid buffer, then `_exit`, which runs no handler:
        // nothing of the engine's can hang after this. One write of a short
        // line: a pipe takes it whole, between other threads' writes.
        unsafe {
            libc::write(fd, line.as_ptr() as *const c_void, line.len());
            libc::_exit(2);
        }
    }

    type ThreadStart = extern "C" fn(*mut c_void) -> *mut c_void;
    type PthreadCreate =
        unsafe extern "C" fn(*mut libc::pthread_t, *const libc::pthread_attr_t, ThreadStart, *mut c_void) -> c_int;

    /// The C library's `pthread_create`; a failure of the engine's is reported.
    ///
    /// # Safety
    /// As the C library's: the caller's pointers are passed on as they are.
    #[no_mangle]
    pub unsafe extern "C" fn pthread_create(
        thread: *mut libc::pthread_t,
        attributes: *const libc::pthread_attr_t,
        start: ThreadStart,
        argument: *mut c_void,
    ) -> c_int {
        static CREATE: OnceLock<PthreadCreate> = OnceLock::new();
        // SAFETY: PthreadCreate is the C library's signature of `pthread_create`.
        let create = CREATE.get_or_init(|| unsafe { libc_function(c"pthread_create") });
        // SAFETY: the caller's arguments, as the caller gave them.
        let code = unsafe { create(thread, attributes, start, argument) };
        if code != 0 && engine_loaded_here() {
            if let Some(reports) = REPORTS.get() {
                let line = (reports.thread_not_started)(code);
                // SAFETY: write(2) of a valid buffer.
                unsafe { libc::write(reports.fd, line.as_ptr() as *const c_void, line.len()) };
            }
        }
        code
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
