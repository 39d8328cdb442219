//! What the tool asks of the operating system about processes, beside the
//! engine: who it runs as, a process group that ends whole even when the tool
//! itself is killed outright, a pipe handed to a supervised child under its own
//! descriptor number, the file size limit's signal, the stacks of threads, and
//! the process's CPU time.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::raw::c_int;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The CPU time this process has used so far, all its threads together
/// (`CLOCK_PROCESS_CPUTIME_ID`, to the nanosecond, where the wall clock counts
/// whatever else the machine does too); `None` where the clock is not there.
pub fn process_cpu_time() -> Option<std::time::Duration> {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, ours, and nothing else.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) } != 0 {
        return None;
    }
    Some(std::time::Duration::new(
        u64::try_from(now.tv_sec).ok()?,
        u32::try_from(now.tv_nsec).ok()?,
    ))
}

/// The user the tool runs as (its effective uid).
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() }
}

/// A process group for programs the tool starts (`Command::process_group(group.id())`)
/// that ends whole, with every process in it, when it is dropped, and also when the
/// tool dies without a word (SIGKILL): a wrapper script's children (a `python3` shim
/// that runs the real Python, which runs pip) go with it. `PR_SET_PDEATHSIG` would
/// reach only the program the tool started, not what that one started.
///
/// The group's leader is a watcher forked from the tool, which holds the read end of
/// a pipe, the lifeline, whose only write end the tool keeps. When the tool drops
/// the group or dies, the lifeline closes and the watcher kills its group, itself
/// included. The watcher is in no group of the tool's, so killing the tool's group
/// (as CI does to a cancelled job) leaves it to do its work; and being the leader,
/// its group's id cannot pass to another group while anything in it may still run.
pub struct ProcessGroup {
    leader: libc::pid_t,
    lifeline: Option<OwnedFd>,
}

impl ProcessGroup {
    pub fn start() -> io::Result<ProcessGroup> {
        let mut ends = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array. Close-on-exec keeps the
        // write end out of every program started later: only this process holds it.
        if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: two fresh descriptors that nothing else owns.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
        // SAFETY: the child runs only `watch`, which makes async-signal-safe calls
        // alone, as a child forked from a threaded process must.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            0 => watch(read.as_raw_fd(), write.as_raw_fd()),
            leader => {
                // The watcher makes its group too; set here as well so that it exists
                // before anything is started into it, whichever process runs first.
                // SAFETY: setpgid on our own child; an error (it already did) changes nothing.
                unsafe { libc::setpgid(leader, leader) };
                drop(read);
                Ok(ProcessGroup {
                    leader,
                    lifeline: Some(write),
                })
            }
        }
    }

    /// The group's id, for `CommandExt::process_group`.
    pub fn id(&self) -> i32 {
        self.leader
    }
}

impl Drop for ProcessGroup {
    /// Ends every process in the group: the lifeline closes, the watcher kills the
    /// group; waits for the watcher, so that the group is gone when this returns.
    fn drop(&mut self) {
        drop(self.lifeline.take());
        loop {
            // SAFETY: waitpid on our own child with no status pointer.
            let waited = unsafe { libc::waitpid(self.leader, std::ptr::null_mut(), 0) };
            if waited != -1 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break;
            }
        }
    }
}

/// The watcher: waits for the lifeline to close, then kills its process group.
/// Only async-signal-safe calls here, and it never returns (no destructor of the
/// tool's runs in it).
fn watch(read: RawFd, write: RawFd) -> ! {
    // SAFETY: plain system calls on descriptors this process owns, then `_exit`.
    unsafe {
        libc::setpgid(0, 0);
        libc::close(write);
        // Nothing of the tool's stays open here (its stdout's readers, its lock
        // files) but the lifeline, on fd 0.
        libc::dup2(read, 0);
        libc::syscall(libc::SYS_close_range, 1u32, u32::MAX, 0u32);
        let mut byte = 0u8;
        loop {
            let read = libc::read(0, (&mut byte as *mut u8).cast(), 1);
            if read == 0 || (read < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        libc::kill(0, libc::SIGKILL);
        libc::_exit(0)
    }
}

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

/// The child that `command` starts is killed when the thread that starts it
/// ends: no engine left running unwatched. Set before the child's program
/// starts, and never where this process is gone already (a parent killed
/// before the child's own call left it running for good).
pub fn end_with_this_process(command: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec the closure only calls prctl, getppid
    // and _exit, which are async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(128 + libc::SIGKILL);
            }
            Ok(())
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

/// Starts this program again in place of this process (`execve`), with the
/// same arguments and environment but the variable `name` set to `value`
/// (removed for `None`); a stdout that was closed at the start is closed
/// again, for the new start to see it so (see `stdio::stdout_closed`).
/// Returns only where that fails.
pub fn restart(name: &str, value: Option<OsString>) -> io::Error {
    let mut args = std::env::args_os();
    // The running program itself, even where its file was replaced since.
    let mut command = Command::new("/proc/self/exe");
    if let Some(program) = args.next() {
        command.arg0(program);
    }
    command.args(args);
    match value {
        Some(value) => command.env(name, value),
        None => command.env_remove(name),
    };
    if super::stdio::stdout_closed() {
        // SAFETY: the closure runs in this process just before execve and
        // only closes the /dev/null that Rust's runtime opened as fd 1.
        unsafe {
            command.pre_exec(|| {
                libc::close(1);
                Ok(())
            });
        }
    }
    command.exec()
}

/// A write past the file size limit (`ulimit -f`) fails with EFBIG ("File
/// too large"), which the tool reports, instead of ending the process with
/// SIGXFSZ and leaving a partial staging file. Children inherit the setting.
pub fn ignore_file_size_signal() {
    // SAFETY: sets one signal's disposition to SIG_IGN; no handler runs.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

type DefaultAttributes = unsafe extern "C" fn(*mut libc::pthread_attr_t) -> c_int;

/// A C library function looked up at run time, `None` where this C library
/// lacks it: the binary links no symbol newer than glibc 2.17, the floor of
/// its wheel's `manylinux_2_17` tag.
///
/// # Safety
/// `F` must be the function pointer type of the C function `name`.
unsafe fn optional_libc_function<F: Copy>(name: &std::ffi::CStr) -> Option<F> {
    let symbol = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
    (!symbol.is_null()).then(|| std::mem::transmute_copy(&symbol))
}

/// Threads started without a stack size of their own (the engine's) get at
/// least `size` bytes of stack: by default they get `ulimit -s`, which can be
/// too small for the engine's kernels. Needs glibc 2.18; older ones keep their default.
pub fn ensure_thread_stacks(size: usize) {
    // SAFETY: both have the signature of `pthread_getattr_default_np`
    // (`pthread_setattr_default_np` takes the attributes as const, the same ABI).
    let functions = unsafe {
        optional_libc_function::<DefaultAttributes>(c"pthread_getattr_default_np").zip(optional_libc_function::<
            DefaultAttributes,
        >(
            c"pthread_setattr_default_np"
        ))
    };
    let Some((get_default, set_default)) = functions else {
        return;
    };
    // SAFETY: the default attributes are read into, changed in, and set
    // from an initialised attribute object, destroyed after.
    unsafe {
        let mut attributes: libc::pthread_attr_t = std::mem::zeroed();
        if get_default(&mut attributes) != 0 {
            return;
        }
        let mut current = 0;
        if libc::pthread_attr_getstacksize(&attributes, &mut current) == 0
            && current < size
            && libc::pthread_attr_setstacksize(&mut attributes, size) == 0
        {
            set_default(&mut attributes);
        }
        libc::pthread_attr_destroy(&mut attributes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A process started into the group, and one that one started, end when it is dropped.
    #[test]
    fn dropping_the_group_ends_a_grandchild_too() {
        let group = ProcessGroup::start().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let mut shell = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("sleep 60 & echo $! > {}; wait", pid_file.display()))
            .process_group(group.id())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let grandchild = loop {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok())
            {
                break pid;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "the shell did not start");
            std::thread::sleep(Duration::from_millis(10));
        };
        drop(group);
        shell.wait().unwrap();
        let gone = Instant::now();
        // Killed, it is at most a zombie until whoever inherited it reaps it.
        while std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
            .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        {
            assert!(
                gone.elapsed() < Duration::from_secs(10),
                "sleep {grandchild} still runs"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
