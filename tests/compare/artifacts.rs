//! Engine artifacts written elsewhere, read by `mge`: raw io dumps and profile
//! files that megenginelite wrote (`fixtures/deploy/`, with MegEngine's own
//! analysis of them in `fixtures/deploy_manifest.json`).

use std::path::Path;

use crate::common::*;
use serde_json::Value;

fn compare_json(a: &str, b: &str, code: i32) -> Value {
    let (stdout, _) = run_expecting(mge().args(["compare", a, b, "--json", "--maxerr", "1e-3"]), code);
    json_of(&stdout)
}

/// megenginelite's raw dumps of divergence_a and _b: the weight that differs is
/// named with the operator reading it, and the first computed var that
/// diverges is the changed layer's, as compare_binary_iodump.py's order finds.
#[test]
fn raw_dumps_name_the_changed_constant_and_the_first_diverging_operator() {
    let manifest = deploy_manifest();
    let case = &manifest["io_dump_divergence"];
    let report = compare_json(case["a"].as_str().unwrap(), case["b"].as_str().unwrap(), 1);
    let rows = report["tensors"].as_array().unwrap();
    let failing: Vec<&str> = rows
        .iter()
        .filter(|row| row["status"] != "pass")
        .map(|row| row["name"].as_str().unwrap())
        .collect();
    let dumped = manifest["io_dumps"].as_array().unwrap();
    let a = dumped.iter().find(|dump| dump["name"] == "divergence_a").unwrap();
    // The var of each file the tool's rule (max_err 1e-3) fails, in file order.
    let expected: Vec<&str> = case["failing_files_sorted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| {
            let entry = a["files_sorted"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["file"] == *file)
                .unwrap();
            entry["var_name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(failing, expected, "{report}");
    let constant = &case["first_failing"];
    let sources = report["differing_sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1, "{report}");
    assert_eq!(sources[0]["var"], constant["var_name"]);
    assert_eq!(sources[0]["type"], "ImmutableTensor");
    let computed = &case["first_failing_computed"];
    assert_eq!(sources[0]["readers"], serde_json::json!([computed["owner_operator"]]));
    let first = &report["first_divergence"];
    assert_eq!(first["operator"], computed["owner_operator"], "{report}");
    assert_eq!(first["var"], computed["var_name"]);
    assert_eq!(first["type"], computed["owner_type"]);
    // The same layer the fixture generator changed.
    assert_eq!(first["operator"], manifest_changed_layer());
}

fn manifest_changed_layer() -> Value {
    manifest()["divergence"]["changed_layer"]["operator"].clone()
}

/// A raw dump megenginelite wrote and an io dump of ours of the same run pair
/// var by var and agree; so do ours of both models, as the raw ones do.
#[test]
fn raw_dumps_compare_exactly_as_our_own() {
    let manifest = deploy_manifest();
    let dir = tempfile::tempdir().unwrap();
    for dump in manifest["io_dumps"].as_array().unwrap() {
        let ours = dir.path().join(dump["name"].as_str().unwrap());
        let mut command = mge();
        command.args([
            "dump",
            dump["model_file"].as_str().unwrap(),
            "-q",
            "--threads",
            "1",
            "--io",
        ]);
        command.arg(&ours);
        for spec in dump["inputs"].as_array().unwrap() {
            command.args(["-i", spec.as_str().unwrap()]);
        }
        run_expecting(&mut command, 0);
        let raw = dump["folder"].as_str().unwrap();
        let report = compare_json(raw, ours.to_str().unwrap(), 0);
        let names: Vec<&str> = report["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        let mut expected: Vec<&str> = dump["files_sorted"]
            .as_array()
            .unwrap()
            .iter()
            .map(|file| file["var_name"].as_str().unwrap())
            .collect();
        let mut listed = names.clone();
        listed.sort_unstable();
        expected.sort_unstable();
        assert_eq!(listed, expected, "{report}");
        assert!(report["first_divergence"].is_null(), "{report}");
    }
    let ours = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let raw = compare_json(
        "fixtures/deploy/iodump/divergence_a",
        "fixtures/deploy/iodump/divergence_b",
        1,
    );
    let own = compare_json(&ours("divergence_a"), &ours("divergence_b"), 1);
    assert_eq!(raw["first_divergence"], own["first_divergence"]);
    assert_eq!(raw["differing_sources"], own["differing_sources"]);
}

#[test]
fn dump_convert_writes_a_raw_dump_as_an_io_dump() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("converted");
    let (stdout, _) = run_expecting(
        mge()
            .args(["dump", "--convert", "fixtures/deploy/iodump/conv_float", "--io"])
            .arg(&out),
        0,
    );
    assert!(stdout.contains("9 vars"), "{stdout}");
    let index: Value = serde_json::from_str(&std::fs::read_to_string(out.join("index.json")).unwrap()).unwrap();
    let manifest = deploy_manifest();
    let dump = &manifest["io_dumps"][0];
    for (var, file) in index["vars"]
        .as_array()
        .unwrap()
        .iter()
        .zip(dump["files_sorted"].as_array().unwrap())
    {
        assert_eq!(var["name"], file["var_name"]);
        assert_eq!(var["operator"], file["owner_operator"]);
        assert_eq!(var["type"], file["owner_type"]);
        assert_eq!(var["shape"], file["shape"]);
    }
    // The output's values, as megenginelite returned them.
    let feat = index["vars"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "feat")
        .unwrap();
    let written = read_f32(&out.join(feat["file"].as_str().unwrap()));
    let expected: Vec<f32> = dump["outputs"]["feat"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(written.iter().copied().collect::<Vec<f32>>(), expected);
    // What is not a raw dump is refused in one line.
    let (_, stderr) = run_expecting(
        mge()
            .args(["dump", "--convert", "fixtures", "--io"])
            .arg(dir.path().join("x")),
        2,
    );
    assert!(stderr.contains("fixtures is not a raw io dump"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// `--analyze` on profiles megenginelite wrote gives MegEngine's own analysis:
/// the totals, the top operators by device time, and the per-type sums.
#[test]
fn profile_analyze_finds_what_megengines_analyzer_finds() {
    let manifest = deploy_manifest();
    let dir = tempfile::tempdir().unwrap();
    for recorded in manifest["profiles"].as_array().unwrap() {
        let trace = dir.path().join("trace.json");
        let file = recorded["file"].as_str().unwrap();
        assert_totals_and_top_operators(recorded, file, &trace);
        assert_sums_by_type(recorded, file, &trace);
        let events = json_of(&std::fs::read_to_string(&trace).unwrap());
        let operators = events["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] != "mge")
            .count();
        assert!(
            operators >= recorded["comp_seq"].as_array().unwrap().len(),
            "{operators}"
        );
    }
}

/// Seconds as the manifest records them, in milliseconds.
fn ms(seconds: &Value) -> f64 {
    seconds.as_f64().unwrap() * 1e3
}

/// The same time, but for the rounding of its sums.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// `--analyze` of the profile `file` gives the `recorded` analysis's total
/// device and host times and its top operators by device time.
fn assert_totals_and_top_operators(recorded: &Value, file: &str, trace: &Path) {
    let (stdout, _) = run_expecting(
        mge()
            .args(["profile", "--analyze", file, "--top", "100", "--json", "-o"])
            .arg(trace),
        0,
    );
    let report = json_of(&stdout);
    assert!(
        close(
            report["operator_ms"].as_f64().unwrap(),
            ms(&recorded["total_device_time_s"])
        ),
        "{report}"
    );
    assert!(
        close(
            report["operator_host_ms"].as_f64().unwrap(),
            ms(&recorded["total_host_time_s"])
        ),
        "{report}"
    );
    let rows = report["rows"].as_array().unwrap();
    for (rank, expected) in recorded["top3_device"].as_array().unwrap().iter().enumerate() {
        let time = ms(&expected["time_s"]);
        assert!(
            close(rows[rank]["time_ms"].as_f64().unwrap(), time),
            "#{rank}: {} vs {expected}",
            rows[rank]
        );
        // Operators of equal time may come in either order.
        let tied: Vec<&Value> = rows
            .iter()
            .filter(|row| close(row["time_ms"].as_f64().unwrap(), time))
            .collect();
        assert!(
            tied.iter()
                .any(|row| row["name"] == expected["name"] && row["type"] == expected["type"]),
            "{expected} among {tied:?}"
        );
    }
}

/// `--analyze --aggregate` of the profile `file` gives the `recorded`
/// analysis's count and device time of each operator type.
fn assert_sums_by_type(recorded: &Value, file: &str, trace: &Path) {
    let (stdout, _) = run_expecting(
        mge()
            .args([
                "profile",
                "--analyze",
                file,
                "--aggregate",
                "--top",
                "100",
                "--json",
                "-o",
            ])
            .arg(trace),
        0,
    );
    let by_type = json_of(&stdout);
    for expected in recorded["device_time_by_type"].as_array().unwrap() {
        let row = by_type["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["name"] == expected["type"])
            .unwrap();
        assert_eq!(row["count"], expected["count"]);
        assert!(
            close(row["time_ms"].as_f64().unwrap(), ms(&expected["time_s"])),
            "{row} vs {expected}"
        );
    }
}

/// profile_analyze's filters: `--type` exactly, `--opr-name` a regex from the
/// name's start, `--min-time` in milliseconds, `--order-by`.
#[test]
fn profile_analyze_filters_as_profile_analyze() {
    let manifest = deploy_manifest();
    let recorded = &manifest["profiles"][0];
    let file = recorded["file"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rows = |extra: &[&str]| -> Vec<Value> {
        let mut command = mge();
        command
            .args(["profile", "--analyze", file, "--json", "-o"])
            .arg(dir.path().join("t.json"))
            .args(extra);
        let (stdout, _) = run_expecting(&mut command, 0);
        json_of(&stdout)["rows"].as_array().unwrap().clone()
    };
    let reduces = rows(&["--type", "Reduce"]);
    assert_eq!(reduces.len(), 2);
    assert!(reduces.iter().all(|row| row["type"] == "Reduce"));
    let named = rows(&["--opr-name", "conv"]);
    assert_eq!(named.len(), 1);
    assert_eq!(named[0]["name"], recorded["top3_device"][0]["name"]);
    assert!(rows(&["--opr-name", "onv"]).is_empty(), "re.match anchors at the start");
    let slowest_ms = ms(&recorded["top3_device"][0]["time_s"]);
    assert_eq!(rows(&["--min-time", &slowest_ms.to_string()]).len(), 1);
    let by_name: Vec<String> = rows(&["--order-by", "name"])
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    let mut sorted = by_name.clone();
    sorted.sort();
    assert_eq!(by_name, sorted);
    let (_, stderr) = run_expecting(mge().args(["profile", "--analyze", "fixtures/manifest.json"]), 2);
    assert!(stderr.contains("not the JSON MegEngine's profiler writes"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// `--analyze` writes a trace only with `-o` (nothing lands in the current
/// folder unasked), and with filters every share is of all operator time,
/// the total the report gives, with what the filters kept on a line of its
/// own: the times megenginelite's profile holds (MegEngine's profile_analyze).
#[test]
fn profile_analyze_writes_no_trace_unasked_and_shares_one_total() {
    let manifest = deploy_manifest();
    let recorded = &manifest["profiles"][0];
    let file = root().join(recorded["file"].as_str().unwrap());
    let here = tempfile::tempdir().unwrap();
    let mut command = mge();
    command
        .current_dir(here.path())
        .args(["profile", "--analyze"])
        .arg(&file)
        .args(["--type", "Reduce", "--json"]);
    let report = json_of(&run_expecting(&mut command, 0).0);
    assert_eq!(std::fs::read_dir(here.path()).unwrap().count(), 0, "a file was written");
    assert!(report["trace"].is_null(), "{report}");
    let total_ms = ms(&recorded["total_device_time_s"]);
    assert!(close(report["operator_ms"].as_f64().unwrap(), total_ms), "{report}");
    for row in report["rows"].as_array().unwrap() {
        let share = 100.0 * row["time_ms"].as_f64().unwrap() / total_ms;
        assert!(close(row["share"].as_f64().unwrap(), share), "{row}");
    }
    let reduce = recorded["device_time_by_type"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["type"] == "Reduce")
        .unwrap();
    let selected = &report["selected"];
    let reduce_ms = ms(&reduce["time_s"]);
    assert_eq!(selected["operators"], reduce["count"], "{selected}");
    assert_eq!(
        selected["of"],
        recorded["comp_seq"].as_array().unwrap().len(),
        "{selected}"
    );
    assert!(close(selected["time_ms"].as_f64().unwrap(), reduce_ms), "{selected}");
    assert!(
        close(selected["share"].as_f64().unwrap(), 100.0 * reduce_ms / total_ms),
        "{selected}"
    );
    let mut command = mge();
    command
        .current_dir(here.path())
        .args(["profile", "--analyze"])
        .arg(&file)
        .args(["--type", "Reduce"]);
    let text = run_expecting(&mut command, 0).0;
    assert!(text.contains("selected 2 of "), "{text}");
    assert!(!text.contains("trace "), "{text}");
    assert_eq!(std::fs::read_dir(here.path()).unwrap().count(), 0, "a file was written");
}
