//! The engine threads `--cpu-cores` pinned, as the kernel now sees them.

use serde::Serialize;

use crate::engine;

/// One pinned engine thread: what was asked, and what `/proc` says.
#[derive(Clone, Debug, Serialize)]
pub struct PinnedThread {
    /// Its name (`/proc/self/task/TID/comm`), e.g. `cpu0:0`.
    pub name: Option<String>,
    pub tid: i32,
    /// Its number among its network's threads, as the engine counts them.
    pub engine_thread: usize,
    /// The core it was pinned to.
    pub core: usize,
    /// The cores it may run on now (`Cpus_allowed_list`), gone when the thread is.
    pub allowed_cores: Option<String>,
    /// Why the kernel refused to pin it, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Every engine thread pinned so far, with its current affinity.
pub fn pinned_threads() -> Vec<PinnedThread> {
    engine::pinned_threads()
        .into_iter()
        .map(|pinned| {
            let task = format!("/proc/self/task/{}", pinned.tid);
            let status = std::fs::read_to_string(format!("{task}/status")).ok();
            PinnedThread {
                name: std::fs::read_to_string(format!("{task}/comm"))
                    .ok()
                    .map(|name| name.trim_end().to_string()),
                tid: pinned.tid,
                engine_thread: pinned.thread,
                core: pinned.core,
                allowed_cores: status.as_deref().and_then(allowed_cores),
                error: pinned.error,
            }
        })
        .collect()
}

fn allowed_cores(status: &str) -> Option<String> {
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))?;
    Some(line.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_allowed_cores() {
        let status = "Name:\tcpu0:0\nCpus_allowed:\t2\nCpus_allowed_list:\t1\nMems_allowed:\t1\n";
        assert_eq!(allowed_cores(status).as_deref(), Some("1"));
        assert_eq!(allowed_cores("Name:\tx\n"), None);
    }
}
