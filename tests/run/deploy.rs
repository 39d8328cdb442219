//! Deployment artifacts on the real engine: Lite packed and encrypted models,
//! fast-run's modes and caches, extern operators, `tune --save-model`.
//! References come from megenginelite (`fixtures/make_deploy_fixtures.py`).

use std::path::Path;

use crate::common::*;
use serde_json::Value;

/// The extra arguments a fixture needs: a bare encrypted one names its method,
/// one with a user key gets it.
fn load_args(manifest: &Value, model_file: &str) -> Vec<String> {
    let entry = |list: &str| {
        entries(manifest, list)
            .iter()
            .find(|entry| entry["file"] == model_file)
            .cloned()
    };
    let mut args = Vec::new();
    if let Some(method) = entry("packed").and_then(|e| e["bare_model_cryption_name"].as_str().map(String::from)) {
        args.extend(["--model-decryption".to_string(), method]);
    }
    if let Some(key) = entry("user_keys").and_then(|e| e["key_file"].as_str().map(String::from)) {
        args.extend(["--model-key".to_string(), format!("@{key}")]);
    }
    args
}

/// Every loadable packed or encrypted fixture gives megenginelite's outputs in
/// `run`, and `dump --outputs` and `profile` take them too.
#[test]
fn packed_and_encrypted_models_give_megenginelites_outputs() {
    let manifest = deploy_manifest();
    let cases = entries(&manifest, "cases");
    assert!(cases.len() >= 11, "{cases:?}");
    for case in cases {
        let model = case["model_file"].as_str().unwrap();
        if model.ends_with(".mgb") {
            continue; // the extern operator, below
        }
        let dir = tempfile::tempdir().unwrap();
        let mut command = mge();
        command
            .args(["run", model, "-q", "--iter", "2", "--outputs"])
            .arg(dir.path());
        for input in case["inputs"].as_array().unwrap() {
            command.args(["-i", input.as_str().unwrap()]);
        }
        command.args(load_args(&manifest, model));
        run_expecting(&mut command, 0);
        for (name, output) in case["outputs"].as_object().unwrap() {
            let reference = read_f32(&root().join(output["file"].as_str().unwrap()));
            let written = read_f32(&dir.path().join(format!("{name}.npy")));
            assert_close(&written, &reference, model);
        }
    }
    let reference = read_f32(&root().join("fixtures/deploy/ref/conv_float_packed_rc4__conv_data/feat.npy"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let packed = "fixtures/deploy/conv_float_packed_rc4.pack";
    run_expecting(
        mge()
            .args(["dump", packed, "-q", "-i", "fixtures/feeds/conv_data.npy", "--outputs"])
            .arg(&out),
        0,
    );
    assert_close(&read_f32(&out.join("feat.npy")), &reference, "dump --outputs");
    let trace = dir.path().join("trace.json");
    let (stdout, _) = run_expecting(
        mge()
            .args([
                "profile",
                packed,
                "-q",
                "--json",
                "--iter",
                "2",
                "-i",
                "fixtures/feeds/conv_data.npy",
                "-o",
            ])
            .arg(&trace),
        0,
    );
    assert!(
        json_of(&stdout)["rows"].as_array().is_some_and(|rows| !rows.is_empty()),
        "{stdout}"
    );
    assert!(trace.is_file());
}

/// A wrong key, a key of the wrong length, a method the engine lacks: one
/// line each, exit 2, no crash.
#[test]
fn wrong_keys_and_refused_packs_fail_in_one_line() {
    let manifest = deploy_manifest();
    for wrong in entries(&manifest, "wrong_keys") {
        let model = wrong["file"].as_str().unwrap();
        let mut command = mge();
        command.args([
            "run",
            model,
            "-q",
            "--model-key",
            wrong["wrong_key_hex"].as_str().unwrap(),
        ]);
        if model.ends_with(".emod") {
            command.args(["--model-decryption", wrong["method"].as_str().unwrap()]);
        }
        let (_, stderr) = run_expecting(&mut command, 2);
        assert_eq!(stderr.lines().count(), 1, "{model}: {stderr}");
        assert!(stderr.contains("cannot decrypt the model"), "{model}: {stderr}");
    }
    let cases: [(&[&str], &str); 5] = [
        (
            &[
                "run",
                "fixtures/deploy/conv_float_packed_aes.pack",
                "--model-key",
                "0011",
            ],
            "--model-key: AES_default takes a key of exactly 32 bytes, this one has 2",
        ),
        (
            &[
                "run",
                "fixtures/conv_float.mge",
                "--model-key",
                "00112233445566778899aabbccddeeff",
            ],
            "--model-key: the model is not encrypted",
        ),
        (
            &["info", "fixtures/deploy/conv_float_aes.emod"],
            "an encrypted model needs --model-decryption METHOD",
        ),
        (
            &["run", "fixtures/deploy/conv_float_tc1_packed.pack"],
            "packs a testcase container, which MegEngine Lite cannot load",
        ),
        (
            &[
                "run",
                "fixtures/deploy/conv_float_aes.emod",
                "--model-decryption",
                "RC4_default",
            ],
            "cannot decrypt the model with its RC4_default key",
        ),
    ];
    for (args, message) in cases {
        let (_, stderr) = run_expecting(mge().args(args).arg("-q"), 2);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    for refused in entries(&manifest, "pack_errors") {
        let model = refused["file"].as_str().unwrap();
        if model.contains("tc1") {
            continue; // refused before the engine, above
        }
        let (_, stderr) = run_expecting(mge().args(["run", model, "-q"]), 2);
        let engine_says = refused["lite_error_first_line"].as_str().unwrap();
        let words = engine_says
            .trim_start_matches("Error: ")
            .trim_end_matches(", Error Code: 1");
        assert!(stderr.contains(words), "{model}: {stderr}");
    }
}

/// `info` shows the pack: its name, methods, the options its info sets and
/// whether a fast-run cache is embedded; an encrypted graph is unverified.
#[test]
fn info_shows_the_packing() {
    let (stdout, _) = run_expecting(
        mge().args(["info", "fixtures/deploy/conv_float_packed_options.pack", "--json"]),
        0,
    );
    let info = json_of(&stdout);
    let packing = &info["packing"];
    assert_eq!(packing["name"], "conv_float");
    assert_eq!(packing["model_decryption"], "NONE");
    let options: Vec<&str> = packing["info_options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option.as_str().unwrap())
        .collect();
    for set in [
        "--threads",
        "2",
        "--cpu-inplace",
        "--weight-preprocess",
        "--const-shape",
    ] {
        assert!(options.contains(&set), "{options:?}");
    }
    assert_eq!(info["verified"], true);
    let (stdout, _) = run_expecting(
        mge().args([
            "info",
            "fixtures/deploy/recorded/conv_float_packed_fastrun.pack",
            "--json",
        ]),
        0,
    );
    let recorded = std::fs::metadata(root().join("fixtures/deploy/recorded/conv_float.fastrun.cache")).unwrap();
    assert_eq!(json_of(&stdout)["packing"]["fast_run_cache_bytes"], recorded.len());
    let (stdout, _) = run_expecting(
        mge().args(["info", "fixtures/deploy/conv_float_packed_rc4_info.pack", "--json"]),
        0,
    );
    let info = json_of(&stdout);
    // Its graph, RC4-encrypted with the built-in key, is verified once decrypted.
    assert_eq!(info["verified"], true);
    assert_eq!(info["packing"]["info_encrypted"], true);
    assert_eq!(info["outputs"][0]["name"], "feat");
}

/// `--c-opr-lib` loads the extern operator the model needs; without it the
/// error names the operator and the option.
#[test]
fn extern_operators_load_from_their_library() {
    let manifest = deploy_manifest();
    let extern_opr = &manifest["extern_opr"];
    let case = entries(&manifest, "cases")
        .iter()
        .find(|case| case["name"] == "extern_scale_bias__x")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = extern_opr["file"].as_str().unwrap();
    let (stdout, _) = run_expecting(
        mge()
            .args(["run", model, "-q", "-i", "fixtures/deploy/extern_x.npy", "--c-opr-lib"])
            .arg(extern_operator_library())
            .arg("--outputs")
            .arg(dir.path()),
        0,
    );
    assert!(stdout.contains("fbs-v2"), "{stdout}");
    let reference = read_f32(&root().join(case["outputs"]["y"]["file"].as_str().unwrap()));
    assert_close(&read_f32(&dir.path().join("y.npy")), &reference, model);
    let (_, stderr) = run_expecting(mge().args(["run", model, "-q"]), 2);
    let loader = extern_opr["loader_name"].as_str().unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("extern operator '{loader}'")) && stderr.contains("--c-opr-lib"),
        "{stderr}"
    );
    let (_, stderr) = run_expecting(
        mge().args(["run", model, "-q", "--c-opr-lib", "/nonexistent/lib.so"]),
        2,
    );
    assert!(
        stderr.contains("--c-opr-lib /nonexistent/lib.so: no such file"),
        "{stderr}"
    );
    let (_, stderr) = run_expecting(mge().args(["run", model, "-q", "--c-opr-lib", "/dev/zero"]), 2);
    assert!(
        stderr.contains("--c-opr-lib /dev/zero is not a regular file"),
        "{stderr}"
    );
}

/// Without a GPU, `--tensorrt-cache` is refused in one line (it needs
/// `--tensorrt`, which needs a CUDA device).
#[test]
fn tensorrt_cache_without_a_gpu_is_one_line() {
    let (_, stderr) = run_expecting(
        mge().args(["run", "fixtures/conv_float.mge", "-q", "--tensorrt-cache", "trt.cache"]),
        2,
    );
    assert!(stderr.contains("--tensorrt"), "{stderr}");
    let (_, stderr) = run_expecting(
        mge().args([
            "run",
            "fixtures/conv_float.mge",
            "-q",
            "--device",
            "cuda",
            "--tensorrt",
            "--tensorrt-cache",
            "trt.cache",
        ]),
        2,
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!root().join("trt.cache").exists());
}

/// `--fast-run` fills a cache; run again, nothing new is profiled and the
/// file stays as it was; the cache alone is only read, with a note counting
/// the operators it had nothing for, and gives the same outputs.
#[test]
fn fast_run_caches_are_written_only_when_something_was_profiled() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("fast.cache");
    let reference = read_f32(&root().join("fixtures/deploy/ref/conv_float_packed__conv_data/feat.npy"));
    let run = |extra: &[&str], out: &Path| {
        let mut command = mge();
        command
            .args([
                "run",
                "fixtures/conv_float.mge",
                "-i",
                "fixtures/feeds/conv_data.npy",
                "--iter",
                "1",
            ])
            .args(extra)
            .arg("--fast-run-cache")
            .arg(&cache)
            .arg("--outputs")
            .arg(out);
        let (_, stderr) = run_expecting(&mut command, 0);
        assert_close(&read_f32(&out.join("feat.npy")), &reference, &format!("{extra:?}"));
        stderr
    };
    run(&["--fast-run"], &dir.path().join("a"));
    let written = std::fs::metadata(&cache).unwrap();
    assert!(written.len() > 4, "the profiled algorithms are in the cache");
    std::thread::sleep(std::time::Duration::from_millis(20));
    run(&["--fast-run"], &dir.path().join("b"));
    let again = std::fs::metadata(&cache).unwrap();
    assert_eq!(
        again.modified().unwrap(),
        written.modified().unwrap(),
        "nothing new: not rewritten"
    );
    let stderr = run(&[], &dir.path().join("c"));
    assert!(
        stderr.contains("the algorithms of 0 of 1 operator were not in it") && stderr.contains("nothing was profiled"),
        "{stderr}"
    );
    std::fs::write(&cache, [0u8; 4]).unwrap();
    let stderr = run(&[], &dir.path().join("d"));
    assert!(
        stderr.contains("the algorithms of 1 of 1 operator were not in it"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&cache).unwrap(),
        [0; 4],
        "a cache that is only read stays"
    );
    let (_, stderr) = run_expecting(
        mge()
            .args(["run", "fixtures/conv_float.mge", "-q", "--fast-run-cache"])
            .arg(dir.path().join("none")),
        2,
    );
    assert!(
        stderr.contains("alone only reads a cache, and there is none"),
        "{stderr}"
    );
    let (_, stderr) = run_expecting(
        mge().args([
            "run",
            "fixtures/conv_float.mge",
            "-q",
            "--fast-run-shared-batch-size",
            "2",
        ]),
        2,
    );
    assert!(stderr.contains("--fast-run-shared-batch-size only matters"), "{stderr}");
}

/// A pack with an embedded fast-run cache runs on it without profiling.
#[test]
fn an_embedded_fast_run_cache_is_read_not_profiled() {
    let dir = tempfile::tempdir().unwrap();
    let (_, stderr) = run_expecting(
        mge()
            .args([
                "run",
                "fixtures/deploy/recorded/conv_float_packed_fastrun.pack",
                "-i",
                "fixtures/feeds/conv_data.npy",
                "--iter",
                "1",
                "--outputs",
            ])
            .arg(dir.path()),
        0,
    );
    assert!(stderr.contains("a fast-run cache of 2833 bytes"), "{stderr}");
    assert!(
        stderr.contains("embedded in the model: the algorithms of 0 of 1 operator were not in it"),
        "{stderr}"
    );
    let reference = read_f32(&root().join("fixtures/deploy/ref/conv_float_packed_fastrun__conv_data/feat.npy"));
    assert_close(&read_f32(&dir.path().join("feat.npy")), &reference, "embedded cache");
}

/// `tune --save-model` writes a pack that runs with no flags, says what it
/// applied and computes the model's outputs.
#[test]
fn a_tuned_model_carries_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("tuned.mge");
    run_expecting(
        mge()
            .args([
                "tune",
                "fixtures/conv_float.mge",
                "-q",
                "-i",
                "fixtures/feeds/conv_data.npy",
                "--budget",
                "15",
                "--weight-preprocess",
                "--save-model",
            ])
            .arg(&saved),
        0,
    );
    let (stdout, _) = run_expecting(mge().arg("info").arg(&saved).arg("--json"), 0);
    let packing = &json_of(&stdout)["packing"];
    assert_eq!(packing["name"], "tuned");
    assert!(
        packing["info_options"]
            .as_array()
            .unwrap()
            .contains(&Value::from("--weight-preprocess")),
        "{packing}"
    );
    let out = dir.path().join("out");
    let (_, stderr) = run_expecting(
        mge()
            .arg("run")
            .arg(&saved)
            .args(["-i", "fixtures/feeds/conv_data.npy", "--iter", "1", "--outputs"])
            .arg(&out),
        0,
    );
    assert!(
        stderr.contains("carries") && stderr.contains("--weight-preprocess"),
        "{stderr}"
    );
    let reference = read_f32(&root().join("fixtures/deploy/ref/conv_float_packed__conv_data/feat.npy"));
    assert_close(&read_f32(&out.join("feat.npy")), &reference, "tuned model");
    let (_, stderr) = run_expecting(
        mge()
            .args(["tune", "fixtures/deploy/conv_float_packed.pack", "-q", "--save-model"])
            .arg(&saved),
        2,
    );
    assert!(stderr.contains("--save-model packs a plain model"), "{stderr}");
}
