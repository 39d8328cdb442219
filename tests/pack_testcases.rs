//! `mge pack-testcases`: a container the engine's own AssertEqual operators
//! check. Its expected values are the engine's outputs of the packing run;
//! that they are right is what megenginelite's references and the engine's
//! assertions tell, never `mge`.

use std::path::Path;

use crate::common::*;
use serde_json::Value;

fn pack(model: &str, input: &str, out: &Path, extra: &[&str]) -> Value {
    let (stdout, _) = run_expecting(
        mge()
            .args(["pack-testcases", model, "-q", "--json", "-i", input, "-o"])
            .arg(out)
            .args(extra),
        0,
    );
    json_of(&stdout)
}

fn check(container: &Path, code: i32) -> Value {
    let (stdout, _) = run_expecting(mge().arg("check").arg(container).arg("--json"), code);
    json_of(&stdout)
}

/// The graphs of a container: the model's, then each testcase's.
fn graphs(container: &[u8]) -> Vec<Vec<u8>> {
    assert_eq!(&container[..8], b"mgbtest0");
    let count = u32::from_le_bytes(container[8..12].try_into().unwrap()) as usize;
    let mut at = 12;
    let mut found = Vec::new();
    for _ in 0..=count {
        let size = u32::from_le_bytes(container[at..at + 4].try_into().unwrap()) as usize;
        found.push(container[at..at + 4 + size].to_vec());
        at += 4 + size;
    }
    assert_eq!(at, container.len());
    found
}

#[test]
fn a_packed_container_passes_the_engines_assertions() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("conv_tc.mge");
    let report = pack("fixtures/conv_float.mge", "fixtures/feeds/conv_data.npy", &out, &[]);
    assert_eq!(report["testcases"], 1);
    let checked = check(&out, 0);
    assert_eq!(
        (checked["passed"].as_u64(), checked["failed"].as_u64()),
        (Some(1), Some(0)),
        "{checked}"
    );
    let testcase = &checked["models"][0]["testcases"][0];
    // The engine printed its error: the container asserts verbosely, as trace.dump does.
    assert_eq!(testcase["outputs"][0]["name"], "feat");
    assert_eq!(testcase["outputs"][0]["err"], 0.0, "{testcase}");
    assert_eq!(testcase["outputs"][0]["maxerr"], 1e-4);
    // It holds the feed and megenginelite's output, as dump --testcases shows.
    let cases = dir.path().join("cases");
    run_expecting(mge().args(["dump", "-q", "--testcases"]).arg(&cases).arg(&out), 0);
    assert_close(
        &read_f32(&cases.join("0/feat.expect.npy")),
        &read_f32(&root().join("fixtures/ref/conv_float__conv_data/feat.npy")),
        "expectation",
    );
    assert_close(
        &read_f32(&cases.join("0/data.npy")),
        &read_f32(&root().join("fixtures/feeds/conv_data.npy")),
        "feed",
    );
    let info = json_of(&run_expecting(mge().args(["info", "--json", "-q"]).arg(&out), 0).0);
    assert_eq!(info["testcases"], 1);
    assert!(
        info["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["name"] == "feat:expect"),
        "{info}"
    );
}

/// The model of divergence_b (one layer's weights changed) in the container
/// packed from divergence_a fails the engine's check of a's testcase.
#[test]
fn a_changed_model_fails_the_check() {
    let manifest = manifest();
    let case = &manifest["divergence"];
    let dir = tempfile::tempdir().unwrap();
    let input = case["input"].as_str().unwrap();
    let (a, b) = (dir.path().join("a.mge"), dir.path().join("b.mge"));
    pack(case["a"].as_str().unwrap(), input, &a, &[]);
    pack(case["b"].as_str().unwrap(), input, &b, &[]);
    check(&b, 0);
    let (a_graphs, b_graphs) = (graphs(&std::fs::read(&a).unwrap()), graphs(&std::fs::read(&b).unwrap()));
    let swapped = dir.path().join("swapped.mge");
    let mut bytes = std::fs::read(&a).unwrap()[..12].to_vec();
    bytes.extend(&b_graphs[0]);
    bytes.extend(&a_graphs[1]);
    std::fs::write(&swapped, bytes).unwrap();
    let checked = check(&swapped, 1);
    let testcase = &checked["models"][0]["testcases"][0];
    assert_eq!(testcase["status"], "failed", "{checked}");
    assert!(testcase["message"].as_str().unwrap().contains("'out'"), "{testcase}");
}

#[test]
fn the_maxerr_is_the_containers_and_plain_models_only_are_packed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tc.mge");
    pack(
        "fixtures/scale2.mge",
        "fixtures/feeds/scale_x.npy",
        &out,
        &["--maxerr", "0.25"],
    );
    let checked = check(&out, 0);
    assert_eq!(
        checked["models"][0]["testcases"][0]["outputs"][0]["maxerr"], 0.25,
        "{checked}"
    );
    // The text says it as every tolerance is said (`0.001`, not `1e-3` beside `0.001`).
    let (stdout, _) = run_expecting(
        mge()
            .args([
                "pack-testcases",
                "fixtures/scale2.mge",
                "-i",
                "fixtures/feeds/scale_x.npy",
            ])
            .args(["--maxerr", "1e-3", "-o"])
            .arg(dir.path().join("tc3.mge")),
        0,
    );
    assert!(
        stdout.contains(" with 1 testcase\n") && stdout.contains("(AssertEqual maxerr 0.001)\n"),
        "{stdout}"
    );
    for (model, message) in [
        ("fixtures/conv_float_tc1.mge", "is a testcase container already"),
        ("fixtures/conv_float_fbs1.mge", "needs an FBS v2 graph"),
    ] {
        let (_, stderr) = run_expecting(
            mge()
                .args(["pack-testcases", model, "-q", "-o"])
                .arg(dir.path().join("x.mge")),
            2,
        );
        assert!(stderr.contains(message), "{model}: {stderr}");
        assert!(!dir.path().join("x.mge").exists());
    }
}
