//! A model's names and odd paths are data: var and
//! operator names in any script or with control characters profile, dump
//! and name files as the model names them, with MegEngine's values; they
//! reach the terminal escaped; and models and feeds that start with `-`, or
//! hold bytes that are not UTF-8, reach every child and every printed
//! command line as given. The names and values are MegEngine's
//! (`fixtures/make_named_fixtures.py`, `fixtures/named_manifest.json`).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

/// A model of the named manifest: its file, input, output and reference output.
struct Named {
    model: String,
    input: String,
    output: String,
    reference: PathBuf,
    /// An operator it names itself, where it does.
    operator: Option<String>,
}

fn named(key: &str) -> Named {
    let manifest = named_manifest();
    let entry = &manifest["models"][key];
    let text = |field: &str| {
        entry[field]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: no {field}"))
            .to_string()
    };
    Named {
        model: text("model"),
        input: text("input"),
        output: text("output"),
        reference: root().join(text("reference")),
        operator: entry["operator"].as_str().map(String::from),
    }
}

fn feed() -> String {
    named_manifest()["feed"].as_str().unwrap().to_string()
}

/// The placeholders the engine knows names by never leave the tool.
fn assert_no_placeholder(text: &str, what: &str) {
    assert!(!text.contains("@mge"), "{what} holds a placeholder name: {text}");
}

/// The names of a Chrome trace's events.
fn trace_names(trace: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(trace).unwrap();
    assert_no_placeholder(&text, "the trace");
    let trace: Value = serde_json::from_str(&text).unwrap();
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|event| event["name"].as_str().map(String::from))
        .collect()
}

/// `profile`, `run --profile` and `dump --io` failed on names in other
/// scripts ("assertion `ch >= 1' failed") and on control characters (JSON the
/// engine wrote raw). Each now reports, traces and files the model's own
/// names, with MegEngine's values.
#[test]
fn names_in_any_script_profile_dump_and_name_their_files() {
    let feed = feed();
    for key in ["unicode", "unicode_ops", "unicode_fbs1", "control", "odd"] {
        let model = named(key);
        let dir = tempfile::tempdir().unwrap();
        profile_reports_and_traces_the_models_names(&model, key, &feed, dir.path());
        run_traces_and_files_the_output_by_its_name(&model, key, &feed, dir.path());
        dump_io_indexes_the_models_vars_by_name(&model, key, &feed, dir.path());
    }
}

impl Named {
    /// The engine names the operator that hands out an output after it.
    fn callback(&self) -> String {
        format!("callback({})", self.output)
    }
}

fn profile_reports_and_traces_the_models_names(model: &Named, key: &str, feed: &str, dir: &Path) {
    let trace = dir.join("profile.json");
    let (stdout, _) = run_expecting(
        mge()
            .args(["profile", &model.model, "-i", feed, "--json", "-q", "-o"])
            .arg(&trace),
        0,
    );
    assert_no_placeholder(&stdout, key);
    let report = json_of(&stdout);
    let rows: Vec<&str> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["name"].as_str().unwrap())
        .collect();
    assert!(
        rows.iter().any(|row| row.starts_with(&model.callback())),
        "{key}: {rows:?}"
    );
    if let Some(operator) = &model.operator {
        assert!(rows.contains(&operator.as_str()), "{key}: {rows:?}");
    }
    assert!(
        trace_names(&trace)
            .iter()
            .any(|name| name.starts_with(&model.callback())),
        "{key}"
    );
}

fn run_traces_and_files_the_output_by_its_name(model: &Named, key: &str, feed: &str, dir: &Path) {
    let run_trace = dir.join("run.json");
    let outputs = dir.join("outputs");
    let (stdout, _) = run_expecting(
        mge()
            .args([
                "run",
                &model.model,
                "-i",
                feed,
                "--iter",
                "2",
                "--json",
                "-q",
                "--profile",
            ])
            .arg(&run_trace)
            .arg("--outputs")
            .arg(&outputs),
        0,
    );
    let written = &json_of(&stdout)["outputs_written"][0];
    assert_eq!(written["output"], model.output.as_str(), "{key}");
    let file = PathBuf::from(written["file"].as_str().unwrap());
    assert_eq!(file.parent(), Some(outputs.as_path()), "{key}");
    assert_close(&read_f32(&file), &read_f32(&model.reference), key);
    assert!(
        trace_names(&run_trace)
            .iter()
            .any(|name| name.starts_with(&model.callback())),
        "{key}"
    );
}

fn dump_io_indexes_the_models_vars_by_name(model: &Named, key: &str, feed: &str, dir: &Path) {
    let io = dir.join("io");
    run_expecting(mge().args(["dump", &model.model, "-i", feed, "-q", "--io"]).arg(&io), 0);
    let index = std::fs::read_to_string(io.join("index.json")).unwrap();
    assert_no_placeholder(&index, key);
    let index: Value = serde_json::from_str(&index).unwrap();
    let vars = index["vars"].as_array().unwrap();
    let var = |name: &str| vars.iter().find(|var| var["name"] == name);
    let output = var(&model.output).unwrap_or_else(|| panic!("{key}: no var {:?}", model.output));
    assert_close(
        &read_f32(&io.join(output["file"].as_str().unwrap())),
        &read_f32(&model.reference),
        key,
    );
    if key != "unicode_fbs1" {
        // FBS v1's loader names an input var after its operator (`h2d[0]`).
        assert!(var(&model.input).is_some(), "{key}: no var {:?}", model.input);
    }
}

/// `run --outputs` wrote `__.npy` for `输出`: file names keep the name's
/// script; the engine's own text dump names it too.
#[test]
fn file_names_keep_the_script_of_the_name() {
    let feed = feed();
    let model = named("unicode");
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("outputs");
    run_expecting(
        mge()
            .args(["run", &model.model, "-i", &feed, "--iter", "1", "-q", "--outputs"])
            .arg(&outputs),
        0,
    );
    assert_close(
        &read_f32(&outputs.join("输出.npy")),
        &read_f32(&model.reference),
        "输出.npy",
    );
    let io = dir.path().join("io");
    run_expecting(
        mge()
            .args(["dump", &model.model, "-i", &feed, "-q", "--io-format", "txt", "--io"])
            .arg(&io),
        0,
    );
    let text = String::from_utf8(std::fs::read(io.join("io.txt")).unwrap()).unwrap();
    assert_no_placeholder(&text, "io.txt");
    assert!(text.contains("name=输出 ") && text.contains("name=输入 "), "{text}");
}

/// Every line of `text` shows no control character: ESC, BEL and CR stay out
/// of the terminal, and a name's line break cannot start a line.
fn assert_printable(text: &str, what: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{what} holds control characters: {text:?}"
    );
}

/// Names with ESC, BEL and a line break reached the terminal raw in
/// `info`, `check`, the tables and errors, and a line break forged a report
/// line. Text output shows them escaped, one record a line; JSON keeps them exact.
#[test]
fn names_reach_the_terminal_escaped() {
    let control = named("control");
    let feed = feed();
    let (input, output) = (r"x\x1b[31mred\x07", r"line1\nline2");

    let (stdout, _) = run_expecting(mge().args(["info", &control.model]), 0);
    assert_printable(&stdout, "info");
    assert_eq!(stdout.lines().count(), 4, "the model, the header, two rows: {stdout}");
    assert!(stdout.lines().nth(2).unwrap().contains(input), "{stdout}");
    assert!(stdout.lines().nth(3).unwrap().contains(output), "{stdout}");
    let (stdout, _) = run_expecting(mge().args(["info", &control.model, "--json"]), 0);
    let report = json_of(&stdout);
    assert_eq!(report["inputs"][0]["name"], control.input.as_str());
    assert_eq!(report["outputs"][0]["name"], control.output.as_str());

    let container = named_manifest()["models"]["control"]["container"]
        .as_str()
        .unwrap()
        .to_string();
    let (stdout, _) = run_expecting(mge().args(["check", &container]), 0);
    assert_printable(&stdout, "check");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "a line for the testcase, the tally: {stdout}");
    assert!(
        lines[0].starts_with(&format!("{container} #0: passed  '{output}' err")),
        "{stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = run_expecting(
        mge()
            .args(["run", &control.model, "-i", &feed, "--iter", "1", "--outputs"])
            .arg(dir.path()),
        0,
    );
    assert_printable(&stdout, "run");
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with(&format!("wrote    '{output}' to "))),
        "{stdout}"
    );
    assert!(stdout.lines().any(|line| line.starts_with(input)), "{stdout}");

    let (_, stderr) = run_expecting(mge().args(["run", &control.model, "-i", &format!("nope:{feed}")]), 2);
    assert_printable(&stderr, "the error");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("the model's inputs are '{input}'")),
        "{stderr}"
    );

    let operators = named("unicode_ops");
    let (stdout, _) = run_expecting(
        mge()
            .args(["profile", &operators.model, "-i", &feed, "-q", "-o"])
            .arg(dir.path().join("t.json")),
        0,
    );
    assert_printable(&stdout, "profile");
    assert!(stdout.contains(r"  卷积\x1b[1m  "), "{stdout}");

    // A model's path is a name too, in check's lines and across its workers.
    let odd_path = dir.path().join("-c\nx.mge");
    std::fs::copy(root().join("fixtures/conv_float_tc1.mge"), &odd_path).unwrap();
    let (stdout, _) = run_expecting(
        mge()
            .args(["check", "-j", "2", "--", "fixtures/conv_float_tc1.mge"])
            .arg(&odd_path),
        0,
    );
    assert_printable(&stdout, "check -j 2");
    assert_eq!(stdout.lines().count(), 3, "a line a model, the tally: {stdout}");
    assert!(stdout.contains(r"-c\nx.mge #0: passed  'feat'"), "{stdout}");
}

/// A table was as wide as its widest cell: one output named in 1,000,000
/// characters padded every row of `info` and `run` to it (3 MB, 7 MB). A
/// table shows a name's ends only and sizes its columns by what it shows;
/// `--json` keeps the whole name.
#[test]
fn one_long_name_pads_no_row_of_a_table() {
    let odd = named("odd");
    let long_output = "o".repeat(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("long_output.mge");
    let fixture = std::fs::read(root().join(&odd.model)).unwrap();
    std::fs::write(
        &model,
        with_long_names(&fixture, odd.output.as_bytes(), long_output.as_bytes()),
    )
    .unwrap();

    let (stdout, _) = run_expecting(mge().arg("info").arg(&model), 0);
    assert_eq!(stdout.lines().count(), 4, "the model, the header, two rows");
    assert!(stdout.len() < 2_000, "{} bytes", stdout.len());
    assert!(
        stdout.contains("o[... ") && stdout.contains(" bytes left out ...]o"),
        "{stdout}"
    );
    let (stdout, _) = run_expecting(mge().arg("info").arg(&model).arg("--json"), 0);
    assert_eq!(json_of(&stdout)["outputs"][0]["name"], long_output.as_str());

    // The output table of a run with more outputs: a row each, none padded.
    let mut run = mge();
    run.arg("run").arg(&model).args(["-i", &feed(), "--iter", "1", "-q"]);
    for var in ["Convolution", "RELU", "Reduce[0]", "Reduce[1]", "Reduce[2]"] {
        run.args(["--extra-output", var]);
    }
    let (stdout, _) = run_expecting(&mut run, 0);
    assert!(stdout.len() < 10_000, "{} bytes", stdout.len());
    assert!(stdout.lines().any(|line| line.starts_with("RELU  ")), "{stdout}");
}

/// What the engine prints under `-v` (its AssertEqual lines, its debug log
/// with `RUNTIME_OVERRIDE_LOG_LEVEL=0`) holds a model's names as they are:
/// the parent passed ESC and BEL on to the terminal raw. Each line of the
/// engine's shows them escaped; a line break in a name still breaks the
/// engine's line, as nothing tells it from the engine's own.
#[test]
fn the_engines_text_under_verbose_shows_names_escaped() {
    let control = named("control");
    let (_, stderr) = run_expecting(
        mge()
            .env("RUNTIME_OVERRIDE_LOG_LEVEL", "0")
            .args(["run", "-v", "--iter", "1", &control.model, "-i", &feed()]),
        0,
    );
    assert_printable(&stderr, "the engine's log");
    assert!(
        stderr
            .lines()
            .any(|line| line.contains("[DEBUG]") && line.contains(r"x\x1b[31mred\x07")),
        "{stderr}"
    );
}

/// A model or a feed that starts with `-` broke the children of
/// `tune` and `compare` ("the baseline does not run", "it failed"), and a
/// path that is not UTF-8 became another file in tune's printed command.
/// Children now get every value in its option's word and the models after
/// `--`, and the printed command runs, in bash, the model it names.
#[test]
fn models_and_feeds_that_start_with_a_dash_reach_every_child() {
    let dir = tempfile::tempdir().unwrap();
    let scale = root().join("fixtures/scale2.mge");
    let odd = OsString::from_vec(b"-m \xff\n.mge".to_vec());
    std::fs::copy(&scale, dir.path().join(&odd)).unwrap();
    std::fs::copy(&scale, dir.path().join("s.mge")).unwrap();
    std::fs::copy(&scale, dir.path().join("-s.mge")).unwrap();

    let mut tune = mge();
    tune.current_dir(dir.path())
        .args(["tune", "--budget", "6", "--json", "-q", "--"])
        .arg(&odd);
    let (stdout, _) = run_expecting(&mut tune, 0);
    let command = json_of(&stdout)["best"]["command"].as_str().unwrap().to_string();
    assert!(command.starts_with("mge run "), "{command}");
    assert!(command.ends_with(r" -- $'-m \xff\x0a.mge'"), "{command}");
    // The printed line, run by bash with this `mge` first on PATH, runs that model.
    let mut printed = assert_cmd::Command::new("bash");
    printed
        .current_dir(dir.path())
        .env("PATH", path_with_mge())
        .timeout(COMMAND_TIMEOUT)
        .args(["-c", &command]);
    let (stdout, _) = run_expecting(&mut printed, 0);
    let model_line = stdout.lines().next().unwrap();
    assert!(
        model_line.starts_with("model    -m ") && model_line.contains(r"\n.mge (fbs-v2)"),
        "{stdout}"
    );

    for args in [
        &[
            "compare",
            "s.mge",
            "--b-options",
            "--threads 2",
            "-i=-0.5",
            "-q",
            "--rounds",
            "6",
        ][..],
        &["compare", "--b-naive", "-q", "--", "-s.mge"],
    ] {
        let mut compare = mge();
        compare.current_dir(dir.path()).args(args);
        let (stdout, _) = run_expecting(&mut compare, 0);
        assert!(stdout.contains("1 passed, 0 failed"), "{args:?}: {stdout}");
    }
    assert_eq!(
        std::fs::read(dir.path().join(&odd)).unwrap(),
        std::fs::read(&scale).unwrap()
    );
}

/// PATH with the `mge` under test first, for a printed `mge ...` line.
fn path_with_mge() -> OsString {
    let binary = assert_cmd::cargo::cargo_bin("mge");
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::iter::once(binary.parent().unwrap().to_path_buf()).chain(std::env::split_paths(&rest));
    std::env::join_paths(dirs).unwrap()
}

/// A staging folder in a folder whose name is not UTF-8: the event that
/// announced it could not be written, and the child panicked (exit 101).
#[test]
fn outputs_in_a_folder_named_in_any_bytes_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(OsString::from_vec(b"d\xfe".to_vec()));
    std::fs::create_dir(&folder).unwrap();
    let (_, stderr) = run_expecting(
        mge()
            .args(["run", "fixtures/conv_float.mge", "-q", "--iter", "1", "--outputs"])
            .arg(folder.join("o")),
        0,
    );
    assert_eq!(read_f32(&folder.join("o/feat.npy")).len(), 8, "{stderr}");
}

/// Models whose names differ only in bytes that are not UTF-8 merged in
/// `compare`'s report of two folders: `bad\xff.mge`, `bad\xfe.mge` and
/// `bad\xfd.mge` all showed as `bad\u{fffd}.mge` in the table, JSON and JUnit. Each
/// byte reads as printed commands write it, `\xff`, and each model apart.
#[test]
fn models_named_in_bytes_that_are_not_utf8_are_told_apart_in_compare() {
    let dir = tempfile::tempdir().unwrap();
    for side in ["a", "b"] {
        std::fs::create_dir(dir.path().join(side)).unwrap();
        for byte in [0xff, 0xfe, 0xfd] {
            let name = OsString::from_vec([b"bad".as_slice(), &[byte], b".mge"].concat());
            std::fs::copy(root().join("fixtures/conv_float.mge"), dir.path().join(side).join(name)).unwrap();
        }
    }
    let junit = dir.path().join("r.xml");
    let (stdout, _) = run_expecting(
        mge()
            .current_dir(dir.path())
            .args(["compare", "a", "b", "--no-timing", "--junit"])
            .arg(&junit),
        0,
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    for byte in ["ff", "fe", "fd"] {
        let name = format!("bad\\x{byte}.mge");
        assert_eq!(stdout.matches(&name).count(), 1, "{name}: {stdout}");
        assert!(xml.contains(&name), "{name}: {xml}");
    }
    assert!(!stdout.contains('\u{fffd}'), "{stdout}");
    let (stdout, _) = run_expecting(
        mge()
            .current_dir(dir.path())
            .args(["compare", "a", "b", "--no-timing", "--json"]),
        0,
    );
    let report = json_of(&stdout);
    let mut models: Vec<&str> = report["pairs"]
        .as_array()
        .unwrap_or_else(|| panic!("{report}"))
        .iter()
        .map(|pair| pair["model"].as_str().unwrap())
        .collect();
    models.sort();
    assert_eq!(models, [r"bad\xfd.mge", r"bad\xfe.mge", r"bad\xff.mge"]);
}
