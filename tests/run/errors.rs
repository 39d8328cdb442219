//! Every error a user can cause exits 2 with one clear line and no panic.

use crate::common::*;

fn fails_with(args: &[&str], needles: &[&str]) {
    let (stdout, stderr) = run_expecting(mge().args(args), 2);
    assert!(stdout.is_empty(), "nothing on stdout on error: {stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let first = stderr
        .lines()
        .find(|l| l.starts_with("mge: error:"))
        .unwrap_or_else(|| panic!("{stderr}"));
    for needle in needles {
        assert!(first.contains(needle), "{needle:?} not in {first:?}");
    }
}

#[test]
fn missing_model_file() {
    fails_with(&["run", "fixtures/nope.mge"], &["fixtures/nope.mge", "No such file"]);
    fails_with(&["info", "fixtures/nope.mge"], &["fixtures/nope.mge"]);
}

#[test]
fn not_a_model() {
    fails_with(
        &["run", "fixtures/not_a_model.mge"],
        &["not_a_model.mge is not a usable MegEngine model: it is a text file ('this is not a MegEngine model')"],
    );
    fails_with(
        &["run", "fixtures/feeds/cat.png"],
        &["cat.png is not a usable MegEngine model: it is a PNG image"],
    );
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.mge");
    std::fs::write(&empty, b"").unwrap();
    fails_with(
        &["info", empty.to_str().unwrap()],
        &["empty.mge is not a usable MegEngine model: the file is empty"],
    );
    // Only bytes of no known kind may be an encrypted model.
    for model in [
        "fixtures/not_a_model.mge",
        "fixtures/feeds/cat.png",
        empty.to_str().unwrap(),
    ] {
        let (_, stderr) = run_expecting(mge().args(["info", model]), 2);
        assert!(!stderr.contains("--model-decryption"), "{stderr}");
    }
}

#[test]
fn truncated_model() {
    fails_with(&["run", "fixtures/conv_float_truncated.mge"], &["truncated"]);
}

#[test]
fn bad_specs() {
    for (spec, needle) in [
        ("#rand(1)", "#rand(1)"),
        ("#rand(5,1)", "#rand(5,1)"),
        ("#rand(0,1,x)", "#rand(0,1,x)"),
        ("fixtures/feeds/missing.npy", "missing.npy"),
        ("fixtures/feeds/notes.txt", "notes.txt"),
        ("[[1,2],[3]", "[[1,2],[3]"),
        ("[\"a\"]", "[\"a\"]"),
    ] {
        fails_with(&["run", "fixtures/conv_float.mge", "-i", spec], &[needle]);
    }
    fails_with(
        &[
            "run",
            "fixtures/conv_float.mge",
            "-i",
            "@fixtures/feeds/missing-list.txt",
        ],
        &["missing-list.txt"],
    );
}

#[test]
fn unknown_input_name() {
    fails_with(
        &["run", "fixtures/conv_float.mge", "-i", "pixels:#rand(0,1)"],
        &["pixels", "data"],
    );
}

#[test]
fn inputs_left_without_a_feed() {
    fails_with(
        &["run", "fixtures/two_inputs.mge", "-i", "x:fixtures/feeds/x.npy"],
        &["'idx'"],
    );
}

#[test]
fn a_shape_the_model_refuses() {
    fails_with(
        &[
            "run",
            "fixtures/two_inputs.mge",
            "-i",
            "x:fixtures/feeds/x_bad_shape.npy",
            "-i",
            "idx:[[0,0,0,0]]",
        ],
        &["input 'x'", "(1, 5)", "(1, 4)", "x_bad_shape.npy"],
    );
    fails_with(
        &[
            "run",
            "fixtures/conv_float.mge",
            "-i",
            "fixtures/feeds/conv_data_bad_channels.npy",
        ],
        &["input 'data'", "(1, 4, 16, 16)", "(1, 3, 16, 16)"],
    );
}

#[test]
fn a_dtype_that_cannot_be_converted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("complex.npy");
    let header = "{'descr': '<c8', 'fortran_order': False, 'shape': (1, 4), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header:<117}\n");
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    bytes.extend([0u8; 32]);
    std::fs::write(&path, bytes).unwrap();
    let spec = format!("x:{}", path.display());
    fails_with(
        &["run", "fixtures/two_inputs.mge", "-i", &spec, "-i", "idx:[[0,0,0,0]]"],
        &["input 'x'", "<c8"],
    );
}

#[test]
fn a_cuda_device_that_is_not_there() {
    fails_with(&["run", "fixtures/conv_float.mge", "--device", "cuda:7"], &["cuda:7"]);
    fails_with(&["run", "fixtures/conv_float.mge", "--device", "tpu"], &["tpu"]);
}

#[test]
fn a_layout_transform_for_the_other_device() {
    // The target as the user writes it, not as the code spells it.
    fails_with(
        &["run", "fixtures/conv_float.mge", "--layout-transform", "cuda"],
        &["--layout-transform cuda does not match --device cpu"],
    );
}

#[test]
fn bad_expectations() {
    fails_with(
        &[
            "run",
            "fixtures/conv_float.mge",
            "--expect",
            "nope:fixtures/ref/conv_float__conv_data/feat.npy",
        ],
        &["nope", "feat"],
    );
    fails_with(
        &["run", "fixtures/conv_float.mge", "--expect", "feat:missing.npy"],
        &["missing.npy"],
    );
}

#[test]
fn outputs_into_a_file_not_a_folder() {
    fails_with(
        &["run", "fixtures/conv_float.mge", "--outputs", "fixtures/conv_float.mge"],
        &["--outputs"],
    );
}

#[test]
fn a_missing_runtime_says_how_to_install_it() {
    let home = tempfile::tempdir().unwrap();
    let (_, stderr) = run_expecting(
        mge()
            .args(["run", "fixtures/conv_float.mge"])
            .env("MGE_HOME", home.path())
            .env_remove("MGE_LITE_LIB")
            // No python3 either, so no megenginelite to fall back on.
            .env("PATH", home.path()),
        2,
    );
    assert!(stderr.contains("mge runtime install"), "{stderr}");
    let (_, stderr) = run_expecting(
        mge().args(["run", "fixtures/conv_float.mge", "--lite-lib", "/nonexistent.so"]),
        2,
    );
    assert!(stderr.contains("/nonexistent.so"), "{stderr}");
    let (_, stderr) = run_expecting(
        mge().args([
            "run",
            "fixtures/conv_float.mge",
            "--lite-lib",
            "fixtures/conv_float.mge",
        ]),
        2,
    );
    assert!(stderr.contains("cannot load"), "{stderr}");
}

/// A usage error is one line and a hint, as every error is
/// (docs/conventions.md), the hint leading to the option meant; `--help`
/// and `--version` print as clap prints them.
#[test]
fn usage_errors_are_one_line_and_a_hint() {
    let see_run = "see 'mge run --help'";
    for (args, error, hint) in [
        (
            &["run"][..],
            "the following required arguments were not provided: <MODEL>".to_string(),
            see_run.to_string(),
        ),
        (
            &["run", "m.mge", "--iter", "0"],
            "invalid value '0' for '--iter <N>': 0 is not in 1..=1000000".to_string(),
            see_run.to_string(),
        ),
        (
            &["run", "m.mge", "--stat", "meen"],
            "invalid value 'meen' for '--stat <STAT>' (possible values: max, mean, median)".to_string(),
            format!("a similar value exists: 'mean'; {see_run}"),
        ),
        (
            &["run", "m.mge", "--fast-run", "--full-run"],
            "the argument '--fast-run' cannot be used with '--full-run'".to_string(),
            see_run.to_string(),
        ),
        (
            &["frobnicate"],
            "unrecognized subcommand 'frobnicate'".to_string(),
            "see 'mge --help'".to_string(),
        ),
        (
            &["runtime", "instal"],
            "unrecognized subcommand 'instal'".to_string(),
            "a similar subcommand exists: 'install'; see 'mge runtime --help'".to_string(),
        ),
        // Other tools' names lead to the option meant, not to a similar-looking one.
        (
            &["run", "m.mge", "--output-dir", "out"],
            "unexpected argument '--output-dir' found".to_string(),
            format!("to write the outputs as DIR/NAME.npy, use --outputs DIR; {see_run}"),
        ),
        (
            &["run", "m.mge", "--iterations", "5"],
            "unexpected argument '--iterations' found".to_string(),
            format!("to time N runs, use --iter N; {see_run}"),
        ),
        // An old spelling, kept as a hidden alias, is named by its new name.
        (
            &["profile", "m.mge", "--outputt", "t.json"],
            "unexpected argument '--outputt' found".to_string(),
            "a similar option exists: '--trace'; see 'mge profile --help'".to_string(),
        ),
        (
            &["run", "m.mge", "--extra-outputs", "x"],
            "unexpected argument '--extra-outputs' found".to_string(),
            format!("a similar option exists: '--extra-output'; {see_run}"),
        ),
    ] {
        let (stdout, stderr) = run_expecting(mge().args(args), 2);
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(stderr, format!("mge: error: {error}\nhint: {hint}\n"), "{args:?}");
    }
    let (stdout, _) = run_expecting(mge().arg("--version"), 0);
    assert_eq!(stdout, format!("mge {}\n", env!("CARGO_PKG_VERSION")));
    let (stdout, _) = run_expecting(mge().args(["run", "--help"]), 0);
    assert!(
        stdout.starts_with(
            "Load a model, feed it, run it and report outputs and timing\n\nUsage: mge run [OPTIONS] <MODEL>\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("--extra-output <VAR>") && !stdout.contains("--output <VAR>"),
        "{stdout}"
    );
    // A command without its subcommand shows its help, as clap does.
    let (_, stderr) = run_expecting(mge().arg("runtime"), 2);
    assert!(stderr.contains("Usage: mge runtime [OPTIONS] <COMMAND>"), "{stderr}");
}

#[test]
fn messages_name_what_is_wrong_with_a_model_file() {
    let dir = tempfile::tempdir().unwrap();
    // A header-only stand-in for a legacy MegBrain dump: its first bytes.
    let legacy = dir.path().join("legacy.mge");
    std::fs::write(&legacy, b"mgb0001\x8a\x03\x00\x00\x00\xdc\x76\x1b\x00").unwrap();
    fails_with(
        &["info", legacy.to_str().unwrap()],
        &["legacy MegBrain graph (`mgb0001`)", "Lite 1.13 cannot load"],
    );
    let (_, stderr) = run_expecting(mge().arg("info").arg(&legacy), 2);
    assert!(!stderr.contains("--model-decryption"), "{stderr}");
    // A container whose header counts one testcase more than it holds.
    let mut bytes = std::fs::read(root().join("fixtures/conv_float_tc1.mge")).unwrap();
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    let overcounted = dir.path().join("overcounted.mge");
    std::fs::write(&overcounted, bytes).unwrap();
    fails_with(
        &["run", overcounted.to_str().unwrap()],
        &["header counts 2 testcases but the file holds 1"],
    );
}

/// A dilated convolution has only the engine's naive algorithm on the CPU:
/// fast-run, which leaves naive algorithms out, fails on it as megenginelite
/// does (`fixtures/algo_manifest.json`), and the line names --fast-run and
/// the operator before the engine's words; the heuristic and --full-run run
/// it to megenginelite's outputs.
#[test]
fn a_failure_fast_run_causes_names_fast_run() {
    let manifest = algo_manifest();
    let model = manifest["model"].as_str().unwrap();
    let feed = format!("x:{}", manifest["input"].as_str().unwrap());
    let engine_words = manifest["fast_run"]["error"].as_str().unwrap();
    fails_with(
        &["run", model, "-i", &feed, "--fast-run", "-q", "--iter", "1"],
        &[
            "mge: error: --fast-run left the engine no algorithm for a ConvolutionForward (--fast-run profiles only \
             the optimized algorithms, not the naive ones, which --full-run profiles too): run without it; the engine said: ",
            engine_words,
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    for (search, reference) in [(None, "heuristic"), (Some("--full-run"), "full_run")] {
        let out = dir.path().join(reference);
        let mut command = mge();
        command
            .args(["run", model, "-i", &feed, "-q", "--iter", "1", "--outputs"])
            .arg(&out);
        command.args(search);
        run_expecting(&mut command, 0);
        let written = read_f32(&out.join("y.npy"));
        let expected = flattened(&manifest[reference]["outputs"]["y"]);
        let expected =
            ndarray::ArrayD::from_shape_vec(written.shape(), expected).expect("the shape megenginelite gave");
        assert_close(&written, &expected, reference);
    }
}

fn flattened(value: &serde_json::Value) -> Vec<f32> {
    match value.as_array() {
        Some(items) => items.iter().flat_map(flattened).collect(),
        None => vec![value.as_f64().unwrap() as f32],
    }
}
