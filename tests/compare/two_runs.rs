//! `mge compare` running two models, or one model under two configurations:
//! the fixture models differing in one layer's weights (`fixtures/manifest.json`
//! names the layer the generator changed) and configurations that must agree.

use crate::common::*;
use serde_json::Value;

/// The runs' outputs and vars, untimed (`timing.rs` times them).
fn compare_runs(args: &[&str], code: i32) -> Value {
    let (stdout, _) = run_expecting(
        mge().arg("compare").args(args).args(["-q", "--json", "--no-timing"]),
        code,
    );
    json_of(&stdout)
}

#[test]
fn two_models_name_the_changed_layer_as_the_first_divergence() {
    let manifest = manifest();
    let case = &manifest["divergence"];
    let report = compare_runs(
        &[
            case["a"].as_str().unwrap(),
            case["b"].as_str().unwrap(),
            "-i",
            case["input"].as_str().unwrap(),
        ],
        1,
    );
    let changed = &case["changed_layer"];
    let first = &report["first_divergence"];
    assert_eq!(first["operator"], changed["operator"], "{report}");
    assert_eq!(first["type"], changed["type"]);
    assert_eq!(report["failed"], 1, "the output differs: {report}");
    // The weight that differs, and the layer that reads it.
    let sources = report["differing_sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1, "{report}");
    assert_eq!(sources[0]["readers"], serde_json::json!([changed["operator"]]));
    // A model against itself does not diverge.
    let same = compare_runs(
        &[
            case["a"].as_str().unwrap(),
            case["a"].as_str().unwrap(),
            "-i",
            case["input"].as_str().unwrap(),
        ],
        0,
    );
    assert!(same["first_divergence"].is_null(), "{same}");
    assert_eq!(same["passed"], 1);
}

/// NCHW44 holds on every CPU here: the outputs agree with the plain run's at
/// 1e-4, and the vars it lays out in blocks of 4 channels are read back as NCHW.
#[test]
fn a_layout_compares_clean_against_the_plain_run() {
    let report = compare_runs(
        &[
            "fixtures/conv_float.mge",
            "-i",
            "fixtures/feeds/conv_data.npy",
            "--b-options",
            "--layout nchw44",
            "--maxerr",
            "1e-4",
        ],
        0,
    );
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(1), Some(0)),
        "{report}"
    );
    assert!(report["first_divergence"].is_null(), "{report}");
    assert_eq!(report["b"]["options"], serde_json::json!(["--layout", "nchw44"]));
    let relaid = report["vars"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["relayout"].is_string())
        .count();
    assert!(relaid > 0, "{report}");
    // The output against megenginelite's reference, from the kept run.
    let dir = tempfile::tempdir().unwrap();
    let keep = dir.path().join("kept");
    run_expecting(
        mge()
            .args([
                "compare",
                "fixtures/conv_float.mge",
                "-q",
                "-i",
                "fixtures/feeds/conv_data.npy",
            ])
            .args(["--b-options", "--layout nchw44", "--no-timing", "--keep"])
            .arg(&keep),
        0,
    );
    let reference = read_f32(&root().join("fixtures/ref/conv_float__conv_data/feat.npy"));
    for side in ["a", "b"] {
        assert_close(&read_f32(&keep.join(side).join("outputs/feat.npy")), &reference, side);
        assert!(keep.join(side).join("io/index.json").is_file());
    }
    let (_, stderr) = run_expecting(
        mge()
            .args(["compare", "fixtures/conv_float.mge", "--b-naive", "--keep"])
            .arg(&keep),
        2,
    );
    assert!(stderr.contains("is not empty"), "{stderr}");
}

/// The engine's naive reference kernels (MGB_USE_MEGDNN_DBG=2) agree with its
/// optimized ones on the fixture's reference run.
#[test]
fn naive_kernels_agree_with_the_optimized_ones() {
    let report = compare_runs(
        &[
            "fixtures/divergence_a.mge",
            "-i",
            "fixtures/feeds/divergence_data.npy",
            "--b-naive",
        ],
        0,
    );
    assert_eq!(report["b"]["naive_kernels"], true);
    assert!(report["first_divergence"].is_null(), "{report}");
}

#[test]
fn side_options_are_read_as_engine_options() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["fixtures/conv_float.mge"],
            "add --a-options ARGS, --b-options ARGS, --b-naive, or --a-runtime/--b-runtime VERSION",
        ),
        (
            &["fixtures/conv_float.mge", "--b-options", "--layout nchw99"],
            "--b-options '--layout nchw99'",
        ),
        (
            &["fixtures/conv_float.mge", "--a-options", "--threads"],
            "--a-options '--threads'",
        ),
        (
            &["fixtures/conv_float.mge", "fixtures/feeds/conv_data.npy"],
            "A is a model and B is not",
        ),
        (
            &[
                "fixtures/feeds/conv_data.npy",
                "fixtures/feeds/conv_data.npy",
                "--threads",
                "2",
            ],
            "is not a model",
        ),
    ];
    for (args, message) in cases {
        let (_, stderr) = run_expecting(mge().arg("compare").args(args), 2);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

/// A side the engine takes down is one line, and its hint one more.
#[test]
fn a_sides_death_is_one_line_and_its_hint() {
    let side = format!("--lite-lib {}", fault_library().display());
    let (_, stderr) = run_expecting(
        mge()
            .env("MGE_FAULT", "exit")
            .args(["compare", "fixtures/conv_float.mge", "-q", "--no-timing", "--b-options"])
            .arg(&side),
        2,
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("mge: error: run b ("), "{stderr}");
    assert!(lines[1].starts_with("hint: "), "{stderr}");
}

/// A side's option replaces the common one of its kind, a default too: both
/// sides run on the CPU (on any machine, with a GPU or without).
#[test]
fn a_sides_default_replaces_the_common_option() {
    let report = compare_runs(
        &[
            "fixtures/conv_float.mge",
            "--device",
            "cuda",
            "--a-options",
            "--device cpu",
            "--b-options",
            "--device cpu --threads 1",
        ],
        0,
    );
    assert_eq!(
        report["a"]["options"],
        serde_json::json!(["--device", "cpu"]),
        "{report}"
    );
    assert_eq!(
        report["b"]["options"],
        serde_json::json!(["--device", "cpu", "--threads", "1"]),
        "{report}"
    );
}

/// A run the engine takes down is named, and nothing is kept.
#[test]
fn a_failing_run_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let keep = dir.path().join("kept");
    let (_, stderr) = run_expecting(
        mge()
            .args([
                "compare",
                "fixtures/conv_float.mge",
                "fixtures/not_a_model.mge",
                "-q",
                "--keep",
            ])
            .arg(&keep),
        2,
    );
    assert!(
        stderr.starts_with("mge: error: run b (fixtures/not_a_model.mge): "),
        "{stderr}"
    );
    assert!(!keep.exists());
    assert!(left_in(dir.path()).is_empty(), "{:?}", left_in(dir.path()));
}

/// The report of a run of an encrypted model carries the structural diff,
/// the graph decrypted with the key each side's engine got; an inline key
/// is shown nowhere.
#[test]
fn an_encrypted_models_run_carries_its_structure() {
    let key = "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf";
    let cases = [
        (
            "fixtures/deploy/conv_float_packed_aes_userkey.pack",
            format!("--model-key {key}"),
            "packed, AES_default-encrypted fbs-v2",
        ),
        (
            "fixtures/deploy/conv_float_rc4.emod",
            "--model-decryption RC4_default".to_string(),
            "RC4_default-encrypted fbs-v2",
        ),
    ];
    for (model, options, format) in cases {
        let (stdout, stderr) = run_expecting(
            mge().args([
                "compare",
                "--json",
                "--no-timing",
                "fixtures/conv_float.mge",
                model,
                "-i",
                "fixtures/feeds/conv_data.npy",
                "--b-options",
                &options,
            ]),
            0,
        );
        let report = json_of(&stdout);
        if options.starts_with("--model-key") {
            assert_eq!(report["b"]["options"], serde_json::json!(["--model-key", "(a key)"]));
        }
        let structure = &report["structure"];
        assert_eq!(structure["dumped"]["b"]["format"], format, "{report}");
        assert_eq!(structure["ops_changed"], serde_json::json!([]), "{report}");
        assert_eq!(structure["params"]["differing_tensors"], 0, "{report}");
        assert!(!stdout.contains(key) && !stderr.contains(key), "{stdout}\n{stderr}");
    }
}

/// One model on two runtimes is two configurations, with no other option:
/// two stand-in runtimes installed as versions of their own, and the
/// engine's runtime against one of them (the stand-in's outputs are zeros).
#[test]
fn one_model_runs_on_two_runtimes() {
    let (stdout, _) = run_expecting(mge().args(["runtime", "info", "--json"]), 0);
    let engine = json_of(&stdout)["path"].as_str().unwrap().to_string();
    let (home, wheels) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let library = format!("not an ELF file\0{CU101_GENCODE}\0");
    for version in ["1.13.0+one", "1.13.0+two"] {
        let wheel = stand_in_wheel(wheels.path(), version, WheelFile::Bytes(library.as_bytes()));
        run_expecting(
            mge_home(home.path())
                .args(["runtime", "install", "-q", "--wheel"])
                .arg(&wheel),
            0,
        );
    }
    let installed = |version: &str| {
        home.path()
            .join("mge/runtime")
            .join(version)
            .join(STAND_IN_LITE)
            .display()
            .to_string()
    };
    let compare = |runtimes: &[&str], code: i32| {
        let (stdout, _) = run_expecting(
            mge_home(home.path())
                .env("MGE_LITE_LIB", &engine)
                .args(["compare", "-q", "--json", "--no-timing", "fixtures/conv_float.mge"])
                .args(["-i", "fixtures/feeds/conv_data.npy"])
                .args(runtimes),
            code,
        );
        json_of(&stdout)
    };
    let report = compare(&["--a-runtime", "1.13.0+one", "--b-runtime", "1.13.0+two"], 0);
    assert_eq!(report["a"]["runtime"], installed("1.13.0+one"), "{report}");
    assert_eq!(report["b"]["runtime"], installed("1.13.0+two"), "{report}");
    assert_eq!(report["a"]["options"], serde_json::json!([]), "{report}");
    // A on the runtime the tool would use (MGE_LITE_LIB: the engine), B on a stand-in.
    let report = compare(&["--b-runtime", "1.13.0+one"], 1);
    assert!(report["a"].get("runtime").is_none(), "{report}");
    assert_eq!(report["b"]["runtime"], installed("1.13.0+one"), "{report}");
    let mismatch = &report["outputs"][0]["first_mismatch"];
    assert_eq!(mismatch["b"], 0.0, "{report}");
    assert_ne!(mismatch["a"], 0.0, "{report}");
}
