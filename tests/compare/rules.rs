//! The comparison rules (`--maxerr NAME:X`, `--stat`, `--allow-outliers`,
//! `--topk`, `--expect BUNDLE.npz`) in compare, run and check. The data is
//! written here with NumPy's format, or is the fixtures' references; each
//! expected verdict follows from how the data was changed.

use std::path::Path;

use crate::common::*;
use ndarray::{ArrayD, IxDyn};
use ndarray_npy::{NpzWriter, WriteNpyExt};
use serde_json::Value;

fn save(path: &Path, array: &ArrayD<f32>) {
    array.write_npy(std::fs::File::create(path).unwrap()).unwrap();
}

/// 100 values from 0 to 99, and a copy whose first `changed` values are off by `by`.
fn pair(dir: &Path, changed: usize, by: f32) -> (String, String) {
    let reference = ArrayD::from_shape_vec(IxDyn(&[4, 25]), (0..100).map(|i| i as f32).collect()).unwrap();
    let mut off = reference.clone();
    off.iter_mut().take(changed).for_each(|value| *value += by);
    let (a, b) = (dir.join("a.npy"), dir.join("b.npy"));
    save(&a, &off);
    save(&b, &reference);
    (a.to_string_lossy().into_owned(), b.to_string_lossy().into_owned())
}

fn verdict(a: &str, b: &str, extra: &[&str]) -> i32 {
    let output = mge().args(["compare", a, b]).args(extra).output().unwrap();
    output.status.code().unwrap()
}

#[test]
fn outliers_are_a_fraction_of_the_elements_left_out() {
    let dir = tempfile::tempdir().unwrap();
    // 3 of 100 elements off by 0.5: values 0, 1 and 2, AssertEqual errors 0.5, 0.5 and 0.25.
    let (a, b) = pair(dir.path(), 3, 0.5);
    assert_eq!(verdict(&a, &b, &[]), 1);
    assert_eq!(verdict(&a, &b, &["--allow-outliers", "0.03"]), 0);
    assert_eq!(verdict(&a, &b, &["--allow-outliers", "0.02"]), 1);
    let (stdout, _) = run_expecting(mge().args(["compare", &a, &b, "--json"]), 1);
    assert_eq!(json_of(&stdout)["tensors"][0]["mismatches"], 3);
    // How many elements it left out is said: the 3 largest errors at 0.03.
    let (stdout, _) = run_expecting(mge().args(["compare", &a, &b, "--json", "--allow-outliers", "0.03"]), 0);
    let row = &json_of(&stdout)["tensors"][0];
    assert_eq!(row["left_out"], serde_json::json!({"elements": 3, "of": 100}), "{row}");
    let (stdout, _) = run_expecting(mge().args(["compare", &a, &b, "--allow-outliers", "0.05"]), 0);
    assert!(
        stdout.contains("3 of 100 elements left out"),
        "only errors are left out: {stdout}"
    );
    // allclose: the elements outside the tolerance it excuses, at most the allowance.
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            &a,
            &b,
            "--json",
            "--allow-outliers",
            "0.02",
            "--atol",
            "0.3",
            "--rtol",
            "0",
        ]),
        1,
    );
    assert_eq!(json_of(&stdout)["tensors"][0]["left_out"]["elements"], 2);
    let (stdout, _) = run_expecting(
        mge()
            .args(["run", "fixtures/conv_float.mge", "-q", "--iter", "1"])
            .args([
                "-i",
                "fixtures/feeds/conv_data_24.npy",
                "--expect",
                "feat:fixtures/ref/conv_float__conv_data/feat.npy",
                "--allow-outliers",
                "0.5",
                "--maxerr",
                "0.02",
            ]),
        0,
    );
    assert!(
        stdout.contains("(maxerr 0.02, 4 of 8 elements left out) passed"),
        "{stdout}"
    );
}

#[test]
fn the_mean_and_the_median_of_the_element_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = pair(dir.path(), 3, 0.5);
    // Mean error: (0.5 + 0.5 + 0.25) / 100 = 0.0125; median: 0.
    assert_eq!(verdict(&a, &b, &["--stat", "mean", "--maxerr", "0.013"]), 0);
    assert_eq!(verdict(&a, &b, &["--stat", "mean", "--maxerr", "0.012"]), 1);
    assert_eq!(verdict(&a, &b, &["--stat", "median"]), 0);
    let (stdout, _) = run_expecting(
        mge().args(["compare", &a, &b, "--json", "--stat", "mean", "--maxerr", "0.02"]),
        0,
    );
    let row = &json_of(&stdout)["tensors"][0];
    assert!((row["stat_err"].as_f64().unwrap() - 0.0125).abs() < 1e-9, "{row}");
    assert_eq!(row["err"], 0.5);
    let (_, stderr) = run_expecting(mge().args(["compare", &a, &b, "--stat", "mean", "--atol", "1"]), 2);
    assert!(stderr.contains("--stat mean"), "{stderr}");
}

#[test]
fn a_named_tolerance_holds_for_its_tensor_only() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = pair(dir.path(), 1, 0.5);
    assert_eq!(verdict(&a, &b, &["--maxerr", "a.npy:0.6"]), 0);
    assert_eq!(verdict(&a, &b, &["--maxerr", "a:0.6"]), 0);
    assert_eq!(verdict(&a, &b, &["--maxerr", "0.6", "--maxerr", "a:0.1"]), 1);
    let (_, stderr) = run_expecting(mge().args(["compare", &a, &b, "--maxerr", "nope:1"]), 2);
    assert!(stderr.contains("no tensor is named 'nope'"), "{stderr}");
}

#[test]
fn top_k_judges_a_classifier_by_its_best_classes() {
    let dir = tempfile::tempdir().unwrap();
    // Scores of 4 rows of 25 classes; B's values shifted a little keep the order.
    let reference = ArrayD::from_shape_vec(IxDyn(&[4, 25]), (0..100).map(|i| ((i * 7) % 25) as f32).collect()).unwrap();
    let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    save(&a, &reference.mapv(|v| v * 1.1));
    save(&b, &reference);
    let (a, b) = (a.to_string_lossy().into_owned(), b.to_string_lossy().into_owned());
    assert_eq!(verdict(&a, &b, &[]), 1);
    assert_eq!(verdict(&a, &b, &["--topk", "5"]), 0);
    // Swapping the two best classes of row 2 changes its top-1, not its top-5.
    let mut swapped = reference.clone();
    let row: Vec<f32> = (0..25).map(|j| reference[[2, j]]).collect();
    let best = (0..25).max_by(|&x, &y| row[x].total_cmp(&row[y])).unwrap();
    let second = (0..25)
        .filter(|&j| j != best)
        .max_by(|&x, &y| row[x].total_cmp(&row[y]))
        .unwrap();
    swapped[[2, best]] = row[second];
    swapped[[2, second]] = row[best];
    save(Path::new(&a), &swapped);
    assert_eq!(verdict(&a, &b, &["--topk", "5"]), 0);
    let (stdout, _) = run_expecting(mge().args(["compare", &a, &b, "--topk", "1", "--json"]), 1);
    let topk = &json_of(&stdout)["tensors"][0]["topk"];
    assert_eq!(
        (topk["rows"].as_u64(), topk["differing_rows"].as_u64()),
        (Some(4), Some(1)),
        "{topk}"
    );
    assert_eq!(topk["first_difference"]["row"], serde_json::json!([2]));
}

/// `--expect BUNDLE.npz`: every output against the array of its name, here
/// megenginelite's references of the two outputs of image_uint8.
#[test]
fn run_expects_a_bundle_of_every_output() {
    let manifest = manifest();
    let case = entries(&manifest, "cases")
        .iter()
        .find(|case| case["outputs"].as_object().unwrap().len() == 2)
        .expect("a case with two outputs");
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, scale: f32| {
        let path = dir.path().join(name);
        let mut npz = NpzWriter::new(std::fs::File::create(&path).unwrap());
        for (output, reference) in case["outputs"].as_object().unwrap() {
            let values = read_f32(&root().join(reference["file"].as_str().unwrap()));
            npz.add_array(output.as_str(), &values.mapv(|v| v * scale)).unwrap();
        }
        npz.finish().unwrap();
        path
    };
    let run = |bundle: &Path, code: i32, extra: &[&str]| {
        let mut command = mge();
        command.args([
            "run",
            case["model_file"].as_str().unwrap(),
            "-q",
            "--iter",
            "1",
            "--json",
            "--expect",
        ]);
        command.arg(bundle).args(extra);
        for spec in case["inputs"].as_array().unwrap() {
            command.args(["-i", spec.as_str().unwrap()]);
        }
        if case["resize_input"].as_bool().unwrap() {
            command.arg("--resize-input");
        }
        json_of(&run_expecting(&mut command, code).0)
    };
    let report = run(&write("same.npz", 1.0), 0, &[]);
    assert_eq!(report["expect"].as_array().unwrap().len(), 2, "{report}");
    let off = write("off.npz", 1.5);
    let report = run(&off, 1, &[]);
    assert!(
        report["expect"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["passed"] == false),
        "{report}"
    );
    // A looser bound for one output only does not pass the other.
    let first = case["outputs"].as_object().unwrap().keys().next().unwrap();
    let report = run(&off, 1, &["--maxerr", &format!("{first}:1e9")]);
    let passed: Vec<bool> = report["expect"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(passed.iter().filter(|p| **p).count(), 1, "{report}");
}

/// `check` with rules compares the container's expected values itself. The
/// wrong testcase of conv_float_tc3_wrong expects one of its 8 values 1 off
/// (what the engine's AssertEqual reports for it: error 1 at index {0,0}).
#[test]
fn check_judges_by_the_rules_when_given() {
    let container = "fixtures/conv_float_tc3_wrong.mge";
    let check = |extra: &[&str], code: i32| -> Value {
        let (stdout, _) = run_expecting(mge().args(["check", container, "--json"]).args(extra), code);
        json_of(&stdout)
    };
    let engine = check(&[], 1);
    assert_eq!(engine["failed"], 1);
    let rules = check(&["--maxerr", "1e-4"], 1);
    let wrong = &rules["models"][0]["testcases"][1];
    assert_eq!(wrong["status"], "failed", "{rules}");
    assert!(
        (wrong["outputs"][0]["err"].as_f64().unwrap() - 1.0).abs() < 1e-3,
        "{wrong}"
    );
    // One element of eight is an outlier at 0.125; the median error is that of the right ones.
    let outliers = check(&["--allow-outliers", "0.125"], 0);
    assert_eq!(outliers["passed"], 3);
    let left_out = &outliers["models"][0]["testcases"][1]["outputs"][0]["left_out"];
    assert_eq!(*left_out, serde_json::json!({"elements": 1, "of": 8}), "{outliers}");
    let (stdout, _) = run_expecting(mge().args(["check", container, "--allow-outliers", "0.125"]), 0);
    assert!(
        stdout.contains("#1: passed  'feat' err 0 (maxerr 1e-4, 1 of 8 elements left out)"),
        "{stdout}"
    );
    assert_eq!(check(&["--stat", "median"], 0)["passed"], 3);
    assert_eq!(check(&["--maxerr", "feat:1.01"], 0)["passed"], 3);
    // A name no output has: the model cannot be checked, and nothing else was to be.
    let (stdout, _) = run_expecting(mge().args(["check", container, "--maxerr", "nope:1"]), 2);
    assert!(stdout.contains("no tensor is named 'nope'"), "{stdout}");
}
