//! Keeps what the engine's C++ code prints (it writes to the process's stdout
//! itself) out of the tool's stdout, which belongs to reports and JSON.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::raw::c_int;

/// While alive, file descriptors are pointed elsewhere; dropping restores them.
pub struct StdoutSilenced {
    saved: Vec<(c_int, c_int)>,
}

/// Sends fd 1 to stderr (`to_stderr`) or to /dev/null until the guard drops.
pub fn silence_stdout(to_stderr: bool) -> StdoutSilenced {
    if to_stderr {
        redirect(&[1], 2)
    } else {
        redirect_to_null(&[1])
    }
}

/// Sends fds 1 and 2 to /dev/null until the guard drops.
pub(super) fn silence_all() -> StdoutSilenced {
    redirect_to_null(&[1, 2])
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
            // SAFETY: `copy` is the dup made in `redirect`, restored and closed once.
            unsafe {
                libc::dup2(copy, fd);
                libc::close(copy);
            }
        }
    }
}
