//! `mge profile` and `mge run --profile` on the real engine. The operators each
//! model executes come from `fixtures/operators.json`, recorded by
//! megenginelite's own profiler (`fixtures/record_operators.py`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;
use serde_json::Value;

/// Trace timestamps are rounded to nanoseconds; sums of rounded values may
/// differ from the rounded sum by that much.
const ROUNDING_US: f64 = 1e-3;

const ITERATIONS: u64 = 3;

fn recorded_models() -> Vec<Value> {
    let text = std::fs::read_to_string(root().join("fixtures/operators.json")).expect("fixtures/operators.json");
    let records: Value = serde_json::from_str(&text).expect("operators.json is JSON");
    records["models"].as_array().expect("models").clone()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// `mge profile` on a recorded model, its trace in `dir`; returns the report and the trace.
fn profile(model: &Value, dir: &Path, extra: &[&str]) -> (Value, Value) {
    let trace = dir.join("trace.json");
    let mut command = mge();
    command.args(["profile", model["file"].as_str().unwrap(), "-q", "--json"]);
    command.args(["--iter", &ITERATIONS.to_string(), "--warmup", "1", "-o"]);
    command.arg(&trace).args(extra);
    for spec in model["inputs"].as_array().unwrap() {
        command.args(["-i", spec.as_str().unwrap()]);
    }
    let (stdout, _) = run_expecting(&mut command, 0);
    (json_of(&stdout), read_json(&trace))
}

fn complete_events(trace: &Value) -> Vec<&Value> {
    trace["traceEvents"]
        .as_array()
        .expect("a traceEvents array")
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect()
}

/// Track names by tid, from the `thread_name` metadata events.
fn track_names(trace: &Value) -> BTreeMap<u64, String> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn span(event: &Value) -> (f64, f64) {
    let ts = event["ts"].as_f64().unwrap();
    (ts, ts + event["dur"].as_f64().unwrap())
}

/// Every operator the engine executes appears once per profiled run on each
/// engine track, with its name and type, inside the run's phase, named
/// `{runs} N` (`iteration N` for `mge profile`).
fn check_operator_events(model: &Value, trace: &Value, runs: &str) {
    let name = model["name"].as_str().unwrap();
    let expected: Vec<(u64, String, String)> = model["operators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["id"].as_u64().unwrap(),
                o["name"].as_str().unwrap().to_string(),
                o["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let tracks = track_names(trace);
    let events = complete_events(trace);
    let phase_tid = tracks
        .iter()
        .find(|(_, n)| *n == "mge phases")
        .map(|(t, _)| *t)
        .expect("a phase track");
    let engine_tracks: Vec<u64> = tracks.keys().copied().filter(|t| *t != phase_tid).collect();
    assert!(
        tracks.values().any(|n| n.starts_with("host ")) && tracks.values().any(|n| n.starts_with("device ")),
        "{name}: {tracks:?}"
    );
    for number in 1..=ITERATIONS {
        let iteration_name = format!("{runs} {number}");
        let phases: Vec<&&Value> = events
            .iter()
            .filter(|e| e["tid"] == phase_tid && e["name"] == iteration_name.as_str())
            .collect();
        assert_eq!(phases.len(), 1, "{name}: {iteration_name}");
        let (start, end) = span(phases[0]);
        for tid in &engine_tracks {
            let mut seen: Vec<(u64, String, String)> = events
                .iter()
                .filter(|e| e["tid"] == *tid && e["args"]["iteration"] == number)
                .map(|e| {
                    let (ts, te) = span(e);
                    assert!(e["dur"].as_f64().unwrap() >= 0.0 && ts >= 0.0, "{name}: {e}");
                    assert!(
                        ts >= start && te <= end + ROUNDING_US,
                        "{name}: {e} outside {iteration_name} {start}..{end}"
                    );
                    (
                        e["args"]["id"].as_u64().unwrap(),
                        e["name"].as_str().unwrap().to_string(),
                        e["cat"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            seen.sort();
            let mut wanted = expected.clone();
            wanted.sort();
            assert_eq!(seen, wanted, "{name}: {iteration_name} on track {}", tracks[tid]);
        }
    }
}

/// The phases on the phase track, in order and apart: as `expected` names
/// them, with the operators of the runs named `profiled` recorded.
fn check_phases(trace: &Value, expected: &[&str], profiled: &str) {
    let tracks = track_names(trace);
    let phase_tid = tracks
        .iter()
        .find(|(_, n)| *n == "mge phases")
        .map(|(t, _)| *t)
        .unwrap();
    let phases: Vec<&Value> = complete_events(trace)
        .into_iter()
        .filter(|e| e["tid"] == phase_tid)
        .collect();
    let names: Vec<&str> = phases.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, expected);
    for pair in phases.windows(2) {
        assert!(span(pair[0]).1 <= span(pair[1]).0, "{} overlaps {}", pair[0], pair[1]);
    }
    for phase in phases {
        let recorded = phase["name"].as_str().unwrap().starts_with(&format!("{profiled} "));
        assert_eq!(phase["args"]["operators_recorded"], recorded, "{phase}");
    }
}

/// `mge profile`'s phases: every timed iteration profiled.
const PROFILE_PHASES: [&str; 5] = ["load", "warm-up 1", "iteration 1", "iteration 2", "iteration 3"];

/// Sorted by time, shares adding up to 100% with the rows beyond --top.
fn check_table(report: &Value) -> Vec<&Value> {
    let rows: Vec<&Value> = report["rows"].as_array().expect("rows").iter().collect();
    let times: Vec<f64> = rows.iter().map(|r| r["time_ms"].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "not sorted: {times:?}");
    assert!(times.iter().all(|t| *t >= 0.0));
    let shares: f64 = rows.iter().map(|r| r["share"].as_f64().unwrap()).sum::<f64>()
        + report["rest"]["share"].as_f64().unwrap_or(0.0);
    assert!((shares - 100.0).abs() < 1e-6, "shares add up to {shares}");
    let operators: f64 = rows.iter().map(|r| r["time_ms"].as_f64().unwrap()).sum::<f64>()
        + report["rest"]["time_ms"].as_f64().unwrap_or(0.0);
    let total = report["operator_ms"].as_f64().unwrap();
    assert!(
        (operators - total).abs() <= 1e-9 * total.max(1.0),
        "{operators} vs {total}"
    );
    assert_eq!(report["profiled_iterations"], ITERATIONS);
    assert_eq!(report["iteration_ms"]["iterations"], ITERATIONS);
    rows
}

#[test]
fn every_executed_operator_appears_once_per_iteration() {
    for model in recorded_models() {
        let dir = tempfile::tempdir().unwrap();
        let (report, trace) = profile(&model, dir.path(), &["--top", "1000"]);
        check_operator_events(&model, &trace, "iteration");
        check_phases(&trace, &PROFILE_PHASES, "iteration");
        let rows = check_table(&report);
        let mut ids: Vec<u64> = rows.iter().map(|r| r["id"].as_u64().unwrap()).collect();
        let mut expected: Vec<u64> = model["operators"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["id"].as_u64().unwrap())
            .collect();
        ids.sort_unstable();
        expected.sort_unstable();
        assert_eq!(ids, expected, "{}", model["name"]);
    }
}

#[test]
fn a_convolution_is_in_the_table_with_its_flops() {
    let models = recorded_models();
    let conv = models.iter().find(|m| m["name"] == "conv_float").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (report, _) = profile(conv, dir.path(), &["--top", "3"]);
    let rows = check_table(&report);
    assert_eq!(rows.len(), 3);
    assert_eq!(report["rest"]["rows"], 7);
    let convolutions: Vec<&&Value> = model_rows(&rows, "ConvolutionForward");
    // The engine's footprint for a 3x3 conv of 3->8 channels on 16x16: 2*3*3*3*8*16*16.
    assert_eq!(convolutions[0]["flops"], 110592.0);
    assert_eq!(convolutions[0]["out_shapes"], serde_json::json!([[1, 8, 16, 16]]));
}

fn model_rows<'a>(rows: &'a [&'a Value], op_type: &str) -> Vec<&'a &'a Value> {
    let found: Vec<&&Value> = rows.iter().filter(|r| r["type"] == op_type).collect();
    assert!(!found.is_empty(), "no {op_type} row in {rows:?}");
    found
}

#[test]
fn by_type_aggregates_the_operators_of_each_type() {
    for model in recorded_models() {
        let dir = tempfile::tempdir().unwrap();
        let (report, _) = profile(&model, dir.path(), &["--by", "type"]);
        let rows = check_table(&report);
        let mut expected: BTreeMap<String, u64> = BTreeMap::new();
        for operator in model["operators"].as_array().unwrap() {
            *expected
                .entry(operator["type"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
        let counted: BTreeMap<String, u64> = rows
            .iter()
            .map(|r| {
                assert_eq!(r["name"], r["type"]);
                (r["type"].as_str().unwrap().to_string(), r["count"].as_u64().unwrap())
            })
            .collect();
        assert_eq!(counted, expected, "{}", model["name"]);
        assert_eq!(report["by"], "type");
    }
}

#[test]
fn run_writes_the_same_trace_with_profile() {
    let models = recorded_models();
    let model = models.iter().find(|m| m["name"] == "two_inputs").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("run.trace.json");
    let mut command = mge();
    command.args([
        "run",
        "fixtures/two_inputs.mge",
        "-i",
        "fixtures/feeds/two_inputs.npz",
        "-q",
        "--json",
    ]);
    command
        .args(["--iter", &ITERATIONS.to_string(), "--profile"])
        .arg(&trace);
    let (stdout, _) = run_expecting(&mut command, 0);
    let report = json_of(&stdout);
    assert_eq!(report["timing_ms"]["iterations"], ITERATIONS);
    assert_eq!(report["profile"]["profiled_runs"], ITERATIONS);
    let trace = read_json(&trace);
    // The timed runs are not profiled: a weight-sharing copy's are, after them.
    check_operator_events(model, &trace, "profiled run");
    let phases = [
        "load",
        "warm-up 1",
        "iteration 1",
        "iteration 2",
        "iteration 3",
        "load of the profiled copy",
        "profiled warm-up 1",
        "profiled run 1",
        "profiled run 2",
        "profiled run 3",
    ];
    check_phases(&trace, &phases, "profiled run");
}

#[test]
fn the_trace_defaults_to_the_model_stem_and_no_engine_file_is_left() {
    let cwd = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut command = mge();
    command.current_dir(cwd.path()).env("TMPDIR", scratch.path());
    command
        .args(["profile", "-q", "--iter", "2"])
        .arg(root().join("fixtures/conv_float.mge"));
    let (stdout, _) = run_expecting(&mut command, 0);
    assert!(stdout.contains("ConvolutionForward"), "{stdout}");
    assert!(stdout.contains("conv_float.trace.json"), "{stdout}");
    let trace = read_json(&cwd.path().join("conv_float.trace.json"));
    assert!(!complete_events(&trace).is_empty());
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let written: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert_eq!(written.len(), 1, "{written:?}");
}

#[test]
fn user_errors_are_short_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing_folder = dir.path().join("missing/trace.json");
    let never = dir.path().join("never.json");
    let [missing_folder_arg, folder_arg, never_arg] =
        [&missing_folder, &dir.path().to_path_buf(), &never].map(|p| p.display().to_string());
    let cases: [(&[&str], &str); 5] = [
        (
            &["profile", "fixtures/conv_float.mge", "-o", &missing_folder_arg],
            "cannot write the trace",
        ),
        (
            &["profile", "fixtures/conv_float.mge", "-o", &folder_arg],
            "is a folder",
        ),
        (
            &["run", "fixtures/conv_float.mge", "--profile", &missing_folder_arg],
            "cannot write the trace",
        ),
        (
            &[
                "profile",
                "fixtures/conv_float.mge",
                "-o",
                &never_arg,
                "--record-comp-seq",
                "1",
            ],
            "--record-comp-seq cannot be profiled",
        ),
        (&["profile", "fixtures/not_a_model.mge", "-o", &never_arg], "mge: error"),
    ];
    for (args, message) in cases {
        let (stdout, stderr) = run_expecting(mge().args(args).arg("-q"), 2);
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(stderr.lines().count() <= 2, "{args:?}: {stderr}");
    }
    assert!(!missing_folder.exists() && !never.exists());
    let (_, stderr) = run_expecting(mge().args(["profile", "fixtures/conv_float.mge", "--by", "layer"]), 2);
    assert!(stderr.contains("--by"), "{stderr}");
}
