//! Keeps what the engine's C++ code prints (it writes to the process's stdout
//! itself) out of the tool's stdout, which belongs to reports and JSON; and
//! knows whether the tool's stdout was closed when it started.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use anyhow::{Context, Result};

/// Whether stdout was closed (`>&-`) when the tool started: see `stdout_closed`.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Notes whether fd 1 is open, before Rust's runtime puts /dev/null (opened
/// read-write) in place of a closed standard stream: afterwards a closed
/// stdout looks like `1<>/dev/null`, which is how Python's
/// `subprocess.DEVNULL` hands a program its stdout. The C library calls the
/// functions of `.init_array` before `main`, which starts Rust's runtime.
extern "C" fn note_closed_stdout() {
    // SAFETY: F_GETFD only asks whether the descriptor is open; no memory is touched.
    if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
        STDOUT_CLOSED.store(true, Ordering::SeqCst);
    }
}

// SAFETY: a function pointer of the right type in `.init_array`, whose
// function calls fcntl and stores an atomic: it needs nothing set up.
#[used]
#[unsafe(link_section = ".init_array")]
static NOTE_CLOSED_STDOUT: extern "C" fn() = note_closed_stdout;

/// Whether the tool's stdout was closed when it started (`>&-`), or, in a
/// supervised child, in its parent (see `stdout_closed_in_parent`): the
/// /dev/null Rust's runtime put in its place would swallow the report.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::SeqCst)
}

/// This process's stdout is its parent's, which was closed when the parent
/// started: what this process inherited in its place is the /dev/null that
/// Rust's runtime opened there, which looks open.
pub fn stdout_closed_in_parent() {
    STDOUT_CLOSED.store(true, Ordering::SeqCst);
}

/// While alive, file descriptors are pointed elsewhere; dropping restores them.
pub struct StdoutSilenced {
    saved: Vec<(c_int, c_int)>,
}

/// Where the tool's own stderr is open: fd 2, or while the engine's start
/// is silenced, the copy of it kept for the restore. The exit trap's line
/// goes there: an exit while the engine's library loads was lost with what
/// the engine printed.
static TOOL_STDERR: AtomicI32 = AtomicI32::new(2);

// Read by the exit trap only, which the unit tests leave out.
#[cfg_attr(test, allow(dead_code))]
pub(super) fn tool_stderr() -> c_int {
    TOOL_STDERR.load(Ordering::SeqCst)
}

/// Sends fd 1 to stderr (`to_stderr`) or to /dev/null until the guard drops.
pub fn silence_stdout(to_stderr: bool) -> StdoutSilenced {
    if to_stderr {
        redirect(&[1], 2)
    } else {
        redirect_to_null(&[1])
    }
}

/// Set when a supervising parent reads this process's stderr: it shows the
/// engine's lines with `-v` only, and keeps the last for the error should the
/// process die, so they are not silenced.
static STDERR_READ_BY_PARENT: AtomicBool = AtomicBool::new(false);

/// This process's stderr is read by its supervising parent (see `quiet_start`).
pub fn stderr_read_by_parent() {
    STDERR_READ_BY_PARENT.store(true, Ordering::SeqCst);
}

/// While the engine starts (loads, probes devices): its output is kept off
/// stdout, and off stderr too unless `verbose` or a parent reads stderr,
/// until the guard drops.
pub(super) fn quiet_start(verbose: bool) -> StdoutSilenced {
    match verbose || STDERR_READ_BY_PARENT.load(Ordering::SeqCst) {
        true => redirect(&[1], 2),
        false => redirect_to_null(&[1, 2]),
    }
}

/// What the engine prints on stdout, collected in a temporary file (not a
/// pipe, which would block the engine once full).
pub struct StdoutCapture {
    file: File,
    redirected: StdoutSilenced,
}

pub fn capture_stdout() -> Result<StdoutCapture> {
    let file = tempfile::tempfile().context("cannot create a file to hold the engine's output")?;
    let redirected = redirect(&[1], file.as_raw_fd());
    Ok(StdoutCapture { file, redirected })
}

impl StdoutCapture {
    /// Restores stdout and returns what was printed meanwhile.
    pub fn finish(self) -> Result<String> {
        let StdoutCapture { mut file, redirected } = self;
        drop(redirected);
        let mut bytes = Vec::new();
        file.rewind()
            .and_then(|()| file.read_to_end(&mut bytes))
            .context("cannot read back the engine's output")?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// For a process whose stdout carries a protocol: returns the original stdout
/// and points fd 1 at stderr for good, so nothing else can write into it.
pub fn take_stdout() -> Result<File> {
    let _ = std::io::stdout().flush();
    // SAFETY: dup of our own fd 1; the new descriptor is owned by the File.
    let copy = unsafe { libc::dup(1) };
    if copy < 0 {
        return Err(std::io::Error::last_os_error()).context("cannot duplicate stdout");
    }
    // SAFETY: `copy` is a fresh descriptor nothing else owns.
    let original = unsafe { File::from_raw_fd(copy) };
    // SAFETY: dup2 on descriptors this process owns.
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(std::io::Error::last_os_error()).context("cannot move stdout");
    }
    Ok(original)
}

fn redirect_to_null(fds: &[c_int]) -> StdoutSilenced {
    match OpenOptions::new().write(true).open("/dev/null") {
        Ok(null) => redirect(fds, null.as_raw_fd()),
        // Nothing to silence into: leave the streams as they are.
        Err(_) => StdoutSilenced { saved: Vec::new() },
    }
}

fn redirect(fds: &[c_int], target: c_int) -> StdoutSilenced {
    // Anything Rust buffered must reach the real stream before it moves.
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    let mut saved = Vec::new();
    for &fd in fds {
        // SAFETY: dup/dup2 on descriptors this process owns; failures leave fd as is.
        unsafe {
            let copy = libc::dup(fd);
            if copy >= 0 && libc::dup2(target, fd) >= 0 {
                saved.push((fd, copy));
                if fd == 2 {
                    TOOL_STDERR.store(copy, Ordering::SeqCst);
                }
            } else if copy >= 0 {
                libc::close(copy);
            }
        }
    }
    StdoutSilenced { saved }
}

impl Drop for StdoutSilenced {
    fn drop(&mut self) {
        // SAFETY: C's stdio buffer may hold engine output aimed at the redirected fd.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        for &(fd, copy) in self.saved.iter().rev() {
            if fd == 2 {
                TOOL_STDERR.store(2, Ordering::SeqCst);
            }
            // SAFETY: `copy` is the dup made in `redirect`, restored and closed once.
            unsafe {
                libc::dup2(copy, fd);
                libc::close(copy);
            }
        }
    }
}
