//! The process's peak resident memory, as the kernel counts it.

use serde::Serialize;

/// Peak resident set size (VmHWM) at two moments of a run.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PeakMemory {
    /// Once the model is loaded, before feeds are prepared.
    pub peak_rss_after_load_bytes: u64,
    /// After the timed runs: the peak of the whole run so far.
    pub peak_rss_bytes: u64,
}

impl PeakMemory {
    /// The peak so far, with the one read once the model was loaded.
    pub fn now(after_load: Option<u64>) -> Option<PeakMemory> {
        Some(PeakMemory {
            peak_rss_after_load_bytes: after_load?,
            peak_rss_bytes: peak_rss_bytes()?,
        })
    }
}

/// The peak resident set size of this process so far, from `VmHWM` in
/// `/proc/self/status` (what `getrusage`'s `ru_maxrss` and `time -v` report at exit);
/// `None` where the kernel does not say.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    vm_hwm(&status)
}

fn vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|line| line.strip_prefix("VmHWM:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_vm_hwm() {
        let status = "Name:\tmge\nVmPeak:\t  200000 kB\nVmHWM:\t   12345 kB\nVmRSS:\t   12000 kB\n";
        assert_eq!(vm_hwm(status), Some(12345 * 1024));
        assert_eq!(vm_hwm("Name:\tmge\n"), None);
        assert!(peak_rss_bytes().is_some_and(|bytes| bytes > 0));
    }
}
