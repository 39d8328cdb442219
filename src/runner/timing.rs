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
        })
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
/// distribution `samples` were drawn from: the order statistics `X(j)` and
/// `X(n+1-j)` with the largest `j` whose coverage, `1 - 2 P(B < j)` for
/// `B ~ Binomial(n, 1/2)`, is at least 95%. `None` for fewer than 6 samples,
/// which no such interval covers.
pub fn median_interval(samples: &[f64]) -> Option<(f64, f64)> {
    let n = samples.len();
    // P(B <= k), summed in logarithms: 2^-n underflows from n = 1075 on.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let (mut ln_choose, mut below) = (0.0f64, 0.0f64);
    let mut j = 0;
    for k in 0..n {
        below += (ln_choose + ln_half_n).exp();
        if below > 0.025 {
            break;
        }
        j = k + 1;
        ln_choose += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
    }
    if j == 0 {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some((sorted[j - 1], sorted[n - j]))
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
}
