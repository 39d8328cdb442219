//! `mge run` on the real engine against MegEngine's reference outputs.

mod algo_cache;
mod deploy;
mod errors;
mod measure;
mod no_testcase;
mod sweep;

use crate::common::*;

#[test]
fn every_reference_case_matches_megenginelite() {
    let manifest = manifest();
    for case in entries(&manifest, "cases") {
        let name = case["name"].as_str().unwrap();
        let mut command = mge();
        command.args([
            "run",
            case["model_file"].as_str().unwrap(),
            "--iter",
            "2",
            "--warmup",
            "1",
            "-q",
        ]);
        for spec in case["inputs"].as_array().unwrap() {
            command.args(["-i", spec.as_str().unwrap()]);
        }
        if case["resize_input"].as_bool().unwrap() {
            command.arg("--resize-input");
        }
        let outputs = case["outputs"].as_object().unwrap();
        for (output, reference) in outputs {
            command.args(["--expect", &format!("{output}:{}", reference["file"].as_str().unwrap())]);
        }
        command.args(["--maxerr", "1e-5", "--json"]);
        let (stdout, _) = run_expecting(&mut command, 0);
        let report = json_of(&stdout);
        let checked = report["expect"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no expect in {report}"));
        assert_eq!(checked.len(), outputs.len(), "{name}");
        assert!(checked.iter().all(|e| e["passed"] == true), "{name}: {report}");
    }
}

#[test]
fn written_outputs_equal_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = mge();
    command.args([
        "run",
        "fixtures/two_inputs.mge",
        "-i",
        "fixtures/feeds/two_inputs.npz",
        "-q",
        "--outputs",
    ]);
    command.arg(dir.path());
    run_expecting(&mut command, 0);
    let written = read_f32(&dir.path().join("y.npy"));
    let reference = read_f32(&root().join("fixtures/ref/two_inputs__npz/y.npy"));
    assert_close(&written, &reference, "y");
}

#[test]
fn two_outputs_are_both_reported_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = mge();
    command.args([
        "run",
        "fixtures/image_uint8.mge",
        "-i",
        "fixtures/feeds/cat.png",
        "--json",
        "-q",
        "--outputs",
    ]);
    command.arg(dir.path());
    let (stdout, _) = run_expecting(&mut command, 0);
    let report = json_of(&stdout);
    let manifest = manifest();
    let declared = &model(&manifest, "image_uint8")["outputs"];
    let names: Vec<&str> = report["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = declared
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, expected);
    for name in expected {
        let reference = read_f32(&root().join(format!("fixtures/ref/image_uint8__cat_png/{name}.npy")));
        assert_close(&read_f32(&dir.path().join(format!("{name}.npy"))), &reference, name);
    }
    assert_eq!(report["inputs"][0]["dtype"], "uint8");
    assert_eq!(report["inputs"][0]["source"], "fixtures/feeds/cat.png");
}

fn scale2_outputs(extra: &[&str]) -> ndarray::ArrayD<f32> {
    let dir = tempfile::tempdir().unwrap();
    let mut command = mge();
    command.args(["run", "fixtures/scale2.mge", "-q", "--iter", "1", "--outputs"]);
    command.arg(dir.path()).args(extra);
    run_expecting(&mut command, 0);
    read_f32(&dir.path().join("y.npy"))
}

#[test]
fn seeded_random_feeds_repeat_bit_for_bit() {
    let first = scale2_outputs(&["-i", "#rand(-3,5)", "--seed", "7"]);
    let again = scale2_outputs(&["-i", "#rand(-3,5)", "--seed", "7"]);
    let other = scale2_outputs(&["-i", "#rand(-3,5)", "--seed", "8"]);
    assert_eq!(first, again);
    assert_ne!(first, other);
    // scale2 doubles its input, so the feed itself is y / 2.
    assert_eq!(first.shape(), [2, 3, 4, 5]);
    assert!(first.iter().all(|y| (-6.0..10.0).contains(y)), "{first}");
    let mean = first.mean().unwrap() / 2.0;
    assert!((mean - 1.0).abs() < 0.5, "uniform on [-3,5) has mean 1, got {mean}");
}

#[test]
fn random_feeds_take_explicit_and_partial_shapes() {
    assert_eq!(scale2_outputs(&["-i", "x:#rand(0,1,2,3,4,5)"]).shape(), [2, 3, 4, 5]);
    assert_eq!(scale2_outputs(&["-i", "#rand(0, 1, 2, ...)"]).shape(), [2, 3, 4, 5]);
    // An elementwise model accepts another shape: the feed's shape wins.
    assert_eq!(scale2_outputs(&["-i", "#rand(0,1,4,5)"]).shape(), [4, 5]);
}

#[test]
fn a_model_without_feeds_gets_random_inputs_and_a_note() {
    let (stdout, stderr) = run_expecting(mge().args(["run", "fixtures/two_inputs.mge", "--json"]), 0);
    assert!(
        stderr.contains("x:#rand(0,1)") && stderr.contains("idx:#rand(0,255)"),
        "{stderr}"
    );
    let report = json_of(&stdout);
    assert_eq!(report["inputs"].as_array().unwrap().len(), 2);
    let timing = &report["timing_ms"];
    assert_eq!(timing["iterations"], 10);
    let (min, median, max) = (
        timing["min"].as_f64().unwrap(),
        timing["median"].as_f64().unwrap(),
        timing["max"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= median && median <= max, "{timing}");
    assert!(
        timing.get("iterations_ms").is_none(),
        "kept only with --all-times: {timing}"
    );
}

#[test]
fn a_duration_keeps_running_and_all_times_lists_each_run() {
    let timed = |iter: &str, seconds: &str| {
        let started = std::time::Instant::now();
        let mut command = mge();
        command.args(["run", "fixtures/conv_float.mge", "-q", "--json", "--all-times"]);
        command.args(["--iter", iter, "--duration", seconds]);
        let (stdout, _) = run_expecting(&mut command, 0);
        (json_of(&stdout)["timing_ms"].clone(), started.elapsed())
    };
    let (timing, elapsed) = timed("3", "0.5");
    assert!(elapsed.as_secs_f64() >= 0.5, "{elapsed:?}");
    let times = timing["iterations_ms"].as_array().unwrap();
    assert_eq!(times.len() as u64, timing["iterations"].as_u64().unwrap());
    assert!(times.len() > 3, "{timing}");
    let field = |name: &str| timing[name].as_f64().unwrap();
    assert_eq!(field("p50"), field("median"));
    assert!(field("min") <= field("p50") && field("p50") <= field("p90"), "{timing}");
    assert!(field("p90") <= field("p99") && field("p99") <= field("max"), "{timing}");
    // --iter is a floor under --duration.
    let (timing, _) = timed("40", "0.001");
    assert!(timing["iterations"].as_u64().unwrap() >= 40, "{timing}");
}

#[test]
fn a_max_duration_stops_short_of_iter() {
    let mut command = mge();
    command.args(["run", "fixtures/conv_float.mge", "-q", "--json"]);
    command.args(["--iter", "1000000", "--max-duration", "0.3"]);
    let (stdout, _) = run_expecting(&mut command, 0);
    let runs = json_of(&stdout)["timing_ms"]["iterations"].as_u64().unwrap();
    assert!((1..1_000_000).contains(&runs), "{runs} runs");
}

#[test]
fn peak_memory_is_reported_after_load_and_after_the_runs() {
    for model in ["fixtures/conv_float.mge", "fixtures/conv_float_tc3.mge"] {
        let (stdout, _) = run_expecting(mge().args(["run", model, "-q", "--json"]), 0);
        let memory = &json_of(&stdout)["memory"];
        let after_load = memory["peak_rss_after_load_bytes"].as_u64().unwrap();
        let peak = memory["peak_rss_bytes"].as_u64().unwrap();
        // The engine's library alone makes tens of MB resident.
        assert!(
            10 << 20 < after_load && after_load <= peak && peak < 4 << 30,
            "{model}: {memory}"
        );
        let (stdout, _) = run_expecting(mge().args(["run", model, "-q"]), 0);
        assert!(stdout.contains("MiB after load"), "{stdout}");
    }
}

#[test]
fn converted_feeds_get_a_note_and_written_outputs_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = mge();
    command.args(["run", "fixtures/conv_float.mge", "--iter", "1", "--json"]);
    command.args(["-i", "fixtures/feeds/conv_data_f64_fortran.npy", "--outputs"]);
    command.arg(dir.path());
    let (stdout, stderr) = run_expecting(&mut command, 0);
    let notes: Vec<&str> = stderr.lines().filter(|line| line.contains("converted to")).collect();
    assert_eq!(
        notes,
        ["note: input 'data': float64 values from 'fixtures/feeds/conv_data_f64_fortran.npy' converted to float32"]
    );
    let written = &json_of(&stdout)["outputs_written"];
    assert_eq!(written[0]["output"], "feat");
    assert_eq!(written[0]["file"], dir.path().join("feat.npy").to_str().unwrap());
    assert_eq!(written.as_array().unwrap().len(), 1);
    // Same dtype: no note.
    let (_, stderr) = run_expecting(
        mge().args([
            "run",
            "fixtures/conv_float.mge",
            "--iter",
            "1",
            "-i",
            "fixtures/feeds/conv_data.npy",
        ]),
        0,
    );
    assert!(!stderr.contains("converted"), "{stderr}");
}

#[test]
fn a_wrong_expectation_exits_1() {
    let mut command = mge();
    command.args([
        "run",
        "fixtures/conv_float.mge",
        "-i",
        "fixtures/feeds/conv_data_24.npy",
        "-q",
    ]);
    command.args(["--expect", "feat:fixtures/ref/conv_float__conv_data/feat.npy"]);
    let (stdout, stderr) = run_expecting(&mut command, 1);
    // The words and numbers of --json: `passed`, and errors printed one way.
    assert!(
        stdout.contains(
            "expect   feat vs fixtures/ref/conv_float__conv_data/feat.npy: err 0.036626 (maxerr 1e-4) FAILED"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("output 'feat' (err 0.036626) differs from --expect"),
        "{stderr}"
    );
}

#[test]
fn engine_chatter_stays_off_stdout() {
    // A container's testcases run the engine's AssertEqual, which prints to stdout itself.
    let mut command = mge();
    command.args(["run", "fixtures/conv_float_tc1.mge", "-q", "--json"]);
    let (stdout, _) = run_expecting(&mut command, 0);
    assert_eq!(json_of(&stdout)["testcases"][0]["status"], "passed");
}

#[test]
fn engine_options_are_accepted() {
    for options in [
        &["--threads", "2"][..],
        &["--cpu-inplace"],
        &["--fast-run", "--reproducible"],
        &[
            "--weight-preprocess",
            "--fuse-preprocess",
            "--const-shape",
            "--no-sanity-check",
        ],
        &["--fake-first"],
        &["--record-comp-seq", "1"],
        &["--graph-opt-level", "0"],
        &["--workspace-limit", "1048576"],
    ] {
        run_expecting(&mut conv_float_expecting_its_reference(options), 0);
    }
}

/// `mge run` of the conv fixture on its feed, expecting MegEngine's reference
/// output, with `options` added.
fn conv_float_expecting_its_reference(options: &[&str]) -> assert_cmd::Command {
    let mut command = mge();
    command
        .args(["run", "fixtures/conv_float.mge", "-i", "fixtures/feeds/conv_data.npy"])
        .args([
            "--expect",
            "feat:fixtures/ref/conv_float__conv_data/feat.npy",
            "--iter",
            "2",
        ])
        .args(options);
    command
}

/// MegEngine's oneDNN kernels, which these options reach, call exit(1) from
/// an engine thread on AMD CPUs with AVX-512, at any thread count: there the
/// run must fail with that said, anywhere else pass with the reference outputs.
#[test]
fn layout_options_run_or_fail_cleanly_on_any_cpu() {
    for options in [&["--layout-transform"][..], &["--layout", "nchw88"]] {
        for threads in ["1", "2", "4"] {
            let mut command = conv_float_expecting_its_reference(options);
            command.args(["-q", "--threads", threads]);
            crate::common::run_or_onednn_exit(&mut command);
        }
    }
}

#[test]
fn the_fast_run_cache_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("algo.cache");
    let mut command = mge();
    command
        .args(["run", "fixtures/conv_float.mge", "-q", "--fast-run", "--fast-run-cache"])
        .arg(&cache);
    run_expecting(&mut command, 0);
    assert!(cache.is_file());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn specs_joined_with_semicolons_or_listed_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("feeds.txt");
    std::fs::write(&list, "x:[[0.5,-1.0,2.0,0.25]]\n\nidx:[[1,0,3,2]]\n").unwrap();
    let joined = "x:[[0.5,-1.0,2.0,0.25]];idx:[[1,0,3,2]]".to_string();
    for spec in [joined, format!("@{}", list.display())] {
        let mut command = mge();
        command.args(["run", "fixtures/two_inputs.mge", "-q", "-i", &spec]);
        command.args(["--expect", "y:fixtures/ref/two_inputs__json/y.npy", "--maxerr", "1e-5"]);
        run_expecting(&mut command, 0);
    }
}

/// Option pairings the engine refuses only with an assertion (or an abort) are
/// settled before it sees them.
#[test]
fn engine_option_pairings_are_settled_up_front() {
    let run = |options: &[&str], code: i32| run_expecting(&mut conv_float_expecting_its_reference(options), code).1;
    for options in [
        &["--record-comp-seq", "2"][..],
        &["--record-comp-seq", "1", "--fake-first"],
    ] {
        let stderr = run(options, 0);
        assert!(stderr.contains("var sanity check off"), "{options:?}: {stderr}");
    }
    for (options, message) in [
        (
            &["--record-comp-seq", "2", "--fake-first"][..],
            "--fake-first cannot be combined with --record-comp-seq 2",
        ),
        (&["--jit", "1"], "--jit 1 needs --device cuda"),
        (
            &["--graph-opt-level", "3"],
            "--graph-opt-level 3 adds JIT fusion, which needs --device cuda",
        ),
    ] {
        let stderr = run(options, 2);
        assert!(stderr.contains(message), "{options:?}: {stderr}");
        assert!(!stderr.contains("assertion"), "{options:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{options:?}: {stderr}");
    }
}

/// What `--outputs DIR` wrote, `--expect DIR` checks (a folder of
/// `NAME.npy`, by the names `--outputs` gives files), and a lone `.npy`
/// is the expectation of a model's one output; MegEngine's reference
/// passes either way.
#[test]
fn outputs_written_are_expectations_read() {
    let dir = tempfile::tempdir().unwrap();
    let reference = "fixtures/ref/conv_float__conv_data/feat.npy";
    let run = |extra: &[&str]| {
        let mut command = mge();
        command
            .args(["run", "fixtures/conv_float.mge", "-i", "fixtures/feeds/conv_data.npy"])
            .args(["-q", "--iter", "1", "--json"])
            .args(extra);
        command
    };
    let written = dir.path().join("written");
    let written_arg = written.to_str().unwrap();
    run_expecting(
        &mut run(&["--extra-output", "Convolution", "--outputs", written_arg]),
        0,
    );
    let (stdout, _) = run_expecting(&mut run(&["--extra-output", "Convolution", "--expect", written_arg]), 0);
    let checked: Vec<(String, bool)> = json_of(&stdout)["expect"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap().to_string(), e["passed"] == true))
        .collect();
    assert_eq!(
        checked,
        [("feat".to_string(), true), ("Convolution".to_string(), true)],
        "{stdout}"
    );

    let folder = dir.path().join("reference");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(root().join(reference), folder.join("feat.npy")).unwrap();
    for expect in [folder.to_str().unwrap(), reference] {
        let (stdout, _) = run_expecting(&mut run(&["--expect", expect]), 0);
        let report = json_of(&stdout);
        assert_eq!(report["expect"][0]["name"], "feat", "{report}");
        assert_eq!(report["expect"][0]["passed"], true, "{report}");
    }

    // With two outputs, a lone file must say whose it is; a folder's file no output's is refused.
    let (_, stderr) = run_expecting(&mut run(&["--extra-output", "Convolution", "--expect", reference]), 2);
    assert!(
        stderr.contains(&format!(
            "--expect {reference}: the model has 2 outputs ('feat', 'Convolution'): say which this file holds, NAME:{reference}"
        )),
        "{stderr}"
    );
    std::fs::copy(root().join("fixtures/feeds/conv_data.npy"), folder.join("data.npy")).unwrap();
    let (_, stderr) = run_expecting(&mut run(&["--expect", folder.to_str().unwrap()]), 2);
    assert!(
        stderr.contains("data.npy is the file of no output (the outputs' files, as --outputs names them: 'feat.npy')"),
        "{stderr}"
    );
}

/// A wrong name, shape or file of `--expect` is refused once the model is
/// loaded, before any run: here before runs that would last 1000 s, whose
/// `--timeout` would otherwise be the error.
#[test]
fn expectations_are_checked_before_any_run() {
    let reference = "fixtures/ref/conv_float__conv_data/feat.npy";
    let dir = tempfile::tempdir().unwrap();
    let complex = dir.path().join("complex.npy");
    let header = "{'descr': '<c8', 'fortran_order': False, 'shape': (1, 8), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header:<117}\n");
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    bytes.extend([0u8; 64]);
    std::fs::write(&complex, bytes).unwrap();
    for (expect, message) in [
        (
            format!("nope:{reference}"),
            format!("--expect nope:{reference}: the model has no output 'nope' (outputs: 'feat')"),
        ),
        (
            "feat:fixtures/feeds/conv_data.npy".to_string(),
            "--expect: output 'feat' has shape (1, 8), fixtures/feeds/conv_data.npy holds (1, 3, 16, 16)".to_string(),
        ),
        (
            format!("feat:{}", complex.display()),
            format!("--expect {}: ", complex.display()),
        ),
    ] {
        let (_, stderr) = run_expecting(
            mge().args([
                "run",
                "fixtures/conv_float.mge",
                "-q",
                "--warmup",
                "0",
                "--duration",
                "1000",
                "--timeout",
                "60",
                "--expect",
                &expect,
            ]),
            2,
        );
        assert!(
            stderr.starts_with(&format!("mge: error: {message}")),
            "{expect}: {stderr}"
        );
        assert!(!stderr.contains("--timeout"), "{expect}: {stderr}");
    }
}

/// A feed in another shape than the model's declares passes with a note
/// that says so (the engine reshapes the graph for it).
#[test]
fn a_feed_in_another_shape_is_noted() {
    let (stdout, stderr) = run_expecting(
        mge().args([
            "run",
            "fixtures/conv_float.mge",
            "-i",
            "data:#rand(0,1,2,3,16,16)",
            "--iter",
            "1",
        ]),
        0,
    );
    assert!(
        stderr.contains(
            "note: input 'data': shape (2, 3, 16, 16) from '#rand(0,1,2,3,16,16)' differs from the model's (1, 3, 16, 16); the engine reshapes the graph for it"
        ),
        "{stderr}"
    );
    assert!(stdout.contains("(2, 8)"), "the output follows the feed: {stdout}");
    let (_, stderr) = run_expecting(
        mge().args(["run", "fixtures/conv_float.mge", "-i", "data:#rand(0,1)", "--iter", "1"]),
        0,
    );
    assert!(!stderr.contains("differs"), "{stderr}");
}

/// One iteration is one, not `1 iterations`.
#[test]
fn a_count_of_one_is_singular() {
    let (stdout, _) = run_expecting(mge().args(["run", "fixtures/conv_float.mge", "-q", "--iter", "1"]), 0);
    assert!(stdout.contains("timing   1 iteration, ms per iteration"), "{stdout}");
    let (stdout, _) = run_expecting(mge().args(["run", "fixtures/conv_float.mge", "-q", "--iter", "2"]), 0);
    assert!(stdout.contains("timing   2 iterations, ms per iteration"), "{stdout}");
}
