//! Pinning the engine's CPU worker threads to cores (`--cpu-cores`), and the
//! cores this process may run on.
//!
//! The engine calls a pinning callback on each worker thread of a network,
//! with the thread's number only (`LITE_set_runtime_thread_affinity`), so
//! each network that may run at the same time as others gets a callback of
//! its own, one per slot: the slot's plan says which core each of its
//! threads goes to.

use std::os::raw::c_int;
use std::sync::{Mutex, MutexGuard};

use anyhow::{bail, Result};

use super::ffi::LiteThreadAffinityCallback;

/// Networks that can be pinned apart (one slot each).
pub const PIN_SLOTS: usize = 64;

/// Per slot, the core of each of its network's threads, by thread number.
static PLANS: Mutex<Vec<Vec<usize>>> = Mutex::new(Vec::new());

/// What the callbacks did, in the order they ran.
static PINNED: Mutex<Vec<PinAttempt>> = Mutex::new(Vec::new());

/// An engine thread the engine asked to pin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinAttempt {
    /// The thread's id (what `/proc/self/task/` lists).
    pub tid: i32,
    /// Its number among its network's threads, as the engine counts them.
    pub thread: usize,
    pub core: usize,
    /// Why the kernel refused, if it did.
    pub error: Option<String>,
}

macro_rules! slot_callbacks {
    ($($slot:literal)*) => {
        [$(pin_for_slot::<$slot> as LiteThreadAffinityCallback),*]
    };
}

static CALLBACKS: [LiteThreadAffinityCallback; PIN_SLOTS] = slot_callbacks!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
    32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63
);

/// A lock the callbacks take on engine threads: a poisoned one is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Plans slot `slot`: thread `n` of its network goes to `cores[n]` (round
/// robin past the end); returns the callback that carries the plan out.
pub(super) fn plan(slot: usize, cores: Vec<usize>) -> Result<LiteThreadAffinityCallback> {
    if slot >= PIN_SLOTS {
        bail!("at most {PIN_SLOTS} networks can be pinned apart");
    }
    let mut plans = lock(&PLANS);
    if plans.len() <= slot {
        plans.resize(slot + 1, Vec::new());
    }
    plans[slot] = cores;
    Ok(CALLBACKS[slot])
}

extern "C" fn pin_for_slot<const SLOT: usize>(thread: c_int) -> c_int {
    let thread = usize::try_from(thread).unwrap_or(0);
    let Some(core) = lock(&PLANS)
        .get(SLOT)
        .filter(|cores| !cores.is_empty())
        .map(|cores| cores[thread % cores.len()])
    else {
        return -1;
    };
    let error = pin_calling_thread(core).err();
    let failed = error.is_some();
    lock(&PINNED).push(PinAttempt {
        // The system call, not glibc's gettid (2.30): the wheel's floor is glibc 2.17.
        // SAFETY: gettid has no arguments and cannot fail.
        tid: unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t,
        thread,
        core,
        error,
    });
    if failed {
        -1
    } else {
        0
    }
}

fn pin_calling_thread(core: usize) -> Result<(), String> {
    if core >= libc::CPU_SETSIZE as usize {
        return Err(format!("core {core} is beyond what the kernel's CPU sets hold"));
    }
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it
    // (the index is checked above); pid 0 is the calling thread.
    let code = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if code == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// Every engine thread pinned so far.
pub fn pinned_threads() -> Vec<PinAttempt> {
    lock(&PINNED).clone()
}

/// The cores this process may run on (its affinity mask), in order.
pub fn available_cores() -> Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid set for the kernel to fill; pid 0
    // is this thread, whose mask the process's threads inherit.
    let (code, set) = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let code = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        (code, set)
    };
    if code != 0 {
        bail!(
            "cannot read which cores this process may use: {}",
            std::io::Error::last_os_error()
        );
    }
    // SAFETY: CPU_ISSET reads inside the set for every index below CPU_SETSIZE.
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&core| unsafe { libc::CPU_ISSET(core, &set) })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_pins_its_threads_round_robin() {
        let cores = available_cores().unwrap();
        assert!(!cores.is_empty());
        let callback = plan(PIN_SLOTS - 1, vec![cores[0]]).unwrap();
        let on_a_thread = std::thread::spawn(move || {
            let code = callback(3);
            (code, available_cores().unwrap())
        });
        let (code, pinned_to) = on_a_thread.join().unwrap();
        assert_eq!((code, pinned_to), (0, vec![cores[0]]));
        let record = pinned_threads().into_iter().find(|p| p.thread == 3).unwrap();
        assert_eq!((record.core, record.error), (cores[0], None));
        assert!(plan(PIN_SLOTS, vec![0]).is_err());
    }
}
