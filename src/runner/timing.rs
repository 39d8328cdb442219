//! Summary statistics of per-iteration times.

use serde::{Deserialize, Serialize};

/// `timing_ms` of a run's JSON report: written by `mge run --json`, read
/// back by `mge tune` from its candidates' runs.
#[derive(Serialize, Deserialize)]
pub struct TimingReport {
    pub timing_ms: Timing,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Timing {
    pub iterations: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
    /// Population standard deviation.
    pub stddev: f64,
    /// Percentiles by linear interpolation between the closest ranks (NumPy's
    /// default), so `p50` is the median.
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    /// Every timed iteration in run order, when asked for (`--all-times`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations_ms: Option<Vec<f64>>,
    /// A 95% confidence interval for the median (`median_interval`); `None`
    /// (JSON null) below 6 runs, where no such interval exists.
    #[serde(default)]
    pub median_ci95: Option<[f64; 2]>,
    /// The runs before the timed ones, where the command reports them.
    #[serde(flatten)]
    pub cold_start: Option<ColdStart>,
    /// The median of the CPU time the process used in each timed run (all
    /// its threads), where it was read for every run: the engine's work,
    /// which a load on the machine moves far less than the wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_median: Option<f64>,
    /// The least CPU time of any timed run, where it was read for every run:
    /// what `compare` and `tune` hold a loaded machine's rounds on. A load
    /// adds CPU time to a run (its caches evicted, its threads' hand-offs
    /// delayed) and never takes any away, so the least is the run it
    /// disturbed least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_min: Option<f64>,
}

/// What a network costs before it runs at its steady speed, in milliseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ColdStart {
    /// Reading the model file and loading it into the engine (graph
    /// optimization, and the global layout transform's profiling, included).
    pub load: f64,
    /// Fast-run's profiling of algorithms, which the engine does during the
    /// first run, measured apart (see `runner::profile_algorithms`); absent
    /// when the engine does not profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiling: Option<f64>,
    /// The network's first forward+wait, without the profiling: with
    /// `--fake-first` the run that only allocates, else the first warm-up,
    /// or the first timed run without warm-up.
    pub first_run: f64,
    /// Each warm-up run, in order.
    pub warmup: Vec<f64>,
}

impl ColdStart {
    /// The cold start of a network that took `load` ms to load and ran
    /// first for `first_run` ms, then `warmup`; `profiling_run` is the run of
    /// the copy that profiled for it (`runner::profile_algorithms`): the
    /// profiling is what that run took beyond the network's own first run,
    /// which found every algorithm profiled. One-time costs the copy paid
    /// first (such as paging the shared weights in) count as profiling.
    pub fn new(load: f64, profiling_run: Option<f64>, first_run: f64, warmup: Vec<f64>) -> ColdStart {
        ColdStart {
            load,
            profiling: profiling_run.map(|run| (run - first_run).max(0.0)),
            first_run,
            warmup,
        }
    }
}

impl Timing {
    /// Summarises samples in milliseconds, keeping them all when `keep_all`;
    /// `None` for no samples.
    pub fn from_samples(samples: &[f64], keep_all: bool) -> Option<Timing> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let variance = sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let median = percentile(&sorted, 50.0);
        Some(Timing {
            iterations: n,
            min: sorted[0],
            median,
            mean,
            max: sorted[n - 1],
            stddev: variance.sqrt(),
            p50: median,
            p90: percentile(&sorted, 90.0),
            p99: percentile(&sorted, 99.0),
            iterations_ms: keep_all.then(|| samples.to_vec()),
            median_ci95: median_interval(&sorted).map(|(low, high)| [low, high]),
            cold_start: None,
            cpu_median: None,
            cpu_min: None,
        })
    }

    /// These statistics with the runs before them.
    pub fn after(self, cold_start: ColdStart) -> Timing {
        Timing {
            cold_start: Some(cold_start),
            ..self
        }
    }

    /// These statistics with the CPU time of each of their runs, in
    /// milliseconds; unchanged without one figure a run.
    pub fn with_cpu(self, cpu_ms: &[f64]) -> Timing {
        let every_run = !cpu_ms.is_empty() && cpu_ms.len() == self.iterations;
        Timing {
            cpu_median: every_run.then(|| median(cpu_ms)),
            cpu_min: every_run.then(|| cpu_ms.iter().copied().fold(f64::INFINITY, f64::min)),
            ..self
        }
    }

    /// Iterations per second at the mean time.
    pub fn throughput(&self) -> f64 {
        if self.mean > 0.0 {
            1000.0 / self.mean
        } else {
            f64::INFINITY
        }
    }
}

/// A distribution-free 95% confidence interval for the median of the
/// distribution `samples` were drawn from (see `median_interval_at`). `None`
/// for fewer than 6 samples, which no such interval covers.
pub fn median_interval(samples: &[f64]) -> Option<(f64, f64)> {
    median_interval_at(samples, 0.95)
}

/// A distribution-free `confidence` interval for the median: the order
/// statistics `X(j)` and `X(n+1-j)` with the largest `j` whose coverage,
/// `1 - 2 P(B < j)` for `B ~ Binomial(n, 1/2)`, is at least `confidence`.
/// `None` where even the whole range covers less (`1 - 2^(1-n)`).
pub fn median_interval_at(samples: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let j = median_rank(samples.len(), confidence)?;
    let n = samples.len();
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some((sorted[j - 1], sorted[n - j]))
}

/// The rank `j` (from 1) of `median_interval_at` for `n` samples, if any.
fn median_rank(n: usize, confidence: f64) -> Option<usize> {
    let tail = (1.0 - confidence) / 2.0;
    // P(B <= k), summed in logarithms: 2^-n underflows from n = 1075 on.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let (mut ln_choose, mut below) = (0.0f64, 0.0f64);
    let mut j = 0;
    for k in 0..n {
        below += (ln_choose + ln_half_n).exp();
        if below > tail {
            break;
        }
        j = k + 1;
        ln_choose += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
    }
    (j > 0).then_some(j)
}

/// The fewest samples whose `median_interval_at(confidence)` exists.
pub fn fewest_for_interval(confidence: f64) -> usize {
    (1..)
        .find(|n| median_rank(*n, confidence).is_some())
        .expect("an interval exists for enough samples")
}

/// How much the last tenth of the runs (in run order) is slower than the
/// first, in percent of the first tenth's median; `None` below 20 runs,
/// where a tenth would be one run and the figure the noise of two runs.
pub fn drift_percent(samples: &[f64]) -> Option<f64> {
    if samples.len() < 20 {
        return None;
    }
    let tenth = samples.len() / 10;
    let first = median(&samples[..tenth]);
    let last = median(&samples[samples.len() - tenth..]);
    (first > 0.0).then(|| (last / first - 1.0) * 100.0)
}

/// The median of non-empty `samples`, in any order.
pub fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile(&sorted, 50.0)
}

/// The spread of the runs: from the 10th to the 90th percentile, in percent of the median.
pub fn spread_percent(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = percentile(&sorted, 50.0);
    (median > 0.0).then(|| (percentile(&sorted, 90.0) - percentile(&sorted, 10.0)) / median * 100.0)
}

/// The `p`th percentile of sorted, non-empty `sorted`: the value at rank
/// `p/100 * (n-1)`, interpolated linearly between its neighbours.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let below = rank.floor() as usize;
    let above = rank.ceil() as usize;
    sorted[below] + (sorted[above] - sorted[below]) * (rank - below as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarises_samples() {
        let t = Timing::from_samples(&[4.0, 1.0, 3.0, 2.0], false).unwrap();
        assert_eq!((t.iterations, t.min, t.median, t.mean, t.max), (4, 1.0, 2.5, 2.5, 4.0));
        assert!((t.stddev - 1.25f64.sqrt()).abs() < 1e-12);
        assert_eq!(t.iterations_ms, None);
        assert_eq!(Timing::from_samples(&[2.0, 9.0, 1.0], false).unwrap().median, 2.0);
        assert!(Timing::from_samples(&[], false).is_none());
        let kept = Timing::from_samples(&[3.0, 1.0], true).unwrap();
        assert_eq!(kept.iterations_ms, Some(vec![3.0, 1.0]));
    }

    /// The ranks against the binomial sums done exactly (Python's `math.comb`):
    /// n = 6 → (1, 6), 10 → (2, 9), 24 → (7, 18), 100 → (40, 61), 1000 → (469, 532).
    #[test]
    fn the_median_interval_is_the_order_statistics_of_the_binomial() {
        for (n, low, high) in [(6, 1, 6), (10, 2, 9), (24, 7, 18), (100, 40, 61), (1000, 469, 532)] {
            // Samples 1..=n in reverse: the interval is their ranks.
            let samples: Vec<f64> = (1..=n).rev().map(f64::from).collect();
            assert_eq!(
                median_interval(&samples),
                Some((f64::from(low), f64::from(high))),
                "n = {n}"
            );
        }
        assert_eq!(median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0]), None);
        assert_eq!(fewest_for_interval(0.95), 6);
        assert_eq!(median_interval(&[]), None);
        let many: Vec<f64> = (0..200_000).map(f64::from).collect();
        let (low, high) = median_interval(&many).unwrap();
        assert!(
            low < 100_000.0 && high > 100_000.0 && high - low < 1000.0,
            "{low} {high}"
        );
    }

    /// Against `numpy.percentile(x, [50, 90, 99])` (method "linear").
    #[test]
    fn interpolates_percentiles_like_numpy() {
        let close = |t: &Timing, expected: [f64; 3]| {
            let got = [t.p50, t.p90, t.p99];
            assert!(got.iter().zip(expected).all(|(g, e)| (g - e).abs() < 1e-9), "{got:?}");
        };
        close(
            &Timing::from_samples(&[4.0, 1.0, 3.0, 2.0], false).unwrap(),
            [2.5, 3.7, 3.97],
        );
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        close(&Timing::from_samples(&hundred, false).unwrap(), [50.5, 90.1, 99.01]);
        let one = Timing::from_samples(&[7.0], false).unwrap();
        assert_eq!((one.p50, one.p90, one.p99), (7.0, 7.0, 7.0));
    }

    /// More sizes, against ranks computed independently with exact rational
    /// arithmetic in Python (no scipy on the machine):
    ///
    /// ```python
    /// from fractions import Fraction; from math import comb
    /// def ranks(n, conf=Fraction(95, 100)):
    ///     cdf, best = Fraction(0), None
    ///     for i in range(n // 2 + 1):
    ///         cdf += Fraction(comb(n, i), 2 ** n)
    ///         if cdf > (1 - conf) / 2: break
    ///         best = i + 1
    ///     return best and (best, n - best + 1)
    /// ```
    #[test]
    fn the_median_interval_matches_exact_ranks() {
        for (n, low, high) in [(7, 1, 7), (20, 6, 15), (30, 10, 21), (10000, 4902, 5099)] {
            let samples: Vec<f64> = (1..=n).map(f64::from).collect();
            assert_eq!(
                median_interval(&samples),
                Some((f64::from(low), f64::from(high))),
                "n = {n}"
            );
        }
    }

    /// The looks of `runner::sequential`, at confidences of 1 - 0.05/K,
    /// against the same exact ranks: `ranks(n, 1 - Fraction(5, 100 * K))`.
    #[test]
    fn the_median_interval_at_other_confidences_matches_exact_ranks() {
        let looks = 1.0 - 0.05 / 4.0;
        for (n, confidence, ranks) in [
            (7, looks, None),
            (8, looks, Some((1, 8))),
            (16, looks, Some((3, 14))),
            (32, looks, Some((9, 24))),
            (64, looks, Some((22, 43))),
            (8, 1.0 - 0.05 / 9.0, None),
            (9, 1.0 - 0.05 / 9.0, Some((1, 9))),
        ] {
            let samples: Vec<f64> = (1..=n).map(f64::from).collect();
            let expected = ranks.map(|(low, high): (i32, i32)| (f64::from(low), f64::from(high)));
            assert_eq!(median_interval_at(&samples, confidence), expected, "n = {n}");
        }
        assert_eq!(fewest_for_interval(looks), 8);
        assert_eq!(fewest_for_interval(1.0 - 0.05 / 9.0), 9);
    }

    #[test]
    fn median_ci_bounds_are_samples_around_the_median() {
        let samples: Vec<f64> = (0..20).map(|i| ((i * 7) % 20) as f64 + 0.5).collect();
        let timing = Timing::from_samples(&samples, false).unwrap();
        // Sorted, the samples are 0.5, 1.5, ..., 19.5: ranks 6 and 15.
        assert_eq!(timing.median_ci95, Some([5.5, 14.5]));
        let [low, high] = timing.median_ci95.unwrap();
        assert!(low <= timing.median && timing.median <= high);
        assert!(samples.contains(&low) && samples.contains(&high));
        assert_eq!(Timing::from_samples(&[1.0; 5], false).unwrap().median_ci95, None);
    }

    #[test]
    fn drift_compares_the_last_tenth_with_the_first() {
        let mut samples = vec![10.0; 20];
        assert_eq!(drift_percent(&samples), Some(0.0));
        samples[18] = 12.0;
        samples[19] = 12.0;
        assert!((drift_percent(&samples).unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(drift_percent(&samples[..19]), None);
    }

    #[test]
    fn spread_is_the_interdecile_range_over_the_median() {
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        // NumPy: percentile(1..100, [10, 50, 90]) = 10.9, 50.5, 90.1.
        let spread = spread_percent(&hundred).unwrap();
        assert!((spread - (90.1 - 10.9) / 50.5 * 100.0).abs() < 1e-9, "{spread}");
        assert_eq!(spread_percent(&[]), None);
    }

    #[test]
    fn the_cold_start_goes_into_the_same_object_and_back() {
        let timing = Timing::from_samples(&[2.0, 1.0], false).unwrap().after(ColdStart {
            load: 30.0,
            profiling: None,
            first_run: 5.0,
            warmup: vec![5.0, 3.0],
        });
        let json = serde_json::to_value(TimingReport {
            timing_ms: timing.clone(),
        })
        .unwrap();
        let object = &json["timing_ms"];
        assert_eq!(
            (object["load"].as_f64(), object["first_run"].as_f64()),
            (Some(30.0), Some(5.0))
        );
        assert_eq!(object["warmup"].as_array().unwrap().len(), 2);
        assert!(object.get("profiling").is_none() && object["median_ci95"].is_null());
        let back: TimingReport = serde_json::from_value(json).unwrap();
        assert_eq!(back.timing_ms, timing);
    }
}
