//! `mge compare` on files written here with NumPy's format (ndarray-npy); the
//! expected verdicts follow from how each file was changed.

mod artifacts;
mod by_layer;
mod by_op;
mod folders;
mod rules;
mod structure;
mod timing;
mod two_runs;

use std::path::Path;

use crate::common::*;
use ndarray::{arr1, ArrayD, IxDyn};
use ndarray_npy::{NpzWriter, WriteNpyExt};

fn save<T: ndarray_npy::WritableElement>(path: &Path, array: &ArrayD<T>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    array.write_npy(std::fs::File::create(path).unwrap()).unwrap();
}

fn ramp(shape: &[usize]) -> ArrayD<f32> {
    let count = shape.iter().product::<usize>();
    ArrayD::from_shape_vec(IxDyn(shape), (0..count).map(|i| i as f32 * 0.25).collect()).unwrap()
}

fn compare_json(a: &Path, b: &Path, code: i32) -> serde_json::Value {
    let (stdout, _) = run_expecting(mge().args(["compare"]).arg(a).arg(b).arg("--json"), code);
    json_of(&stdout)
}

#[test]
fn a_tensor_equals_itself() {
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            "fixtures/feeds/conv_data.npy",
            "fixtures/feeds/conv_data.npy",
        ]),
        0,
    );
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
}

#[test]
fn one_changed_value_fails_and_is_named_by_index() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    let reference = ramp(&[2, 3, 4]);
    let mut changed = reference.clone();
    changed[[1, 2, 3]] += 0.5;
    save(&a, &changed);
    save(&b, &reference);
    let report = compare_json(&a, &b, 1);
    let row = &report["tensors"][0];
    assert_eq!(row["status"], "fail", "{report}");
    assert_eq!(row["first_mismatch"]["index"], serde_json::json!([1, 2, 3]));
    assert_eq!(row["first_mismatch"]["a"], 6.25);
    assert_eq!(row["first_mismatch"]["b"], 5.75);
    assert_eq!(row["max_abs"], 0.5);
    // AssertEqual's error: |a - b| / max(min(|a|, |b|), 1).
    assert!((row["err"].as_f64().unwrap() - 0.5 / 5.75).abs() < 1e-9, "{row}");
    let (stdout, _) = run_expecting(mge().args(["compare"]).arg(&a).arg(&b), 1);
    assert!(stdout.contains("(1, 2, 3): 6.25 vs 5.75"), "{stdout}");
    // Within a looser tolerance it passes, both ways of stating one.
    run_expecting(mge().args(["compare", "--maxerr", "0.1"]).arg(&a).arg(&b), 0);
    run_expecting(mge().args(["compare", "--atol", "0.5"]).arg(&a).arg(&b), 0);
    run_expecting(mge().args(["compare", "--rtol", "0.09"]).arg(&a).arg(&b), 0);
    // The relative part scales with B, the reference: 0.085 * 5.75 < 0.5 <= 0.085 * 6.25.
    run_expecting(mge().args(["compare", "--rtol", "0.085"]).arg(&a).arg(&b), 1);
    run_expecting(
        mge()
            .args(["compare", "--rtol", "0.085", "--atol", "0"])
            .arg(&b)
            .arg(&a),
        0,
    );
}

#[test]
fn nan_on_both_sides_is_equal_on_one_side_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    save(&path("nan.npy"), &arr1(&[1.0f32, f32::NAN]).into_dyn());
    save(&path("nan_too.npy"), &arr1(&[1.0f32, f32::NAN]).into_dyn());
    save(&path("number.npy"), &arr1(&[1.0f32, 2.0]).into_dyn());
    compare_json(&path("nan.npy"), &path("nan_too.npy"), 0);
    let report = compare_json(&path("nan.npy"), &path("number.npy"), 1);
    assert_eq!(report["tensors"][0]["first_mismatch"]["index"], serde_json::json!([1]));
    assert!(report["tensors"][0]["err"].is_null(), "NaN error: {report}");
}

#[test]
fn folders_compare_file_by_file() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let same = ramp(&[3, 4]);
    let mut changed = same.clone();
    changed[[2, 1]] = -1.0;
    save(&a.join("same.npy"), &same);
    save(&b.join("same.npy"), &same);
    save(&a.join("sub/changed.npy"), &changed);
    save(&b.join("sub/changed.npy"), &same);
    save(&a.join("reshaped.npy"), &ramp(&[12]));
    save(&b.join("reshaped.npy"), &same);
    save(&a.join("retyped.npy"), &same.mapv(f64::from));
    save(&b.join("retyped.npy"), &same);
    save(&a.join("only_a.npy"), &same);
    save(&b.join("only_b.npy"), &same);
    let report = compare_json(&a, &b, 1);
    let status = |name: &str| {
        let rows = report["tensors"].as_array().unwrap();
        let row = rows.iter().find(|row| row["name"] == name);
        row.unwrap_or_else(|| panic!("no row {name}: {report}"))["status"].clone()
    };
    assert_eq!(status("same.npy"), "pass");
    assert_eq!(status("sub/changed.npy"), "fail");
    assert_eq!(status("reshaped.npy"), "shape_mismatch");
    assert_eq!(status("retyped.npy"), "dtype_mismatch");
    assert_eq!(status("only_a.npy"), "only_in_a");
    assert_eq!(status("only_b.npy"), "only_in_b");
    assert_eq!(report["tensors"].as_array().unwrap().len(), 6);
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(1), Some(5))
    );
    // The same folders without the differences pass.
    for name in ["sub/changed.npy", "reshaped.npy", "retyped.npy", "only_a.npy"] {
        std::fs::remove_file(a.join(name)).unwrap();
    }
    for name in ["sub/changed.npy", "reshaped.npy", "retyped.npy", "only_b.npy"] {
        std::fs::remove_file(b.join(name)).unwrap();
    }
    compare_json(&a, &b, 0);
}

#[test]
fn archives_compare_array_by_array() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, y: &ArrayD<f32>| {
        let path = dir.path().join(name);
        let mut npz = NpzWriter::new(std::fs::File::create(&path).unwrap());
        npz.add_array("x", &ramp(&[2, 2])).unwrap();
        npz.add_array("y", y).unwrap();
        npz.finish().unwrap();
        path
    };
    let a = write("a.npz", &ramp(&[5]));
    let b = write("b.npz", &ramp(&[5]).mapv(|v| v + 1.0));
    let report = compare_json(&a, &b, 1);
    let rows = report["tensors"].as_array().unwrap();
    assert_eq!(
        (rows[0]["name"].as_str(), rows[0]["status"].as_str()),
        (Some("x"), Some("pass"))
    );
    assert_eq!(
        (rows[1]["name"].as_str(), rows[1]["status"].as_str()),
        (Some("y"), Some("fail"))
    );
}

#[test]
fn unusable_sides_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let bad = dir.path().join("bad.npy");
    std::fs::write(&bad, b"not numpy").unwrap();
    let good = "fixtures/feeds/conv_data.npy";
    let cases: [(&Path, &str, &str); 4] = [
        (Path::new("missing.npy"), good, "missing.npy does not exist"),
        (&empty, &*empty.to_string_lossy(), "holds no .npy or .npz file"),
        (&bad, good, "bad.npy: not a valid .npy file"),
        (&empty, good, "cannot compare the folder"),
    ];
    for (a, b, message) in cases {
        let (_, stderr) = run_expecting(mge().arg("compare").arg(a).arg(b), 2);
        assert!(stderr.contains(message), "{a:?} {b}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

/// The text says what the JSON says: a tensor's status in the same words
/// (`pass` for `"status": "pass"`), errors printed one way, counts with
/// their plural.
#[test]
fn the_text_says_the_words_of_the_json() {
    let (a, b) = (
        "fixtures/ref/conv_float__conv_data/feat.npy",
        "fixtures/ref/conv_float__conv_data_24/feat.npy",
    );
    let (stdout, _) = run_expecting(mge().args(["compare", a, a, "--json"]), 0);
    assert_eq!(json_of(&stdout)["tensors"][0]["status"], "pass");
    let (stdout, _) = run_expecting(mge().args(["compare", a, a]), 0);
    let row = stdout.lines().find(|line| line.starts_with("feat.npy")).unwrap();
    assert!(row.split_whitespace().any(|word| word == "pass"), "{stdout}");
    let (stdout, stderr) = run_expecting(mge().args(["compare", a, b]), 1);
    let row = stdout.lines().find(|line| line.starts_with("feat.npy")).unwrap();
    assert!(row.contains(" 0.036626 ") && row.contains(" FAIL "), "{stdout}");
    assert_eq!(stderr, "mge: check failed: 1 of 1 tensor differs\n");
    let (stdout, _) = run_expecting(mge().args(["compare", a, "fixtures/feeds/conv_data.npy", "--json"]), 1);
    assert_eq!(json_of(&stdout)["tensors"][0]["status"], "shape_mismatch");
    let (stdout, _) = run_expecting(mge().args(["compare", a, "fixtures/feeds/conv_data.npy"]), 1);
    assert!(stdout.contains("SHAPE MISMATCH"), "{stdout}");
}
