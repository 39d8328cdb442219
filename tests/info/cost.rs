//! `mge info --ops` against network_visualize's statistics of the fixtures
//! (`fixtures/deploy_manifest.json` `cost`), and `run --extra-output VAR` against the
//! vars megenginelite dumped.

use crate::common::*;
use serde_json::Value;

/// The batch a fixture model was dumped with: network_visualize counts batch
/// 1, `info --ops` the shapes the graph stores.
fn dumped_batch(name: &str) -> u64 {
    let manifest = manifest();
    match entries(&manifest, "models").iter().find(|model| model["name"] == name) {
        Some(model) => model["inputs"][0]["shape"][0].as_u64().unwrap(),
        // divergence_a, dumped for its feed.
        None => read_f32(&root().join(manifest["divergence"]["input"].as_str().unwrap())).shape()[0] as u64,
    }
}

#[test]
fn parameters_and_operations_match_network_visualize() {
    let manifest = deploy_manifest();
    let costs = manifest["cost"].as_object().unwrap();
    let mut checked = 0;
    for (name, cost) in costs {
        let file = cost["model_file"].as_str().unwrap();
        if !file.ends_with(".mge") {
            continue; // ResNet-18 is made by bench/resnet18.py, not kept in the repository
        }
        let (stdout, _) = run_expecting(mge().args(["info", file, "--ops", "--json", "-q"]), 0);
        let ops = &json_of(&stdout)["ops"];
        assert_eq!(ops["parameters"]["count"], cost["param_count"], "{name}: {ops}");
        assert_eq!(ops["parameters"]["bytes"], cost["param_bytes"], "{name}");
        assert_eq!(ops["parameters"]["tensors"], cost["param_tensors"], "{name}");
        let row = |op_type: &str| type_row(ops, op_type).unwrap_or_else(|| panic!("{name}: no {op_type} row in {ops}"));
        let batch = dumped_batch(name);
        let mut macs = 0;
        for (op_type, expected) in cost["flops_by_type"].as_object().unwrap() {
            let row = row(op_type);
            assert_eq!(row["count"], expected["count"], "{name} {op_type}");
            // network_visualize's "flops" are MACs for convolutions and matrix
            // multiplications, output elements for elementwise operators.
            let expected = expected["flops"].as_u64().unwrap() * batch;
            let counted = if op_type == "Elemwise" {
                &row["flops"]
            } else {
                &row["macs"]
            };
            assert_eq!(counted.as_u64(), Some(expected), "{name} {op_type}: {row}");
            if op_type != "Elemwise" {
                macs += expected;
                assert_eq!(row["flops"].as_u64(), Some(2 * expected));
            }
        }
        assert_eq!(ops["macs"].as_u64(), Some(macs), "{name}");
        checked += 1;
    }
    assert!(checked >= 7, "{checked}");
}

#[test]
fn ops_are_listed_in_the_text_report() {
    let (stdout, _) = run_expecting(mge().args(["info", "fixtures/conv_float.mge", "--ops", "-q"]), 0);
    assert!(stdout.contains("operators: 9 in 6 types"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with("total") && line.contains("224")),
        "{stdout}"
    );
    let (_, stderr) = run_expecting(mge().args(["info", "fixtures/conv_float_fbs1.mge", "--ops", "-q"]), 2);
    assert!(stderr.contains("needs an FBS v2 graph"), "{stderr}");
}

/// The values of an internal var made an output are the ones megenginelite's
/// io dump wrote for it (`fixtures/deploy/iodump`).
#[test]
fn an_internal_var_becomes_an_output() {
    let dump = engine_io_dump("divergence_a");
    let var = "Convolution[1]";
    let (expected, entry) = engine_dumped_var(&dump, var);
    let dir = tempfile::tempdir().unwrap();
    let mut command = mge();
    command.args([
        "run",
        dump["model_file"].as_str().unwrap(),
        "-q",
        "--iter",
        "1",
        "--threads",
        "1",
        "--json",
    ]);
    command.args(["--extra-output", var, "--outputs"]).arg(dir.path());
    for spec in dump["inputs"].as_array().unwrap() {
        command.args(["-i", spec.as_str().unwrap()]);
    }
    let report = json_of(&run_expecting(&mut command, 0).0);
    let names: Vec<&str> = report["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["out", var], "{report}");
    let written = read_f32(&dir.path().join("Convolution_1_.npy"));
    assert_eq!(
        written.shape(),
        entry["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect::<Vec<_>>()
            .as_slice()
    );
    for (got, want) in written.iter().zip(&expected) {
        assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0), "{got} vs {want}");
    }
    // `--output`, its old spelling, still works.
    let (_, stderr) = run_expecting(
        mge().args(["run", "fixtures/conv_float.mge", "-q", "--output", "nope"]),
        2,
    );
    assert!(
        stderr.contains("--extra-output: the model has no var named 'nope'"),
        "{stderr}"
    );
}

/// Transposed convolutions (`ConvolutionBackwardData`), pooling and reduction,
/// which network_visualize does not count, are counted as the engine's
/// profiler counts them (`fixtures/cost_manifest.json`); what stays
/// uncounted (the argmax) is said, in JSON and in text.
#[test]
fn transposed_convolutions_count_as_the_engines_profiler_counts_them() {
    let manifest = read_manifest_file("fixtures/cost_manifest.json");
    let model = manifest["model"].as_str().unwrap();
    let (stdout, _) = run_expecting(mge().args(["info", model, "--ops", "--json", "-q"]), 0);
    let ops = &json_of(&stdout)["ops"];
    let row = |op_type: &str| type_row(ops, op_type).unwrap_or_else(|| panic!("no {op_type} row in {ops}"));
    let engine = &manifest["computation_by_type"]["ConvolutionBackwardData"];
    let deconv = row("ConvolutionBackwardData");
    assert_eq!(deconv["count"], engine["count"]);
    assert_eq!(deconv["flops"], engine["computation"], "{deconv}");
    assert_eq!(
        deconv["macs"].as_u64().unwrap() * 2,
        engine["computation"].as_u64().unwrap()
    );
    let by_type = &manifest["computation_by_type"];
    // The pooling's 3x3 window is stored in the graph (a window of 2 is left out as the default).
    for (op_type, engine) in [("Pooling", "PoolingForward"), ("Reduce", "Reduce")] {
        let row = row(op_type);
        assert_eq!(row["flops"], by_type[engine]["computation"], "{row}");
        assert_eq!(row["macs"], 0, "{row}");
    }
    let engine_flops: u64 = ["ConvolutionBackwardData", "PoolingForward", "Reduce"]
        .iter()
        .map(|engine| by_type[engine]["computation"].as_u64().unwrap())
        .sum();
    assert_eq!(ops["flops"], engine_flops, "{ops}");
    let argmax = row("Argmax");
    assert!(argmax["macs"].is_null() && argmax["flops"].is_null(), "{argmax}");
    assert_eq!(ops["uncounted"], by_type["Argmax"]["count"]);
    assert_eq!(ops["uncounted_types"], serde_json::json!({"Argmax": 1}));
    assert_eq!(row("Host2DeviceCopy")["flops"], 0, "data moved is no arithmetic");
    let (stdout, _) = run_expecting(mge().args(["info", model, "--ops", "-q"]), 0);
    assert!(
        stdout.contains("uncounted, not in the totals: 1 operator of a type not counted: Argmax 1\n"),
        "{stdout}"
    );
}

/// Upsampling (`Resize`, bilinear and nearest, as YOLOX's PAFPN has it) is
/// arithmetic neither MegEngine count counts: it adds nothing and leaves the
/// totals complete, MegEngine's MACs (`fixtures/cost_manifest.json`).
#[test]
fn resize_counts_as_megengine_counts_it() {
    let manifest = &read_manifest_file("fixtures/cost_manifest.json")["resize"];
    let model = manifest["model"].as_str().unwrap();
    let (stdout, _) = run_expecting(mge().args(["info", model, "--ops", "--json", "-q"]), 0);
    let ops = &json_of(&stdout)["ops"];
    let resize = type_row(ops, "Resize").unwrap_or_else(|| panic!("no Resize row in {ops}"));
    let engine = &manifest["computation_by_type"]["ResizeForward"];
    assert_eq!(resize["count"], engine["count"], "{resize}");
    assert_eq!(resize["flops"], engine["computation"], "{resize}");
    assert_eq!(resize["macs"], 0, "{resize}");
    assert_eq!(ops["uncounted"], 0, "{ops}");
    assert_eq!(ops["macs"], manifest["macs_by_type"]["Convolution"], "{ops}");
}

fn read_manifest_file(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).unwrap_or_else(|err| panic!("{path}: {err}"));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// The row of `info --ops --json`'s `types` for `op_type`.
fn type_row(ops: &Value, op_type: &str) -> Option<Value> {
    ops["types"]
        .as_array()?
        .iter()
        .find(|row| row["type"] == op_type)
        .cloned()
}

/// A graph whose stored shapes hold 2^96 elements: every count stops at
/// u64::MAX, and the report says so, rather than wrapping to a small number.
#[test]
fn counts_past_u64_saturate_and_say_so() {
    let mut bytes = std::fs::read(root().join("fixtures/conv_float.mge")).unwrap();
    // The two stored shapes (1, 8, 16, 16): the convolution's output and the next var.
    let shape: Vec<u8> = [4u32, 1, 8, 16, 16].iter().flat_map(|v| v.to_le_bytes()).collect();
    let huge: Vec<u8> = [4u32, 1, u32::MAX, u32::MAX, u32::MAX]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let mut edited = 0;
    while let Some(at) = bytes.windows(shape.len()).position(|window| window == shape) {
        bytes[at..at + huge.len()].copy_from_slice(&huge);
        edited += 1;
    }
    assert_eq!(edited, 2);
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("huge.mge");
    std::fs::write(&model, bytes).unwrap();
    let model = model.to_str().unwrap();
    let (stdout, _) = run_expecting(mge().args(["info", model, "--ops", "--json", "-q"]), 0);
    let ops = &json_of(&stdout)["ops"];
    assert_eq!(ops["macs"].as_u64(), Some(u64::MAX), "{ops}");
    assert_eq!(ops["saturated"], true, "{ops}");
    let (stdout, _) = run_expecting(mge().args(["info", model, "--ops", "-q"]), 0);
    assert!(stdout.contains("saturated: a count passed"), "{stdout}");
    // A graph within bounds says nothing of it.
    let (stdout, _) = run_expecting(
        mge().args(["info", "fixtures/conv_float.mge", "--ops", "--json", "-q"]),
        0,
    );
    assert!(json_of(&stdout)["ops"].get("saturated").is_none(), "{stdout}");
}
