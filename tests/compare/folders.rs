//! `mge compare OLD_DIR NEW_DIR` on two folders of fixture models: pairs by
//! path, models on one side only, the divergence fixtures' outputs differing
//! (`fixtures/manifest.json` names the layer the generator changed), one
//! table, JSON and JUnit, and shards that merge to the whole.

use std::path::Path;

use crate::common::*;
use serde_json::Value;

/// `old/` and `new/` in `dir`: the same plain model and container on both
/// sides, the divergence fixtures as `sub/div.mge`, and a model on each side alone.
fn zoo(dir: &Path) {
    let manifest = manifest();
    let divergence = &manifest["divergence"];
    let files = [
        ("conv.mge", "fixtures/conv_float.mge", "fixtures/conv_float.mge"),
        (
            "tc/conv_tc1.mge",
            "fixtures/conv_float_tc1.mge",
            "fixtures/conv_float_tc1.mge",
        ),
        (
            "sub/div.mge",
            divergence["a"].as_str().unwrap(),
            divergence["b"].as_str().unwrap(),
        ),
    ];
    for (name, old, new) in files {
        for (side, source) in [("old", old), ("new", new)] {
            let target = dir.join(side).join(name);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(root().join(source), target).unwrap();
        }
    }
    std::fs::copy(root().join("fixtures/scale2.mge"), dir.join("old/gone.mge")).unwrap();
    std::fs::copy(root().join("fixtures/two_inputs.mge"), dir.join("new/added.mge")).unwrap();
}

fn folders_json(dir: &Path, args: &[&str], code: i32) -> Value {
    let (stdout, _) = run_expecting(
        mge()
            .arg("compare")
            .arg(dir.join("old"))
            .arg(dir.join("new"))
            .args(["-q", "--json"])
            .args(args),
        code,
    );
    json_of(&stdout)
}

/// `(model, status)` of each row.
fn statuses(report: &Value) -> Vec<(String, String)> {
    report["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            (
                pair["model"].as_str().unwrap().to_string(),
                pair["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn two_folders_give_one_table_json_and_junit_with_the_right_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    zoo(dir.path());
    let junit = dir.path().join("report.xml");
    let report = folders_json(
        dir.path(),
        &["--rounds", "6", "-j", "2", "--junit", junit.to_str().unwrap()],
        1,
    );
    assert_json_verdicts(&report);
    assert_junit_verdicts(&junit);
    assert_table_verdicts_untimed(dir.path());
}

/// The zoo's pairs, as `compare --json` of its folders says them (6 rounds).
fn assert_json_verdicts(report: &Value) {
    let expected = [
        ("added.mge", "only_in_b"),
        ("conv.mge", "passed"),
        ("gone.mge", "only_in_a"),
        ("sub/div.mge", "failed"),
        ("tc/conv_tc1.mge", "passed"),
    ];
    let expected: Vec<(String, String)> = expected.iter().map(|(m, s)| (m.to_string(), s.to_string())).collect();
    assert_eq!(statuses(report), expected, "{report}");
    assert_eq!(
        [
            &report["passed"],
            &report["failed"],
            &report["only_in_a"],
            &report["only_in_b"]
        ],
        [2, 1, 1, 1]
    );
    assert_eq!((&report["rounds"], &report["min_effect_pct"]), (&6.into(), &2.0.into()));
    assert!(report["timing_budget_s"].is_null(), "{report}");
    let pairs = report["pairs"].as_array().unwrap();
    let div = &pairs[3];
    assert_eq!(div["outputs"]["failed"], 1, "{div}");
    assert!(div["outputs"]["worst_err"].as_f64().unwrap() > 1e-4, "{div}");
    let changed = &manifest()["divergence"]["changed_layer"];
    assert_eq!(
        div["outputs"]["first_divergence"]["operator"], changed["operator"],
        "{div}"
    );
    for pair in [&pairs[1], &pairs[3], &pairs[4]] {
        let timing = &pair["timing"];
        assert_eq!(timing["rounds"], 6, "{pair}");
        assert!(
            ["faster", "same", "slower", "undecided"].contains(&timing["speed"].as_str().unwrap()),
            "{pair}"
        );
        assert!(pair["error"].is_null(), "{pair}");
    }
    for one_sided in [&pairs[0], &pairs[2]] {
        assert!(
            one_sided["outputs"].is_null() && one_sided["timing"].is_null(),
            "{one_sided}"
        );
    }
}

/// The same verdicts in the JUnit file, a suite per pair.
fn assert_junit_verdicts(junit: &Path) {
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(
        xml.contains(r#"<testsuites name="mge compare" tests="8" failures="1" errors="0" skipped="2""#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<testsuite name="sub/div.mge" tests="2" failures="1""#),
        "{xml}"
    );
    assert!(xml.contains("1 of 1 output differs beyond"), "{xml}");
    assert!(xml.contains(r#"<skipped message="only in a"/>"#), "{xml}");
}

/// The same verdicts as a table, untimed, for the zoo in `dir`.
fn assert_table_verdicts_untimed(dir: &Path) {
    let (stdout, _) = run_expecting(
        mge()
            .arg("compare")
            .arg(dir.join("old"))
            .arg(dir.join("new"))
            .args(["-q", "--no-timing"]),
        1,
    );
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip_while(|line| !line.starts_with("model "))
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["model", "outputs", "worst", "err", "graph"], "{stdout}");
    assert_eq!(rows[1][..3], ["added.mge", "ONLY", "IN"], "{stdout}");
    // In the words of the outputs' rows, as JSON's `status` of each says them.
    assert_eq!(rows[2][..3], ["conv.mge", "pass", "0"], "{stdout}");
    assert_eq!(rows[4][..2], ["sub/div.mge", "FAIL"], "{stdout}");
    assert!(
        stdout.contains("pairs  2 passed, 1 failed; 1 only in a, 1 only in b"),
        "{stdout}"
    );
}

#[test]
fn shards_merge_to_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    zoo(dir.path());
    let whole = folders_json(dir.path(), &["--no-timing"], 1);
    let mut merged = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let (stdout, _) = run_expecting(
            mge()
                .arg("compare")
                .arg(dir.path().join("old"))
                .arg(dir.path().join("new"))
                .args(["-q", "--json", "--no-timing", "--shard", shard]),
            // Only the shard that holds sub/div.mge fails: paths sorted, every third from the first.
            if shard == "1/3" { 1 } else { 0 },
        );
        let part = json_of(&stdout);
        merged.extend(part["pairs"].as_array().unwrap().iter().cloned());
    }
    merged.sort_by_key(|pair| pair["model"].as_str().unwrap().to_string());
    assert_eq!(untimed(&merged), untimed(whole["pairs"].as_array().unwrap()));
}

/// The pairs without how long their runs took.
fn untimed(pairs: &[Value]) -> Vec<Value> {
    let mut pairs = pairs.to_vec();
    for pair in &mut pairs {
        if let Some(outputs) = pair["outputs"].as_object_mut() {
            outputs.remove("seconds");
        }
    }
    pairs
}

#[test]
fn a_failing_side_fails_its_pair_and_the_rest_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    for side in ["old", "new"] {
        std::fs::create_dir(dir.path().join(side)).unwrap();
        std::fs::copy(
            root().join("fixtures/conv_float.mge"),
            dir.path().join(side).join("conv.mge"),
        )
        .unwrap();
    }
    std::fs::copy(
        root().join("fixtures/conv_float.mge"),
        dir.path().join("old/broken.mge"),
    )
    .unwrap();
    std::fs::copy(
        root().join("fixtures/not_a_model.mge"),
        dir.path().join("new/broken.mge"),
    )
    .unwrap();
    let report = folders_json(dir.path(), &["--no-timing"], 1);
    let broken = &report["pairs"][0];
    assert_eq!(broken["status"], "failed", "{report}");
    assert!(broken["error"].as_str().unwrap().starts_with("run b ("), "{broken}");
    assert_eq!(report["pairs"][1]["status"], "passed", "{report}");
    // The engine crashing on every B (the stand-in library, on --cpu-inplace)
    // fails each pair with how, and every pair is reported.
    for side in ["old", "new"] {
        let model = dir.path().join(side).join("broken.mge");
        std::fs::copy(root().join("fixtures/conv_float.mge"), model).unwrap();
    }
    let (stdout, stderr) = run_expecting(
        mge()
            .arg("--lite-lib")
            .arg(fault_library())
            .env("MGE_FAULT", "segv")
            .env("MGE_FAULT_ONLY_WITH", "cpu-inplace")
            .arg("compare")
            .arg(dir.path().join("old"))
            .arg(dir.path().join("new"))
            .args(["-q", "--json", "--rounds", "6", "--b-options", "--cpu-inplace"]),
        1,
    );
    let report = json_of(&stdout);
    for pair in report["pairs"].as_array().unwrap() {
        assert_eq!(pair["status"], "failed", "{pair}");
        assert!(
            pair["error"].as_str().unwrap().contains("the engine crashed (SIGSEGV)"),
            "{pair}"
        );
    }
    assert_eq!(stderr, "mge: check failed: 2 of 2 pairs failed\n");
}

#[test]
fn what_only_one_pair_or_only_folders_take_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    zoo(dir.path());
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let kept = dir.path().join("kept");
    let tensors = "fixtures/feeds/conv_data.npy";
    let model = "fixtures/conv_float.mge";
    let cases: [(&[&str], &str); 4] = [
        (
            &[old, new, "--keep", kept.to_str().unwrap()],
            "--keep keeps the runs of one pair",
        ),
        (
            &[model, model, "--shard", "1/2"],
            "A and B are not two folders of models",
        ),
        (&[tensors, tensors, "--junit", "r.xml"], "is not a model"),
        (&[tensors, tensors, "--max-slowdown", "5"], "is not a model"),
    ];
    for (args, message) in cases {
        let (_, stderr) = run_expecting(mge().arg("compare").args(args), 2);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}
