//! What the tool asks of the operating system about processes, beside the
//! engine: who it runs as, and a process group that ends whole even when the
//! tool itself is killed outright.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;
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
