//! Whether a child that loads is stuck: every one of its threads sleeps on
//! a lock or condition (a futex) and the process uses no CPU time. The
//! engine deadlocks so when one of its threads could not start (seen under
//! `ulimit -v`); a child that reads its feeds from a pipe, waits on a disk,
//! or is stopped by a debugger sleeps elsewhere, and is not stuck.

use std::fs;
use std::time::{Duration, Instant};

/// How long a stuck child is watched before it counts as stalled.
pub const STALL_LIMIT: Duration = Duration::from_secs(10);

#[derive(Default)]
pub struct StallWatch {
    /// The process's CPU time when it was first seen stuck, and when.
    stuck_since: Option<(u64, Instant)>,
}

impl StallWatch {
    /// Has process `pid` been stuck, without using CPU time, for `STALL_LIMIT`?
    pub fn stalled(&mut self, pid: u32) -> bool {
        let now = Instant::now();
        match (stuck_cpu_time(pid), self.stuck_since) {
            (Some(cpu), Some((since_cpu, since))) if cpu == since_cpu => now - since >= STALL_LIMIT,
            (Some(cpu), _) => {
                self.stuck_since = Some((cpu, now));
                false
            }
            (None, _) => {
                self.stuck_since = None;
                false
            }
        }
    }
}

/// The CPU time of process `pid` so far (in clock ticks), when every one of
/// its threads sleeps on a futex; `None` otherwise, or when `/proc` cannot tell.
fn stuck_cpu_time(pid: u32) -> Option<u64> {
    let mut threads = 0;
    for thread in fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let thread = thread.ok()?.path();
        let sleeping = fs::read_to_string(thread.join("stat"))
            .ok()
            .is_some_and(|stat| after_name(&stat).and_then(|mut fields| fields.next()) == Some("S"));
        let on_a_futex = fs::read_to_string(thread.join("wchan")).is_ok_and(|wchan| wchan.contains("futex"));
        if !(sleeping && on_a_futex) {
            return None;
        }
        threads += 1;
    }
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the name: state (field 3) ... utime (14), stime (15).
    let mut times = after_name(&stat)?.skip(11).map(|field| field.parse::<u64>().ok());
    let (user, system) = (times.next()??, times.next()??);
    (threads > 0).then_some(user + system)
}

/// The fields of a `/proc` stat line after the process name, which may hold spaces and parentheses.
fn after_name(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(stat[stat.rfind(')')? + 1..].split_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_sleeps_elsewhere_is_not_stuck() {
        // This test's own process has a thread that runs: itself.
        assert_eq!(stuck_cpu_time(std::process::id()), None);
        let name = "1 (a) b) S 1 2 3 4 5 6 7 8 9 10 11 12 13";
        assert_eq!(after_name(name).unwrap().next(), Some("S"));
        assert_eq!(after_name(name).unwrap().nth(11), Some("11"));
    }
}
