//! Bencher Metric Format (`--bmf FILE`): a benchmark per model, its
//! `latency` the median of its timed runs with that median's 95% interval as
//! `lower_value` and `upper_value`, in nanoseconds, the unit of Bencher's
//! built-in `latency` measure. Where the runs are too few for a 95% interval
//! the bounds are left out, which Bencher accepts (only `value` is required).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{json, Map, Value};

use crate::output_files::{claim_file, write_atomically};

/// One benchmark's latency, in milliseconds as `mge` measures it.
pub struct Latency {
    /// The benchmark's name: the model, or a pair's path within its folders.
    pub name: String,
    pub median_ms: f64,
    /// The median's 95% interval; `None` with too few runs for one.
    pub interval_ms: Option<[f64; 2]>,
}

/// Claims `--bmf FILE` before any work, as every report file is.
pub fn claim(path: Option<&Path>) -> Result<Option<PathBuf>> {
    if let Some(path) = path {
        claim_file("--bmf", path).with_context(|| format!("--bmf {}", path.display()))?;
    }
    Ok(path.map(Path::to_path_buf))
}

/// Writes `latencies` to `path`, whole or not at all.
pub fn write(path: Option<&Path>, latencies: &[Latency]) -> Result<()> {
    match path {
        Some(path) => write_atomically(path, document(latencies).as_bytes()).context("--bmf"),
        None => Ok(()),
    }
}

/// Milliseconds to Bencher's nanoseconds.
const NS_PER_MS: f64 = 1e6;

fn document(latencies: &[Latency]) -> String {
    let benchmarks: Map<String, Value> = latencies
        .iter()
        .map(|latency| {
            let mut measure = json!({ "value": latency.median_ms * NS_PER_MS });
            if let Some([low, high]) = latency.interval_ms {
                measure["lower_value"] = json!(low * NS_PER_MS);
                measure["upper_value"] = json!(high * NS_PER_MS);
            }
            (latency.name.clone(), json!({ "latency": measure }))
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&Value::Object(benchmarks)).expect("JSON of numbers and names");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_is_in_nanoseconds_and_bounds_only_where_there_is_an_interval() {
        let text = document(&[
            Latency {
                name: "a/m.mge".into(),
                median_ms: 1.5,
                interval_ms: Some([1.25, 2.0]),
            },
            Latency {
                name: "few.mge".into(),
                median_ms: 0.002,
                interval_ms: None,
            },
        ]);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            parsed,
            json!({
                "a/m.mge": {"latency": {"value": 1.5e6, "lower_value": 1.25e6, "upper_value": 2.0e6}},
                "few.mge": {"latency": {"value": 2000.0}},
            })
        );
    }
}
