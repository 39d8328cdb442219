//! The process plumbing that needs the C library: a pipe handed to a child
//! under its own descriptor number, the file size limit's signal, and the
//! stacks of threads.

use std::fs::File;
use std::os::fd::{FromRawFd, RawFd};
use std::os::raw::c_int;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The child that `command` starts inherits `fd` (3 or above, so that its
/// stdin, stdout and stderr cannot take the number) under the same number.
/// The parent keeps it close-on-exec, so that no other child gets it.
pub fn inherit(command: &mut Command, fd: RawFd) {
    assert!(fd > 2, "descriptor {fd} would be replaced by the child's stdio");
    // SAFETY: between fork and exec the closure only calls fcntl, which is
    // async-signal-safe, on a descriptor the forked process holds.
    unsafe {
        command.pre_exec(move || match libc::fcntl(fd, libc::F_SETFD, 0) {
            -1 => Err(std::io::Error::last_os_error()),
            _ => Ok(()),
        });
    }
}

/// The write end of a pipe this process inherited as `fd` (see `inherit`),
/// if `fd` is one: moved out of the way to the top of the descriptor table
/// (at most 1023), where the user's `/dev/fd/N` paths do not reach, and
/// close-on-exec, so that nothing this process starts inherits it.
pub fn take_inherited_pipe(fd: RawFd) -> Option<File> {
    if fd < 3 {
        return None;
    }
    // SAFETY: fstat fills the zeroed struct, or fails (EBADF) for a descriptor that is not open.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut stat) } != 0 || stat.st_mode & libc::S_IFMT != libc::S_IFIFO {
        return None;
    }
    // SAFETY: fcntl on an open descriptor.
    if unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_ACCMODE != libc::O_WRONLY {
        return None;
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct.
    let top = match unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } {
        0 => limit.rlim_cur.min(1024) as c_int - 1,
        _ => fd,
    };
    let moved = match top > fd {
        // SAFETY: fcntl on an open descriptor: a close-on-exec copy at `top` if it is free.
        true => unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, top) },
        false => -1,
    };
    let channel = if moved >= 0 {
        // SAFETY: the original, copied, is closed once.
        unsafe { libc::close(fd) };
        moved
    } else {
        // SAFETY: fcntl on an open descriptor.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == -1 {
            return None;
        }
        fd
    };
    // SAFETY: the descriptor is open and was handed to this process for this
    // use alone: nothing else here owns it.
    Some(unsafe { File::from_raw_fd(channel) })
}

/// A write past the file size limit (`ulimit -f`) fails with EFBIG ("File
/// too large"), which the tool reports, instead of ending the process with
/// SIGXFSZ and leaving a partial staging file. Children inherit the setting.
pub fn ignore_file_size_signal() {
    // SAFETY: sets one signal's disposition to SIG_IGN; no handler runs.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

extern "C" {
    // glibc 2.18 and later; not in the libc crate.
    fn pthread_getattr_default_np(attributes: *mut libc::pthread_attr_t) -> c_int;
    fn pthread_setattr_default_np(attributes: *const libc::pthread_attr_t) -> c_int;
}

/// Threads started without a stack size of their own (the engine's) get at
/// least `size` bytes of stack: by default they get `ulimit -s`, which can be
/// too small for the engine's kernels.
pub fn ensure_thread_stacks(size: usize) {
    // SAFETY: the default attributes are read into, changed in, and set
    // from an initialised attribute object, destroyed after.
    unsafe {
        let mut attributes: libc::pthread_attr_t = std::mem::zeroed();
        if pthread_getattr_default_np(&mut attributes) != 0 {
            return;
        }
        let mut current = 0;
        if libc::pthread_attr_getstacksize(&attributes, &mut current) == 0
            && current < size
            && libc::pthread_attr_setstacksize(&mut attributes, size) == 0
        {
            pthread_setattr_default_np(&attributes);
        }
        libc::pthread_attr_destroy(&mut attributes);
    }
}
