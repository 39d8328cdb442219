//! `mge compare A.mge B.mge --structure`: the graphs compared from the files,
//! against what MegEngine's own graph reader (`Network.load`) says differs
//! between the variants `fixtures/make_whatchanged_fixtures.py` dumped.

use crate::common::*;
use serde_json::Value;

fn whatchanged_manifest() -> Value {
    let text = std::fs::read_to_string(root().join("fixtures/whatchanged_manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The structure of the small CNN against `variant`, and what the manifest says of it.
fn structure(variant: &str, code: i32) -> (Value, Value) {
    let manifest = whatchanged_manifest();
    let model = |key: &str| manifest["models"][key].as_str().unwrap().to_string();
    let (stdout, _) = run_expecting(
        mge()
            .args(["compare", "--structure", "--json"])
            .arg(model("cnn"))
            .arg(model(variant)),
        code,
    );
    let expected = manifest["against_cnn"][variant].clone();
    (json_of(&stdout)["structure"].clone(), expected)
}

/// The `{var, type}` of each operator listed.
fn ops(list: &Value) -> Vec<(String, String)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|op| {
            (
                op["var"].as_str().unwrap().to_string(),
                op["type"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Parameters and MACs of both sides as MegEngine's graph gives them.
fn assert_totals(got: &Value, expected: &Value) {
    for side in ["a", "b"] {
        assert_eq!(got["params"][side]["count"], expected["params"][side]["count"], "{got}");
        assert_eq!(
            got["params"][side]["tensors"], expected["params"][side]["tensors"],
            "{got}"
        );
        assert_eq!(got["macs"][side], expected["macs"][side], "{got}");
    }
}

fn assert_no_difference(got: &Value) {
    for list in ["ops_only_a", "ops_only_b", "ops_changed", "inputs", "outputs", "types"] {
        assert_eq!(got[list], serde_json::json!([]), "{list}: {got}");
    }
    assert_eq!(got["params"]["differing_tensors"], 0, "{got}");
}

#[test]
fn the_model_against_itself_is_the_same_graph() {
    let (got, expected) = structure("cnn", 0);
    assert_no_difference(&got);
    assert_totals(&got, &expected);
    assert_eq!(got["ops_matched"], 12, "{got}");
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            "--structure",
            "fixtures/whatchanged/cnn.mge",
            "fixtures/whatchanged/cnn.mge",
        ]),
        0,
    );
    assert!(
        stdout.contains("graph       same graph: 12 operators matched"),
        "{stdout}"
    );
}

/// FBS v1 names neither types nor most vars, and stores no shapes: the
/// graph is still the same, operator for operator and weight for weight.
#[test]
fn the_model_against_its_fbs_v1_dump_is_the_same_graph() {
    let (got, _) = structure("cnn_fbs1", 0);
    let expected = &whatchanged_manifest()["against_cnn"]["cnn"];
    assert_no_difference(&got);
    assert_eq!(got["ops_matched"], 12, "{got}");
    assert_eq!(got["params"]["a"], got["params"]["b"], "{got}");
    assert_eq!(got["params"]["a"]["count"], expected["params"]["a"]["count"], "{got}");
    assert_eq!(got["dumped"]["a"]["format"], "fbs-v2");
    assert_eq!(got["dumped"]["b"]["format"], "fbs-v1");
    // No shapes in FBS v1: its MACs are not counted, rather than counted wrong.
    assert_eq!(got["macs"]["b"], Value::Null, "{got}");
    let manifest = whatchanged_manifest();
    let model = |key: &str| manifest["models"][key].as_str().unwrap().to_string();
    let (text, _) = run_expecting(
        mge()
            .args(["compare", "--structure"])
            .arg(model("cnn_fbs1"))
            .arg(model("cnn")),
        0,
    );
    assert!(
        text.contains("same graph: 12 operators matched, ")
            && text.contains(", MACs unknown (10 operators whose shapes FBS v1 does not store)\n"),
        "{text}"
    );
}

#[test]
fn a_kernel_made_9x9_changes_one_convolution_and_its_weights() {
    let (got, expected) = structure("cnn_conv9x9", 1);
    assert_eq!(ops(&got["ops_only_a"]), ops(&expected["ops_only_a"]));
    assert_eq!(ops(&got["ops_only_b"]), ops(&expected["ops_only_b"]));
    let [changed] = got["ops_changed"].as_array().unwrap().as_slice() else {
        panic!("one changed operator: {got}");
    };
    let [wanted] = expected["ops_changed"].as_array().unwrap().as_slice() else {
        panic!("{expected}");
    };
    assert_eq!(changed["a_name"], wanted["var"]);
    assert_eq!(changed["type"], wanted["type"]);
    assert_eq!(changed["changes"], wanted["changes"], "{got}");
    // The padding MegEngine's param says changed, each field from and to.
    let details: Vec<&str> = changed["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|detail| detail["detail"].as_str().unwrap())
        .collect();
    for (field, values) in wanted["params"].as_object().unwrap() {
        let line = format!("{field} {} -> {}", values[0], values[1]);
        assert!(details.contains(&line.as_str()), "{line} in {details:?}");
    }
    let weight = &expected["differing_weights"][0];
    let shape = |at: usize| {
        let dims: Vec<String> = weight["shapes"][at]
            .as_array()
            .unwrap()
            .iter()
            .map(|dim| dim.to_string())
            .collect();
        format!("({})", dims.join(","))
    };
    let line = format!("{} {} -> {}", weight["var"].as_str().unwrap(), shape(0), shape(1));
    assert!(details.contains(&line.as_str()), "{line} in {details:?}");
    assert_eq!(got["params"]["differing_tensors"], 1);
    assert_totals(&got, &expected);
}

#[test]
fn an_extra_convolution_is_b_s_alone() {
    let (got, expected) = structure("cnn_extra_conv", 1);
    assert_eq!(ops(&got["ops_only_a"]), ops(&expected["ops_only_a"]));
    assert_eq!(ops(&got["ops_only_b"]), ops(&expected["ops_only_b"]));
    assert_eq!(got["ops_changed"], serde_json::json!([]), "{got}");
    assert_eq!(got["params"]["differing_tensors"], 0);
    assert_totals(&got, &expected);
    let convolution = got["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["type"] == "Convolution")
        .unwrap();
    assert_eq!(
        (convolution["count"]["a"].as_u64(), convolution["count"]["b"].as_u64()),
        (Some(3), Some(4))
    );
}

#[test]
fn other_weights_in_one_layer_are_that_layer_s_change_with_the_largest_difference() {
    let (got, expected) = structure("cnn_weights", 1);
    assert_eq!(ops(&got["ops_only_a"]), Vec::new());
    assert_eq!(ops(&got["ops_only_b"]), Vec::new());
    let [changed] = got["ops_changed"].as_array().unwrap().as_slice() else {
        panic!("one changed operator: {got}");
    };
    assert_eq!(changed["a_name"], expected["ops_changed"][0]["var"]);
    assert_eq!(changed["changes"], serde_json::json!(["weights"]));
    let weight = &expected["differing_weights"][0];
    let largest = &got["params"]["largest_difference"];
    assert_eq!(largest["b_var"], weight["var"]);
    assert_eq!(
        largest["max_abs_diff"].as_f64(),
        weight["max_abs_diff"].as_f64(),
        "{got}"
    );
    assert_eq!(got["params"]["differing_tensors"], 1);
    assert_totals(&got, &expected);
    // In text, printed as every difference is: six significant digits, plain from 1e-3.
    let largest = weight["max_abs_diff"].as_f64().unwrap();
    assert!((1e-3..1e6).contains(&largest), "{largest}");
    let shown: f64 = format!("{largest:.5e}").parse().unwrap();
    let manifest = whatchanged_manifest();
    let (stdout, _) = run_expecting(
        mge()
            .args(["compare", "--structure"])
            .arg(manifest["models"]["cnn"].as_str().unwrap())
            .arg(manifest["models"]["cnn_weights"].as_str().unwrap()),
        1,
    );
    assert!(
        stdout.contains(&format!("largest difference {shown}\n"))
            && stdout.contains(&format!("the most '{}' by {shown}\n", weight["var"].as_str().unwrap())),
        "{stdout}"
    );
}

/// A container's graph is its model's once its outputs are the vars its
/// assertions check; a packed model's is the graph it packs.
#[test]
fn containers_and_packed_models_are_read_for_their_graph() {
    for other in [
        "fixtures/conv_float_tc1.mge",
        "fixtures/deploy/conv_float_packed.pack",
        "fixtures/conv_float_fbs1_tc1.mge",
    ] {
        let (stdout, _) = run_expecting(
            mge().args(["compare", "--structure", "--json", "fixtures/conv_float.mge", other]),
            0,
        );
        assert_no_difference(&json_of(&stdout)["structure"]);
    }
}

/// The encrypted fixtures of `make_deploy_fixtures.py` (each `conv_float.mge`
/// encrypted as Lite's tools do, and loaded by Lite when made): the same
/// graph as the model, each opened as the engine gets it: a packed model
/// names its method, a bare one is named with `--model-decryption`, the
/// user's key is given with `--model-key`, on both sides or in B's options.
#[test]
fn encrypted_models_are_read_with_their_keys() {
    let cases: [(&str, &[&str], &str); 9] = [
        (
            "conv_float_packed_aes.pack",
            &[],
            "packed, AES_default-encrypted fbs-v2",
        ),
        (
            "conv_float_packed_rc4.pack",
            &[],
            "packed, RC4_default-encrypted fbs-v2",
        ),
        (
            "conv_float_packed_sfrc4.pack",
            &[],
            "packed, SIMPLE_FAST_RC4_default-encrypted fbs-v2",
        ),
        (
            "conv_float_packed_rc4_info.pack",
            &[],
            "packed, RC4_default-encrypted fbs-v2",
        ),
        (
            "conv_float_aes.emod",
            &["--b-options", "--model-decryption AES_default"],
            "AES_default-encrypted fbs-v2",
        ),
        (
            "conv_float_rc4.emod",
            &["--b-options", "--model-decryption RC4_default"],
            "RC4_default-encrypted fbs-v2",
        ),
        (
            "conv_float_sfrc4.emod",
            &["--b-options", "--model-decryption=SIMPLE_FAST_RC4_default"],
            "SIMPLE_FAST_RC4_default-encrypted fbs-v2",
        ),
        (
            "conv_float_packed_aes_userkey.pack",
            &["--b-options", "--model-key @fixtures/deploy/user_aes.key"],
            "packed, AES_default-encrypted fbs-v2",
        ),
        (
            "conv_float_packed_rc4_userkey.pack",
            &["--b-options", "--model-key 303132333435363738393a3b3c3d3e3f"],
            "packed, RC4_default-encrypted fbs-v2",
        ),
    ];
    for (file, options, format) in cases {
        let (stdout, _) = run_expecting(
            mge()
                .args(["compare", "--structure", "--json", "fixtures/conv_float.mge"])
                .arg(format!("fixtures/deploy/{file}"))
                .args(options),
            0,
        );
        let report = json_of(&stdout);
        assert_no_difference(&report["structure"]);
        assert_eq!(report["structure"]["dumped"]["b"]["format"], format, "{file}");
        assert!(!stdout.contains("303132"), "{stdout}");
    }
    // Both encrypted, with the same user's key given to both.
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            "--structure",
            "fixtures/deploy/conv_float_packed_rc4_userkey.pack",
            "fixtures/deploy/conv_float_packed_rc4_userkey.pack",
            "--model-key",
            "@fixtures/deploy/user_rc4.key",
        ]),
        0,
    );
    assert!(stdout.contains("same graph: 6 operators matched"), "{stdout}");
}

/// A wrong key is one line that names the method and whose key it was, and
/// never the key: the RC4 methods tell it by their hash, AES by what it
/// decrypts to, which is no graph.
#[test]
fn a_wrong_key_is_one_line() {
    let zeros = |bytes: usize| "00".repeat(bytes);
    let cases = [
        (
            "conv_float_aes.emod",
            "AES_default",
            zeros(32),
            "what it decrypts to is no MegEngine graph",
        ),
        (
            "conv_float_rc4.emod",
            "RC4_default",
            zeros(16),
            "the decrypted words do not match their keyed hash",
        ),
        (
            "conv_float_sfrc4.emod",
            "SIMPLE_FAST_RC4_default",
            zeros(16),
            "the encrypted words do not match their checksum",
        ),
    ];
    for (file, method, key, why) in cases {
        let (stdout, stderr) = run_expecting(
            mge()
                .args(["compare", "--structure", "fixtures/conv_float.mge"])
                .arg(format!("fixtures/deploy/{file}"))
                .arg("--b-options")
                .arg(format!("--model-decryption {method} --model-key {key}")),
            2,
        );
        assert!(stdout.is_empty(), "{stdout}");
        assert!(
            stderr.starts_with(&format!(
                "mge: error: the structure of fixtures/deploy/{file}: the model does not decrypt with {method} and the key given (--model-key): {why}; the key or the method is wrong"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains(&key), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // The user's key left out: the built-in one does not open the file.
    let (_, stderr) = run_expecting(
        mge().args([
            "compare",
            "--structure",
            "fixtures/conv_float.mge",
            "fixtures/deploy/conv_float_packed_aes_userkey.pack",
        ]),
        2,
    );
    assert!(
        stderr.contains("does not decrypt with AES_default and its built-in key"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // A key for both sides where one is plain: the engine would refuse it too.
    let (_, stderr) = run_expecting(
        mge().args([
            "compare",
            "--structure",
            "fixtures/conv_float.mge",
            "fixtures/deploy/conv_float_packed_rc4_userkey.pack",
            "--model-key",
            "@fixtures/deploy/user_rc4.key",
        ]),
        2,
    );
    assert!(
        stderr.starts_with(
            "mge: error: the structure of fixtures/conv_float.mge: --model-key: the model is not encrypted"
        ),
        "{stderr}"
    );
}

#[test]
fn what_the_structure_cannot_read_is_one_line() {
    let (_, stderr) = run_expecting(
        mge().args([
            "compare",
            "--structure",
            "fixtures/conv_float.mge",
            "fixtures/feeds/conv_data.npy",
        ]),
        2,
    );
    assert!(
        stderr.contains("--structure compares the graphs of two model files"),
        "{stderr}"
    );
    let (_, stderr) = run_expecting(
        mge().args([
            "compare",
            "--structure",
            "fixtures/conv_float.mge",
            "fixtures/conv_float.mge",
            "--threads",
            "2",
        ]),
        2,
    );
    assert!(stderr.contains("runs nothing: --threads is for runs"), "{stderr}");
    let (_, stderr) = run_expecting(
        mge().args([
            "compare",
            "--structure",
            "fixtures/conv_float.mge",
            "fixtures/conv_float.mge",
            "--a-options",
            "--fast-run",
        ]),
        2,
    );
    assert!(stderr.contains("runs nothing: --fast-run is for runs"), "{stderr}");
}
