//! What makes timings untrustworthy, measured over the timed runs: other work
//! on the machine (`/proc/stat` less this process tree's own CPU time), the
//! cores' frequency where `/sys` exposes it, and how the runs spread and drift.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::timing::{drift_percent, spread_percent};
use crate::supervise;

/// The spread (10th to 90th percentile, in percent of the median) above which timings are called noisy.
const NOISY_SPREAD_PERCENT: f64 = 50.0;

/// The drift (last tenth of the runs against the first, in percent) above which timings are called noisy.
const NOISY_DRIFT_PERCENT: f64 = 15.0;

/// The clock ticks a core must count during the timed runs for the load to be
/// measured: `/proc` counts CPU time in ticks of 10 ms (`USER_HZ`, 100 on every
/// Linux), so over fewer a tick counted at either end moves the figure by more
/// than a twentieth of a core (a 12 ms run would show one core's tick as 1.0).
const LOAD_WINDOW_TICKS: f64 = 20.0;

/// The machine counts as loaded when other processes use this share of its
/// cores: a second process on each core's every fourth moment.
const LOADED_SHARE: f64 = 0.25;

/// Whether other processes' `other_load_cores` load a machine of `cores`.
pub fn loaded(other_load_cores: f64, cores: usize) -> bool {
    other_load_cores >= LOADED_SHARE * cores as f64
}

/// The CPU time other processes use over the next `window`, in cores, this
/// process waiting meanwhile; `None` where `/proc` could not be read.
pub fn other_load_over(window: Duration) -> Option<f64> {
    let before = MachineSample::now();
    std::thread::sleep(window);
    Noise::between(&before, &MachineSample::now(), &[]).other_load_cores
}

/// The length of one of `/proc`'s clock ticks, in milliseconds.
const TICK_MS: f64 = 10.0;

/// CPU time counters of the whole machine, in clock ticks, from `/proc/stat`'s `cpu` line.
#[derive(Clone, Copy, Debug, PartialEq)]
struct MachineTicks {
    /// Every state.
    total: u64,
    /// Not idle and not waiting for I/O (steal included).
    busy: u64,
    /// Taken by the hypervisor for other guests.
    steal: u64,
}

/// The machine at one instant.
#[derive(Clone, Debug)]
pub struct MachineSample {
    at: Instant,
    machine: Option<MachineTicks>,
    /// CPU time of this process (all its threads) and, in a supervised child, of its parent.
    own_ticks: Option<u64>,
    /// Each online core's current frequency in kHz, where `/sys` tells.
    frequencies_khz: Vec<u64>,
}

impl MachineSample {
    pub fn now() -> MachineSample {
        MachineSample {
            at: Instant::now(),
            machine: read("/proc/stat").as_deref().and_then(machine_ticks),
            own_ticks: own_ticks(),
            frequencies_khz: frequencies_khz(),
        }
    }
}

/// How far the timed runs can be trusted (`run --json`'s `noise`).
#[derive(Clone, Debug, Serialize)]
pub struct Noise {
    /// How long the timed runs took, in seconds: the window the figures below cover.
    pub window_s: f64,
    /// Cores the machine has online.
    pub cores: usize,
    /// CPU time other processes used during the timed runs, in cores (1.0 =
    /// one core busy all along): the machine's busy time less this process
    /// tree's, from `/proc/stat` and `/proc/PID/stat` (clock ticks of 10 ms:
    /// windows under a second are coarse). Steal time is not in it. `None`
    /// where `/proc` could not be read or the window is too short to measure it.
    pub other_load_cores: Option<f64>,
    /// Why `other_load_cores` is not measured, where the runs were too short for `/proc`'s ticks.
    pub other_load_unmeasured: Option<String>,
    /// Time the hypervisor gave to other guests, in percent of the machine's.
    pub steal_percent: Option<f64>,
    /// The lowest and highest frequency of any core at the start or the end
    /// of the timed runs, in MHz; `None` where `/sys` does not expose
    /// cpufreq (as in many VMs): scaling cannot be seen there, only its
    /// effect on spread and drift.
    pub cpu_mhz: Option<[f64; 2]>,
    /// The 10th to 90th percentile of the runs, in percent of their median.
    pub spread_percent: Option<f64>,
    /// The last tenth of the runs against the first, in percent (positive: slower at the end).
    pub drift_percent: Option<f64>,
}

impl Noise {
    /// The figures between two samples taken around the timed runs `samples`.
    pub fn between(before: &MachineSample, after: &MachineSample, samples: &[f64]) -> Noise {
        let ticks = before.machine.zip(after.machine).map(|(b, a)| MachineTicks {
            total: a.total.saturating_sub(b.total),
            busy: a.busy.saturating_sub(b.busy),
            steal: a.steal.saturating_sub(b.steal),
        });
        let cores = online_cores();
        let own = before.own_ticks.zip(after.own_ticks).map(|(b, a)| a.saturating_sub(b));
        let ticks_per_core = ticks.map(|ticks| ticks.total as f64 / cores as f64);
        let too_short = ticks_per_core.is_some_and(|per_core| per_core < LOAD_WINDOW_TICKS);
        let other_load_cores =
            ticks
                .zip(ticks_per_core)
                .zip(own)
                .filter(|_| !too_short)
                .map(|((ticks, per_core), own)| {
                    ticks.busy.saturating_sub(ticks.steal).saturating_sub(own) as f64 / per_core
                });
        let window_s = after.at.saturating_duration_since(before.at).as_secs_f64();
        let other_load_unmeasured = too_short.then(|| {
            format!(
                "the timed runs took {:.1} ms, under the {:.0} ms that /proc's {TICK_MS:.0} ms ticks of CPU time need",
                window_s * 1e3,
                LOAD_WINDOW_TICKS * TICK_MS
            )
        });
        let steal_percent = ticks
            .filter(|ticks| ticks.total > 0)
            .map(|ticks| ticks.steal as f64 / ticks.total as f64 * 100.0);
        let frequencies = before.frequencies_khz.iter().chain(&after.frequencies_khz);
        let lowest = frequencies.clone().min();
        let cpu_mhz = lowest
            .zip(frequencies.max())
            .map(|(low, high)| [*low as f64 / 1e3, *high as f64 / 1e3]);
        Noise {
            window_s,
            cores,
            other_load_cores,
            other_load_unmeasured,
            steal_percent,
            cpu_mhz,
            spread_percent: (samples.len() >= 10).then(|| spread_percent(samples)).flatten(),
            drift_percent: drift_percent(samples),
        }
    }

    /// Whether the runs spread or drift enough to doubt their statistics.
    pub fn is_large(&self) -> bool {
        self.spread_percent.is_some_and(|spread| spread > NOISY_SPREAD_PERCENT)
            || self
                .drift_percent
                .is_some_and(|drift| drift.abs() > NOISY_DRIFT_PERCENT)
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The `cpu` line of `/proc/stat`: user nice system idle iowait irq softirq steal (guest time is in user).
fn machine_ticks(stat: &str) -> Option<MachineTicks> {
    let line = stat.lines().find(|line| line.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    let [_, _, _, idle, iowait, _, _, steal] = fields[..] else {
        return None;
    };
    let total: u64 = fields.iter().sum();
    Some(MachineTicks {
        total,
        busy: total - idle - iowait,
        steal,
    })
}

/// User and system time of a process, in clock ticks, from its `/proc/PID/stat`.
fn process_ticks(stat: &str) -> Option<u64> {
    // The command name (field 2) may hold spaces: the fields after it follow its ')'.
    let (_, after_name) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime) of the whole line; field 3 is first here.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// This process tree's CPU time: this process's, and its parent's when that
/// is the `mge` that supervises it.
fn own_ticks() -> Option<u64> {
    let own = process_ticks(&read("/proc/self/stat")?)?;
    if !supervise::is_child() {
        return Some(own);
    }
    let parent = std::os::unix::process::parent_id();
    Some(own + process_ticks(&read(&format!("/proc/{parent}/stat"))?)?)
}

/// The cores online.
pub fn online_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| cores.get())
}

/// `scaling_cur_freq` of every core that has one.
fn frequencies_khz() -> Vec<u64> {
    let Ok(cpus) = std::fs::read_dir("/sys/devices/system/cpu") else {
        return Vec::new();
    };
    cpus.flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("cpu")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|entry| {
            let text = std::fs::read_to_string(entry.path().join("cpufreq/scaling_cur_freq")).ok()?;
            text.trim().parse().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_machines_and_a_processs_ticks() {
        let stat = "cpu  765316 0 77949 196378 2136 0 564 2427 0 0\ncpu0 376074 0 35889 108400 655 0 41 1212 0 0\n";
        let ticks = machine_ticks(stat).unwrap();
        let total = 765316 + 77949 + 196378 + 2136 + 564 + 2427;
        assert_eq!(
            ticks,
            MachineTicks {
                total,
                busy: total - 196378 - 2136,
                steal: 2427
            }
        );
        assert_eq!(machine_ticks("intr 1 2\n"), None);
        let process = "1234 (mge run (x)) S 1 1234 1234 0 -1 4194560 500 0 0 0 75 25 0 0 20 0 3 0 1 0 0";
        assert_eq!(process_ticks(process), Some(100));
        assert!(own_ticks().is_some());
    }

    #[test]
    fn other_load_is_the_machines_busy_time_less_ours() {
        let at = Instant::now();
        let sample = |total, busy, own| MachineSample {
            at,
            machine: Some(MachineTicks { total, busy, steal: 0 }),
            own_ticks: Some(own),
            frequencies_khz: vec![2_000_000],
        };
        let cores = online_cores() as u64;
        // Over 100 ticks a core: 100 busy ticks a core, 40 of them ours.
        let noise = Noise::between(&sample(0, 0, 0), &sample(100 * cores, 100 * cores, 40), &[1.0; 20]);
        let expected = (100 * cores - 40) as f64 / 100.0;
        assert!((noise.other_load_cores.unwrap() - expected).abs() < 1e-9);
        assert_eq!(noise.cpu_mhz, Some([2000.0, 2000.0]));
        assert_eq!((noise.spread_percent, noise.drift_percent), (Some(0.0), Some(0.0)));
        assert!(!noise.is_large());
        let drifting: Vec<f64> = (0..20).map(|i| if i < 18 { 1.0 } else { 2.0 }).collect();
        assert!(Noise::between(&sample(0, 0, 0), &sample(1, 1, 1), &drifting).is_large());
    }

    /// A 12 ms run spans about one tick a core: one tick of another process
    /// would read as a whole core busy, so the load is said to be unmeasured.
    #[test]
    fn a_window_of_a_few_ticks_leaves_the_load_unmeasured() {
        let at = Instant::now();
        let sample = |at, total, busy| MachineSample {
            at,
            machine: Some(MachineTicks { total, busy, steal: 0 }),
            own_ticks: Some(0),
            frequencies_khz: Vec::new(),
        };
        let cores = online_cores() as u64;
        let later = at + std::time::Duration::from_millis(12);
        let noise = Noise::between(&sample(at, 0, 0), &sample(later, cores, 1), &[12.0]);
        assert_eq!(noise.other_load_cores, None);
        assert_eq!(
            noise.other_load_unmeasured.as_deref(),
            Some("the timed runs took 12.0 ms, under the 200 ms that /proc's 10 ms ticks of CPU time need")
        );
        let long = Noise::between(&sample(at, 0, 0), &sample(later, 20 * cores, 1), &[12.0]);
        assert_eq!(long.other_load_cores, Some(0.05));
        assert_eq!(long.other_load_unmeasured, None);
    }
}
