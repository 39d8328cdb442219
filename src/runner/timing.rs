//! Summary statistics of per-iteration times.

use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Timing {
    pub iterations: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
    /// Population standard deviation.
    pub stddev: f64,
}

impl Timing {
    /// Summarises samples in milliseconds; `None` for no samples.
    pub fn from_samples(samples: &[f64]) -> Option<Timing> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let variance = sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        Some(Timing {
            iterations: n,
            min: sorted[0],
            median,
            mean,
            max: sorted[n - 1],
            stddev: variance.sqrt(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarises_samples() {
        let t = Timing::from_samples(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((t.iterations, t.min, t.median, t.mean, t.max), (4, 1.0, 2.5, 2.5, 4.0));
        assert!((t.stddev - 1.25f64.sqrt()).abs() < 1e-12);
        assert_eq!(Timing::from_samples(&[2.0, 9.0, 1.0]).unwrap().median, 2.0);
        assert!(Timing::from_samples(&[]).is_none());
    }
}
