//! A testcase container's model run on other feeds than its testcases
//! (`--no-testcase`, `-i`): its real outputs, as the plain model's reference.

use std::path::Path;

use crate::common::*;
use serde_json::Value;

/// Containers with expectations, FBS v1 and v2, one to several inputs and outputs.
const CONTAINERS: [&str; 5] = [
    "conv_float_tc1",
    "conv_float_tc3",
    "conv_float_fbs1_tc1",
    "two_inputs_tc2",
    "image_uint8_tc1",
];

/// The first reference case of the plain model `container` was dumped from.
fn reference_case<'a>(manifest: &'a Value, container: &str) -> &'a Value {
    let plain = model(manifest, container)["plain_model"].as_str().unwrap();
    entries(manifest, "cases")
        .iter()
        .find(|case| case["model"] == plain)
        .unwrap_or_else(|| panic!("no reference case for {plain}"))
}

fn feed_args(case: &Value) -> Vec<String> {
    let specs = case["inputs"].as_array().unwrap().iter();
    specs
        .flat_map(|spec| ["-i".to_string(), spec.as_str().unwrap().to_string()])
        .collect()
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap())
        .collect()
}

/// Each reference output equals DIR/NAME.npy, and DIR holds nothing else.
fn assert_reference_outputs(dir: &Path, case: &Value, what: &str) {
    let outputs = case["outputs"].as_object().unwrap();
    for (name, reference) in outputs {
        let written = read_f32(&dir.join(format!("{name}.npy")));
        assert_close(
            &written,
            &read_f32(&root().join(reference["file"].as_str().unwrap())),
            what,
        );
    }
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), outputs.len(), "{what}");
}

#[test]
fn run_gives_the_plain_models_outputs() {
    let manifest = manifest();
    for container in CONTAINERS {
        let case = reference_case(&manifest, container);
        let plain = model(&manifest, case["model"].as_str().unwrap());
        let dir = tempfile::tempdir().unwrap();
        let (stdout, _) = run_expecting(
            mge()
                .args([
                    "run",
                    &format!("fixtures/{container}.mge"),
                    "--no-testcase",
                    "--iter",
                    "1",
                    "-q",
                    "--json",
                ])
                .args(feed_args(case))
                .arg("--outputs")
                .arg(dir.path()),
            0,
        );
        let report = json_of(&stdout);
        let mut inputs = names(&report["inputs"]);
        inputs.sort_unstable();
        let mut plain_inputs = names(&plain["inputs"]);
        plain_inputs.sort_unstable();
        assert_eq!(
            inputs, plain_inputs,
            "{container}: the expectations are no inputs of the user's"
        );
        assert_eq!(names(&report["outputs"]), names(&plain["outputs"]), "{container}");
        assert_reference_outputs(dir.path(), case, container);
    }
}

/// `#rand` differs from the testcase, so an AssertEqual left in the run would fail it.
#[test]
fn run_without_input_feeds_rand_to_the_real_inputs_only() {
    let manifest = manifest();
    for container in CONTAINERS {
        let plain = model(&manifest, model(&manifest, container)["plain_model"].as_str().unwrap());
        let (stdout, stderr) = run_expecting(
            mge().args([
                "run",
                &format!("fixtures/{container}.mge"),
                "--no-testcase",
                "--iter",
                "2",
                "--json",
            ]),
            0,
        );
        let report = json_of(&stdout);
        assert_eq!(names(&report["outputs"]), names(&plain["outputs"]), "{container}");
        for input in report["inputs"].as_array().unwrap() {
            assert!(
                input["source"].as_str().unwrap().starts_with("#rand"),
                "{container}: {input}"
            );
        }
        assert!(!stderr.contains(":expect"), "{container}: {stderr}");
    }
}

#[test]
fn dump_writes_the_real_outputs() {
    let manifest = manifest();
    let case = reference_case(&manifest, "conv_float_fbs1_tc1");
    let dir = tempfile::tempdir().unwrap();
    run_expecting(
        mge()
            .args(["dump", "fixtures/conv_float_fbs1_tc1.mge", "--no-testcase", "-q"])
            .args(feed_args(case))
            .arg("--outputs")
            .arg(dir.path()),
        0,
    );
    assert_reference_outputs(dir.path(), case, "dump -i");

    // Fed its first testcase, the model gives what the testcase expects.
    let first = dir.path().join("first");
    let testcases = dir.path().join("testcases");
    run_expecting(
        mge()
            .args(["dump", "fixtures/two_inputs_tc2.mge", "-q", "--outputs"])
            .arg(&first)
            .arg("--testcases")
            .arg(&testcases),
        0,
    );
    let expected = read_f32(&testcases.join("0/y.expect.npy"));
    assert_close(&read_f32(&first.join("y.npy")), &expected, "dump on testcase 0");
}

#[test]
fn profile_times_the_model_without_its_assertions() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.json");
    for feeds in [&["-i", "fixtures/feeds/cat.png"][..], &["--no-testcase"]] {
        let (stdout, _) = run_expecting(
            mge()
                .args([
                    "profile",
                    "fixtures/image_uint8_tc1.mge",
                    "-q",
                    "--iter",
                    "2",
                    "--top",
                    "1000",
                    "--json",
                ])
                .args(feeds)
                .arg("-o")
                .arg(&trace),
            0,
        );
        let report = json_of(&stdout);
        let types: Vec<&str> = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["type"].as_str().unwrap())
            .collect();
        assert!(types.contains(&"ConvolutionForward"), "{feeds:?}: {types:?}");
        assert!(!types.contains(&"AssertEqual"), "{feeds:?}: {types:?}");
        // The image only: the expectations are not copied in.
        assert_eq!(
            types.iter().filter(|t| **t == "Host2DeviceCopy").count(),
            1,
            "{feeds:?}: {types:?}"
        );
    }
}
