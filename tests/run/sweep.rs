//! `mge run --sweep`: each shape in a process of its own, a row per shape.
//! Shapes the real engine takes and refuses come from MegEngine's fixtures
//! (`fixtures/make_reduce_fixtures.py`); crashes, hangs and errors at one
//! shape from the stand-in library (`MGE_FAULT_SHAPE`).

use serde_json::Value;

use crate::common::*;
use crate::repro::{elsewhere, reproduce, written};

fn reduce_manifest() -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join("fixtures/reduce_manifest.json")).unwrap()).unwrap()
}

/// `mge run MODEL --sweep SWEEP -q --json ARGS`.
fn sweep(model: &str, shapes: &str, args: &[&str]) -> assert_cmd::Command {
    let mut command = mge();
    command
        .args(["run", model, "--sweep", shapes, "-q", "--json"])
        .args(args);
    command
}

/// A sweep on the stand-in library, failing with `fault` at the input shape `at` (`2,3,16,16`).
fn sweep_failing(fault: &str, at: &str, args: &[&str]) -> assert_cmd::Command {
    let mut command = sweep("fixtures/conv_float.mge", "data:1x3x16x16,2x3x16x16,4x3x16x16", args);
    command
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", fault)
        .env("MGE_FAULT_SHAPE", at);
    command
}

fn rows(stdout: &str) -> Vec<Value> {
    json_of(stdout)["sweep"].as_array().unwrap().clone()
}

fn statuses(rows: &[Value]) -> Vec<&str> {
    rows.iter().map(|row| row["status"].as_str().unwrap()).collect()
}

#[test]
fn a_sweep_runs_each_batch_and_reports_its_figures() {
    let (stdout, _) = run_expecting(
        &mut sweep(
            "fixtures/conv_float.mge",
            "data:1x3x16x16,2x3x16x16,4x3x16x16",
            &["--iter", "6", "--warmup", "0"],
        ),
        0,
    );
    let rows = rows(&stdout);
    assert_eq!(statuses(&rows), ["ok", "ok", "ok"]);
    for (row, batch) in rows.iter().zip([1.0, 2.0, 4.0]) {
        assert_eq!(row["shapes"]["data"], serde_json::json!([batch as usize, 3, 16, 16]));
        let median = row["median_ms"].as_f64().unwrap();
        let [low, high] = [0, 1].map(|at| row["ci95_ms"][at].as_f64().unwrap());
        assert!(low <= median && median <= high, "{row}");
        let per_item = row["per_item_ms"].as_f64().unwrap();
        assert!((per_item - median / batch).abs() <= 1e-9 * median, "{row}");
        assert!((row["items_per_s"].as_f64().unwrap() - 1e3 / per_item).abs() < 1e-6 * 1e3 / per_item);
        assert!(row["peak_rss_bytes"].as_u64().unwrap() > 0, "{row}");
        assert!(row["error"].is_null(), "{row}");
    }
    // The text: a row per shape, and the verdict.
    let mut text = mge();
    text.args([
        "run",
        "fixtures/conv_float.mge",
        "--sweep",
        "data:1x3x16x16,2x3x16x16",
        "-q",
    ]);
    let (stdout, _) = run_expecting(&mut text, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[1].starts_with("data ") && lines[1].contains("status") && lines[1].contains("ms/item"),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with("1x3x16x16  ok ") && lines[3].starts_with("2x3x16x16  ok "),
        "{stdout}"
    );
    assert_eq!(lines.last(), Some(&"all 2 shapes ok"), "{stdout}");
}

/// MegEngine itself refuses the batch of 2 (a fixed reshape): a row with the
/// engine's reason, the others run, exit 1.
#[test]
fn a_shape_the_model_refuses_is_a_row_with_the_engines_reason() {
    let manifest = reduce_manifest();
    let refuses = &manifest["refuses"];
    let message = refuses["message"].as_str().unwrap();
    let (stdout, stderr) = run_expecting(
        &mut sweep(
            refuses["model"].as_str().unwrap(),
            "data:1x3x16x16,2x3x16x16",
            &["--iter", "2"],
        ),
        1,
    );
    let rows = rows(&stdout);
    assert_eq!(statuses(&rows), ["ok", "refused"]);
    assert!(rows[0]["median_ms"].as_f64().unwrap() > 0.0);
    assert!(rows[1]["median_ms"].is_null() && rows[1]["peak_rss_bytes"].is_null());
    let reason = rows[1]["error"].as_str().unwrap();
    assert!(reason.contains(message), "MegEngine's words {message:?} in {reason:?}");
    assert!(
        stderr.contains("mge: check failed: 1 of 2 shapes not ok: 2x3x16x16 refused"),
        "{stderr}"
    );
}

/// Refused: the engine returned an error at that shape and the run ended
/// with it, the process sound. Crashed: the engine took the process down.
/// Hung: stopped at the deadline. Each is its shape's row; the sweep goes on.
#[test]
fn refused_crashed_and_hung_shapes_are_rows_and_the_sweep_goes_on() {
    let cases = [
        (
            "error",
            "refused",
            "and the model does not accept it: fault library error",
        ),
        ("segv", "crashed", "the engine crashed (SIGSEGV) during the warm-up"),
        ("abort", "crashed", "the engine crashed (SIGABRT) during the warm-up"),
        (
            "exit",
            "crashed",
            "the engine ended the process with exit(1) from its thread 'cpu0:0'",
        ),
        ("hang", "hung", "stopped after --timeout 3s during the warm-up"),
    ];
    for (fault, status, reason) in cases {
        let (stdout, _) = run_expecting(&mut sweep_failing(fault, "2,3,16,16", &["--timeout", "3"]), 1);
        let rows = rows(&stdout);
        assert_eq!(statuses(&rows), ["ok", status, "ok"], "MGE_FAULT={fault}");
        let error = rows[1]["error"].as_str().unwrap();
        assert!(error.contains(reason), "MGE_FAULT={fault}: {error}");
        assert!(
            rows[2]["median_ms"].as_f64().is_some(),
            "the shape after it ran: {stdout}"
        );
    }
}

/// `--repro`: a folder for the shape that crashed, whose command reproduces
/// the crash at that shape with the values the engine was fed there; with
/// `--reduce`, with the part of the graph that still crashes at that shape
/// (here every part: the stand-in library fails at the shape whatever the graph).
#[test]
fn a_shape_that_crashed_leaves_a_folder_that_reproduces_it() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = sweep_failing("segv", "4,3,16,16", &["--repro"]);
    command.arg(&repro).arg("--reduce");
    let (stdout, stderr) = run_expecting(&mut command, 1);
    let rows = rows(&stdout);
    assert_eq!(statuses(&rows), ["ok", "ok", "crashed"]);
    let written = written(&stderr);
    assert_eq!(written.len(), 1, "{stderr}");
    let (folder, line) = &written[0];
    assert_eq!(folder, &repro.join("conv_float-4x3x16x16"));
    assert_eq!(rows[2]["repro"].as_str(), Some(folder.to_str().unwrap()));
    let fed = read_f32(&folder.join("feeds/data.npy"));
    assert_eq!(fed.shape(), [4, 3, 16, 16]);
    let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
    assert!(
        readme.contains("1 of them computing"),
        "the first convolution alone:\n{readme}"
    );
    let (_place, copy) = elsewhere(folder);
    for script in ["bash command.sh", "bash full-command.sh"] {
        let (_, stderr) = run_expecting(&mut reproduce(&copy, script), 2);
        assert!(
            stderr.contains("the engine crashed (SIGSEGV)"),
            "{script}: {line}:\n{stderr}"
        );
    }
}

/// Under `--check-finite` a shape whose outputs hold NaN is `nonfinite`,
/// with its figures: the run finished.
#[test]
fn a_shape_whose_outputs_are_not_finite_is_nonfinite_with_its_figures() {
    let manifest = reduce_manifest();
    let (stdout, _) = run_expecting(
        &mut sweep(
            manifest["model"].as_str().unwrap(),
            "data:1x3x16x16,2x3x16x16",
            &["--check-finite", "--iter", "2"],
        ),
        1,
    );
    let rows = rows(&stdout);
    assert_eq!(
        statuses(&rows),
        ["nonfinite", "refused"],
        "a batch of 2 meets the fixed reshape"
    );
    assert!(rows[0]["median_ms"].as_f64().is_some(), "{stdout}");
    let error = rows[0]["error"].as_str().unwrap();
    assert!(
        error.contains("output 'out' holds 4 NaN among 4 values (--check-finite)"),
        "{error}"
    );
}

#[test]
fn a_sweep_is_checked_before_any_run() {
    let cases: [(&[&str], &str); 7] = [
        (&["--sweep", "1x3x16x16"], "expected NAME:SHAPE"),
        (&["--sweep", "data:1x3y16x16"], "'1x3y16x16' is not a shape"),
        (&["--sweep", "data:1x0x16x16"], "'1x0x16x16' is not a shape"),
        (
            &["--sweep", "image:1x3x16x16"],
            "the model has no input 'image' (its inputs: 'data')",
        ),
        (
            &["--sweep", "data:1x3x16x16", "--outputs", "out"],
            "--outputs is for one run",
        ),
        (
            &["--sweep", "data:1x3x16x16", "--sweep", "data:2x3x16x16"],
            "input 'data' is swept twice",
        ),
        (
            &[
                "--sweep",
                "data:1x3x16x16,2x3x16x16",
                "-i",
                "data:fixtures/feeds/conv_data.npy",
            ],
            "holds shape (1, 3, 16, 16), and the sweep runs the input at (2, 3, 16, 16)",
        ),
    ];
    for (args, expected) in cases {
        let mut command = mge();
        command.args(["run", "fixtures/conv_float.mge", "-q"]).args(args);
        let (stdout, stderr) = run_expecting(&mut command, 2);
        assert!(stdout.is_empty(), "{stdout}");
        assert!(stderr.contains(expected), "{args:?}: {expected:?} not in\n{stderr}");
    }
}

/// The sweep's header showed the swept inputs' names raw: a line break in
/// one started a line of its own, a forged row. The header shows names
/// escaped, as every table does.
#[test]
fn a_swept_inputs_name_shows_escaped_in_its_header() {
    let models = &named_manifest()["models"];
    let (model, input) = (
        models["forged_staging"]["model"].as_str().unwrap(),
        models["forged_staging"]["input"].as_str().unwrap(),
    );
    let (stdout, _) = run_expecting(
        mge().args([
            "run",
            model,
            "--sweep",
            &format!("{input}:1x3x4x4"),
            "-q",
            "--iter",
            "1",
            "--warmup",
            "0",
        ]),
        0,
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "the model, the header, the row, the verdict: {stdout}");
    let escaped = r#"x\n\x01mge-event:{"event":"staging","path":".mge-data","exists":true}\n  status"#;
    assert!(lines[1].starts_with(escaped), "{stdout}");
    assert!(lines[2].starts_with("1x3x4x4  "), "{stdout}");
}

/// Several shapes that crash leave a folder each, and the model's bytes once
/// (the folders' `model.mge` is one file: 30 crashing shapes of a 4 MB model
/// took 121 MB); each folder's command reproduces its crash from inside it.
#[test]
fn the_folders_of_shapes_that_crashed_hold_the_model_once() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    // The crash at every shape.
    let mut command = sweep(
        "fixtures/conv_float.mge",
        "data:1x3x16x16,2x3x16x16,4x3x16x16",
        &["--repro"],
    );
    command
        .arg(&repro)
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", "segv");
    let (stdout, stderr) = run_expecting(&mut command, 1);
    assert_eq!(statuses(&rows(&stdout)), ["crashed", "crashed", "crashed"]);
    let written = written(&stderr);
    assert_eq!(written.len(), 3, "{stderr}");
    let models: Vec<std::fs::Metadata> = written
        .iter()
        .map(|(folder, _)| std::fs::metadata(folder.join("model.mge")).unwrap())
        .collect();
    let size = std::fs::metadata(root().join("fixtures/conv_float.mge")).unwrap().len();
    assert!(models.iter().all(|model| model.len() == size));
    assert!(
        models
            .iter()
            .all(|model| model.ino() == models[0].ino() && model.nlink() == 3),
        "one file, not a copy per folder"
    );
    for (folder, line) in &written {
        let (_, stderr) = run_expecting(&mut reproduce(folder, "bash command.sh"), 2);
        assert!(
            stderr.contains("the engine crashed (SIGSEGV)"),
            "{}: {line}:\n{stderr}",
            folder.display()
        );
    }
}

/// A shape that passes leaves no recorded feeds in the staging folder while
/// the sweep goes on: seen while the last shape hangs, its own record there.
#[test]
fn the_feeds_of_a_shape_that_passed_are_not_kept_while_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut sweeping = std::process::Command::new(mge().get_program());
    sweeping
        .current_dir(root())
        .args(["run", "fixtures/conv_float.mge", "-q", "--json", "--timeout", "20"])
        .args(["--sweep", "data:1x3x16x16,2x3x16x16,4x3x16x16", "--repro"])
        .arg(&repro)
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", "hang")
        .env("MGE_FAULT_SHAPE", "4,3,16,16")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut sweeping = sweeping.spawn().unwrap();
    // The staging folder beside DIR (new), its children's records in `.records`.
    let records = || -> Vec<String> {
        let staging = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .find(|entry| entry.file_name().to_string_lossy().starts_with(".mge-"));
        staging
            .and_then(|staging| std::fs::read_dir(staging.path().join(".records")).ok())
            .map(|records| {
                records
                    .flatten()
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let started = std::time::Instant::now();
    while !records().contains(&"sweep-2".to_string()) && started.elapsed() < COMMAND_TIMEOUT {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let seen = records();
    sweeping.kill().unwrap();
    sweeping.wait().unwrap();
    assert_eq!(seen, ["sweep-2"], "only the hanging shape's record");
}
