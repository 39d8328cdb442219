//! Graphs made as the model zoo's dumps are (`fixtures/make_zoo_fixtures.py`:
//! fused `ConvBiasForward`, int8 after QAT, NMS with shapes known only at run
//! time, ROIAlign, bool masks, BERT's int32 ids) across the commands: their cost
//! against MegEngine's own counts, their outputs against megenginelite's, a
//! detector compared with itself, its io dump and its declared shapes.

use crate::common::*;
use ndarray::ArrayD;
use ndarray_npy::ReadNpyExt;
use serde_json::Value;

fn zoo_manifest() -> Value {
    let text = std::fs::read_to_string(root().join("fixtures/zoo_manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn zoo_model(key: &str) -> Value {
    zoo_manifest()["models"][key].clone()
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or_else(|| panic!("no {key} in {value}"))
}

fn ops_of(model: &str) -> Value {
    let (stdout, _) = run_expecting(mge().args(["info", model, "--ops", "--json", "-q"]), 0);
    json_of(&stdout)["ops"].clone()
}

fn type_row<'a>(ops: &'a Value, op_type: &str) -> &'a Value {
    ops["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["type"] == op_type)
        .unwrap_or_else(|| panic!("no {op_type} row in {ops}"))
}

/// MegEngine's names for a type: network_visualize's (`ConvBias`, `BatchedMatmul`)
/// and the profiler's (`ConvolutionForward`, `PoolingForward`) for the one the file registers.
fn file_type(megengine_type: &str) -> &str {
    match megengine_type {
        "ConvBias" => "ConvBiasForward",
        "BatchedMatmul" | "BatchedMatrixMul" => "BatchedMatrixMul",
        "ConvolutionForward" => "Convolution",
        "PoolingForward" => "Pooling",
        other => other,
    }
}

/// Each type network_visualize counts has its MACs (elementwise: its FLOPs, one
/// per output element), each the engine's profiler counts has its FLOPs, and
/// the total is MegEngine's: nothing of these graphs is left uncounted.
#[test]
fn zoo_graphs_cost_what_megengine_counts() {
    for key in ["resnet", "int8", "bert"] {
        let model = zoo_model(key);
        let ops = ops_of(str_of(&model, "model"));
        for (megengine_type, expected) in model["macs_by_type"].as_object().unwrap() {
            let row = type_row(&ops, file_type(megengine_type));
            let elementwise = megengine_type.starts_with("Elemwise");
            let counted = if elementwise { &row["flops"] } else { &row["macs"] };
            assert_eq!(counted, expected, "{key} {megengine_type}: {row}");
        }
        // network_visualize's MACs, and the transposed convolution's at the profiler's count.
        assert_eq!(ops["macs"], model["macs"], "{key}: {ops}");
        for (profiled_type, expected) in model["profiled_by_type"].as_object().unwrap() {
            let counted_by_both = [
                "ConvBiasForward",
                "ConvolutionForward",
                "ConvolutionBackwardData",
                "MatrixMul",
            ]
            .contains(&profiled_type.as_str())
                || (profiled_type.starts_with("Pooling"));
            if counted_by_both {
                let row = type_row(&ops, file_type(profiled_type));
                assert_eq!(row["flops"], expected["computation"], "{key} {profiled_type}: {row}");
            }
        }
        assert_eq!(ops["uncounted"], 0, "{key}: {ops}");
    }
}

/// The detector's operators after NMS work on shapes known only at run time:
/// they stay out of the totals, said as such; the rest is counted.
#[test]
fn a_detectors_run_time_shapes_are_said_uncounted() {
    let model = zoo_model("detector");
    let file = str_of(&model, "model");
    let ops = ops_of(file);
    let conv = type_row(&ops, "ConvBiasForward");
    assert_eq!(
        conv["flops"], model["profiled_by_type"]["ConvBiasForward"]["computation"],
        "{conv}"
    );
    assert!(ops["shapeless"].as_u64().unwrap() > 0, "{ops}");
    assert_eq!(ops["shapeless"], ops["uncounted"], "{ops}");
    let (text, _) = run_expecting(mge().args(["info", file, "--ops", "-q"]), 0);
    let said = format!(
        "uncounted, not in the totals: {} operators whose shapes are known only at run time: ",
        ops["shapeless"]
    );
    assert!(text.contains(&said), "{text}");
    let (text, _) = run_expecting(mge().args(["compare", "--structure", file, file]), 0);
    let said = format!(
        "MACs unknown ({} operators whose shapes are known only at run time)",
        ops["shapeless"]
    );
    assert!(text.contains(&said), "{text}");
}

/// `compare --structure` knows the MACs of a fused, optimised dump.
#[test]
fn the_structure_of_a_fused_dump_has_its_macs() {
    let model = zoo_model("resnet");
    let file = str_of(&model, "model");
    let (stdout, _) = run_expecting(mge().args(["compare", "--structure", "--json", file, file]), 0);
    let diff = &json_of(&stdout)["structure"];
    assert_eq!(diff["macs"]["a"], model["macs"], "{diff}");
    assert_eq!(diff["macs"]["b"], model["macs"], "{diff}");
}

/// Every zoo graph's outputs are megenginelite's.
#[test]
fn zoo_outputs_are_megenginelites() {
    for (key, model) in zoo_manifest()["models"].as_object().unwrap() {
        let dir = tempfile::tempdir().unwrap();
        run_expecting(
            mge()
                .args(["run", str_of(model, "model"), "-q", "-i"])
                .arg(format!("{}:{}", str_of(model, "input"), str_of(model, "feed")))
                .arg("--outputs")
                .arg(dir.path()),
            0,
        );
        for (name, reference) in model["outputs"].as_object().unwrap() {
            let written = read_f32(&dir.path().join(format!("{name}.npy")));
            let expected = read_f32(&root().join(str_of(reference, "file")));
            assert_close(&written, &expected, &format!("{key} {name}"));
        }
    }
}

/// ROIAlign's second output, an index average mode leaves uninitialised, is read
/// by nothing: whatever it holds in each run, the detector compared with itself
/// does not diverge.
#[test]
fn a_detector_compared_with_itself_does_not_diverge() {
    let model = zoo_model("detector");
    let file = str_of(&model, "model");
    let feed = format!("{}:{}", str_of(&model, "input"), str_of(&model, "feed"));
    let (stdout, _) = run_expecting(
        mge().args(["compare", file, file, "-q", "--no-timing", "--json", "-i", &feed]),
        0,
    );
    let report = json_of(&stdout);
    assert_eq!(report["first_divergence"], Value::Null, "{report}");
    assert_eq!(report["failed"], 0, "{report}");
    for unread in report["unread_differing"].as_array().into_iter().flatten() {
        assert_eq!(unread["type"], "ROIAlign", "{unread}");
    }
}

/// Two io dumps of the detector on its feed, in `a/` and `b/`, and `a/`'s index.
fn detector_dumps() -> (tempfile::TempDir, Value) {
    let model = zoo_model("detector");
    let file = str_of(&model, "model");
    let feed = format!("{}:{}", str_of(&model, "input"), str_of(&model, "feed"));
    let dumps = tempfile::tempdir().unwrap();
    for side in ["a", "b"] {
        run_expecting(
            mge()
                .args(["dump", file, "-q", "-i", &feed, "--io"])
                .arg(dumps.path().join(side)),
            0,
        );
    }
    let text = std::fs::read_to_string(dumps.path().join("a/index.json")).unwrap();
    let index = serde_json::from_str(&text).unwrap();
    (dumps, index)
}

/// Whatever ROIAlign's unread index holds in one run (here: its last value
/// changed in b), it is listed apart and the first divergence is not it.
#[test]
fn an_unread_var_takes_no_part_in_the_first_divergence() {
    let (dumps, index) = detector_dumps();
    let unread = index["vars"]
        .as_array()
        .unwrap()
        .iter()
        .find(|var| var["type"] == "ROIAlignForward" && var["name"].as_str().unwrap().ends_with(":o1"))
        .unwrap_or_else(|| panic!("no ROIAlign index in {index}"));
    let path = dumps.path().join("b").join(str_of(unread, "file"));
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 4;
    bytes[at..].copy_from_slice(&2_080_000_000i32.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    let (stdout, _) = run_expecting(
        mge()
            .args(["compare", "--json", "-q"])
            .arg(dumps.path().join("a"))
            .arg(dumps.path().join("b")),
        1,
    );
    let report = json_of(&stdout);
    assert_eq!(report["first_divergence"], Value::Null, "{report}");
    assert_eq!(report["unread_differing"][0]["var"], unread["name"], "{report}");
    let (text, _) = run_expecting(
        mge()
            .args(["compare", "-q"])
            .arg(dumps.path().join("a"))
            .arg(dumps.path().join("b")),
        1,
    );
    let said = format!("unread: var '{}' of operator", str_of(unread, "name"));
    assert!(
        text.contains(&said) && text.contains("no computed var that is read diverges"),
        "{text}"
    );
}

/// The NMS mask's bool vars are `.npy` bool in an io dump, and compared.
#[test]
fn bool_vars_are_dumped_and_compared() {
    let (dumps, index) = detector_dumps();
    let masks: Vec<&Value> = index["vars"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|var| var["dtype"] == "bool")
        .collect();
    assert!(!masks.is_empty(), "{index}");
    for mask in &masks {
        let path = dumps.path().join("a").join(str_of(mask, "file"));
        let values = ArrayD::<bool>::read_npy(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(
            values.shape().iter().map(|&dim| dim as u64).collect::<Vec<_>>(),
            mask["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|dim| dim.as_u64().unwrap())
                .collect::<Vec<_>>()
        );
    }
    assert_eq!(index["outputs"], serde_json::json!(["boxes", "scores"]), "{index}");
    let (stdout, _) = run_expecting(
        mge()
            .args(["compare", "--json", "-q"])
            .arg(dumps.path().join("a"))
            .arg(dumps.path().join("b")),
        0,
    );
    let report = json_of(&stdout);
    let compared: Vec<&Value> = report["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| masks.iter().any(|mask| mask["name"] == row["name"]))
        .collect();
    assert_eq!(compared.len(), masks.len(), "{report}");
    for row in compared {
        assert_eq!(row["status"], "pass", "{row}");
    }
}

/// Outputs whose shape NMS decides are `dynamic` (JSON null), not a scalar's `()`.
#[test]
fn run_time_shapes_are_dynamic() {
    let model = zoo_model("detector");
    let file = str_of(&model, "model");
    let (stdout, _) = run_expecting(mge().args(["info", file, "--json", "-q"]), 0);
    let info = json_of(&stdout);
    for output in info["outputs"].as_array().unwrap() {
        assert_eq!(output["shape"], Value::Null, "{output}");
    }
    assert_eq!(info["inputs"][0]["shape"], serde_json::json!([1, 3, 32, 32]));
    let (text, _) = run_expecting(mge().args(["info", file, "-q"]), 0);
    for name in model["outputs"].as_object().unwrap().keys() {
        let line = text
            .lines()
            .find(|line| line.starts_with("output") && line.contains(name.as_str()))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(line.contains(" dynamic ") && !line.contains("()"), "{line}");
    }
}
