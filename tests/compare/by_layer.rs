//! Quantized graphs against their float selves: io dumps that keep the
//! quantized dtypes and their scales, and `compare --by-layer` on the float,
//! int8 and ruined-layer networks of `fixtures/make_int8_fixtures.py`
//! (MegEngine's own QAT; its SQNRs and scales in `fixtures/int8_manifest.json`).

use crate::common::*;
use serde_json::Value;

fn int8_manifest() -> Value {
    read_manifest("fixtures/int8_manifest.json")
}

/// `compare A B --by-layer --json` of two of the manifest's models on its feed.
fn by_layer(a: &str, b: &str) -> Value {
    let manifest = int8_manifest();
    let model = |name: &str| manifest["models"][name].as_str().unwrap().to_string();
    let feed = format!("data:{}", manifest["feed"].as_str().unwrap());
    // The outputs differ beyond the default tolerance: a failed check.
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            &model(a),
            &model(b),
            "-i",
            &feed,
            "--by-layer",
            "--no-timing",
            "--json",
        ]),
        1,
    );
    json_of(&stdout)
}

/// The pair whose A var is `var`.
fn pair<'a>(report: &'a Value, var: &str) -> &'a Value {
    report["by_layer"]
        .as_array()
        .unwrap()
        .iter()
        .find(|pair| pair["a_var"] == var)
        .unwrap_or_else(|| panic!("no pair of '{var}' in {report}"))
}

/// An io dump of the int8 graph names each quantized var's dtype and gives
/// the scale MegEngine's graph loader reads (it wrote `int8` and no scale).
#[test]
fn an_io_dump_keeps_quantized_dtypes_and_their_scales() {
    let manifest = int8_manifest();
    let dir = tempfile::tempdir().unwrap();
    let io = dir.path().join("io");
    let feed = format!("data:{}", manifest["feed"].as_str().unwrap());
    run_expecting(
        mge()
            .args([
                "dump",
                manifest["models"]["int8"].as_str().unwrap(),
                "-i",
                &feed,
                "--io",
            ])
            .arg(&io),
        0,
    );
    let index: Value = serde_json::from_slice(&std::fs::read(io.join("index.json")).unwrap()).unwrap();
    let vars = index["vars"].as_array().unwrap();
    let expected = manifest["var_scales"]["int8"].as_object().unwrap();
    for name in [
        "conv1.ConvBias",
        "conv2.ConvBias",
        "conv1.weight",
        "Pooling",
        "fc.MatrixMul",
        // A TypeCvt keeps the dtype it converts to, scale included, in its parameter.
        "quant.TypeCvt",
        "fc.TypeCvt",
    ] {
        let var = vars.iter().find(|var| var["name"] == name).unwrap();
        let reference = &expected[name];
        assert_eq!(var["dtype"], reference["dtype"], "{var}");
        let (scale, reference) = (var["scale"].as_f64().unwrap(), reference["scale"].as_f64().unwrap());
        assert!(
            (scale - reference).abs() <= reference * 1e-6,
            "{name}: {scale} against {reference}"
        );
    }
}

/// The int8 graph against its float self: every layer pairs with its own
/// (a float convolution and ReLU with an int8 ConvBiasForward), each SQNR
/// as MegEngine's Python measured it, the output's above 30 dB.
#[test]
fn by_layer_pairs_every_layer_of_the_int8_graph_with_its_float_self() {
    let manifest = int8_manifest();
    let report = by_layer("float", "int8");
    let sqnr = &manifest["sqnr_db_against_float"]["int8"];
    for (layer, a_var, b_var) in [
        ("conv1", "conv1.RELU", "conv1.ConvBias"),
        ("conv2", "conv2.RELU", "conv2.ConvBias"),
        ("conv3", "conv3.RELU", "conv3.ConvBias"),
        ("out", "out", "out"),
    ] {
        let pair = pair(&report, a_var);
        assert_eq!(pair["b_var"], b_var, "{report}");
        let (got, reference) = (pair["sqnr_db"].as_f64().unwrap(), sqnr[layer].as_f64().unwrap());
        assert!(
            (got - reference).abs() < 0.05,
            "{layer}: {got} dB against MegEngine's {reference}"
        );
        assert!(pair["cosine"].as_f64().unwrap() > 0.999, "{pair}");
    }
    assert_eq!(pair(&report, "conv2.RELU")["b_dtype"], "qint8");
    assert!(pair(&report, "out")["sqnr_db"].as_f64().unwrap() > 30.0);
    assert_eq!(report["by_layer_unpaired_a"], 0, "{report}");
}

/// The copy whose one layer's range was ruined before `quantize`: that
/// layer is where the SQNR falls most.
#[test]
fn by_layer_names_the_layer_whose_range_was_ruined() {
    let manifest = int8_manifest();
    let report = by_layer("float", "ruined");
    let fall = &report["by_layer_fall"];
    assert_eq!(fall["a_var"], manifest["ruined_vars"]["float"], "{report}");
    assert_eq!(fall["b_var"], manifest["ruined_vars"]["int8"], "{report}");
    let ruined = manifest["ruined_layer"].as_str().unwrap();
    let reference = manifest["sqnr_db_against_float"]["ruined"][ruined].as_f64().unwrap();
    assert!((fall["to_db"].as_f64().unwrap() - reference).abs() < 0.05, "{fall}");
}

/// A residual block dumped as the zoo's dump.py does
/// (`fixtures/make_int8_residual_fixtures.py`): the float graph's batch norms
/// compute their scale at run time from weights reshaped to a shape the
/// graph infers. Those are weights, no layer: every layer pairs, the stem,
/// the block's output and the network's with the SQNR MegEngine's Python
/// measured.
#[test]
fn by_layer_pairs_a_residual_block_whose_batch_norms_are_computed_at_run_time() {
    let manifest = read_manifest("fixtures/int8_residual_manifest.json");
    let feed = format!("data:{}", manifest["feed"].as_str().unwrap());
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            manifest["models"]["float"].as_str().unwrap(),
            manifest["models"]["int8"].as_str().unwrap(),
            "-i",
            &feed,
            "--by-layer",
            "--no-timing",
            "--json",
        ]),
        1,
    );
    let report = json_of(&stdout);
    assert_eq!(report["by_layer_unpaired_a"], 0, "{report}");
    assert_eq!(report["by_layer_unpaired_b"], 0, "{report}");
    for stage in ["stem", "block", "out"] {
        let vars = &manifest["vars"][stage];
        let pair = pair(&report, vars["float"].as_str().unwrap());
        assert_eq!(pair["b_var"], vars["int8"], "{report}");
        let got = pair["sqnr_db"].as_f64().unwrap();
        let reference = manifest["sqnr_db_against_float"][stage].as_f64().unwrap();
        assert!(
            (got - reference).abs() < 0.05,
            "{stage}: {got} dB against MegEngine's {reference}"
        );
    }
}
