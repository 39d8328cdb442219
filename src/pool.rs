//! Tasks shared out to threads: `check`'s models among its worker processes,
//! `compare`'s pairs of models among their runs.

use std::collections::VecDeque;
use std::sync::{mpsc, Mutex};
use std::thread;

use anyhow::{Context, Result};

use crate::interrupt::interruption;

/// Tasks `0..count` taken in turn by `jobs` threads, each thread with a state
/// of its own (`S::default()` at first, handed to `finish` at its end).
/// `done` is told each task's result on the calling thread as it comes. An
/// `Err` from `work` ends the pool (no thread takes a task after it) and is
/// returned, as is an interruption. Fewer threads than `jobs` may start (the
/// queue is shared, so one is enough); none is an error, saying its `purpose`.
pub fn share_out<S: Default, T: Send>(
    count: usize,
    jobs: usize,
    purpose: &str,
    work: impl Fn(&mut S, usize) -> Result<T> + Sync,
    finish: impl Fn(S) + Sync,
    mut done: impl FnMut(usize, T) -> Result<()>,
) -> Result<()> {
    let queue = Mutex::new((0..count).collect::<VecDeque<_>>());
    let (sender, receiver) = mpsc::channel();
    thread::scope(|scope| {
        let mut started = 0;
        for _ in 0..jobs.min(count) {
            let sender = sender.clone();
            let (queue, work, finish) = (&queue, &work, &finish);
            let job = move || {
                let mut state = S::default();
                // Its own statement: a guard in the `while let` would hold the lock for the body.
                let next = || queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                while let Some(index) = next().filter(|_| interruption().is_none()) {
                    let result = work(&mut state, index);
                    let failed = result.is_err();
                    if failed {
                        // The other threads take no task after this.
                        queue.lock().unwrap_or_else(|e| e.into_inner()).clear();
                    }
                    if sender.send((index, result)).is_err() || failed {
                        break;
                    }
                }
                finish(state);
            };
            match thread::Builder::new().spawn_scoped(scope, job) {
                Ok(_) => started += 1,
                Err(err) if started == 0 => {
                    return Err(err).with_context(|| format!("cannot start a thread to {purpose}"));
                }
                Err(_) => break,
            }
        }
        drop(sender);
        for (index, result) in receiver {
            if let Some(interrupted) = interruption() {
                return Err(interrupted.into());
            }
            done(index, result?)?;
        }
        match interruption() {
            Some(interrupted) => Err(interrupted.into()),
            None => Ok(()),
        }
    })
}
