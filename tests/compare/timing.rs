//! `mge compare`'s timing of two runs. No assertion here depends on how fast
//! this machine is or how loaded: on the real engine only the report's
//! structure is asserted (timing informs, exit 0); a verdict is asserted only
//! where the stand-in Lite library (`tests/faults/fault_lite.c`) makes it
//! certain, with sleeps that no load can shorten.

use crate::common::*;
use serde_json::Value;

/// `mge compare` on the stand-in library, its `MGE_FAULT*` variables set as `fault` says.
fn on_stand_in(fault: &[(&str, &str)], args: &[&str], code: i32) -> (Value, String) {
    let mut command = mge();
    command
        .arg("--lite-lib")
        .arg(fault_library())
        .args(["compare", "-q", "--json"]);
    for (name, value) in fault {
        command.env(name, value);
    }
    let (stdout, stderr) = run_expecting(command.args(args), code);
    (json_of(&stdout), stderr)
}

/// The stand-in sleeps 50 ms in each forward of B alone (`--cpu-inplace`
/// marks B): B's runs take 50 ms at least, A's next to nothing.
const B_SLEEPS: [(&str, &str); 3] = [
    ("MGE_FAULT", "slow"),
    ("MGE_FAULT_MS", "50"),
    ("MGE_FAULT_ONLY_WITH", "cpu-inplace"),
];

#[test]
fn both_runs_are_timed_in_rounds_and_timing_only_informs() {
    let (stdout, stderr) = run_expecting(
        mge().args([
            "compare",
            "fixtures/conv_float.mge",
            "fixtures/conv_float.mge",
            "--rounds",
            "6",
        ]),
        0,
    );
    assert!(stdout.contains("timing  a "), "{stdout}");
    assert!(stdout.contains(" (medians of 6 rounds in "), "{stdout}");
    assert!(
        stdout.contains(" s, each side a fresh process per round)\n        b/a "),
        "{stdout}"
    );
    // Wall time, or CPU time where other processes loaded the machine: the model against itself runs alike.
    assert!(
        stdout.contains(" (95%, wall time, looked at 6 rounds): ")
            || stdout.contains(" of CPU time (medians of 6 rounds in ")
                && stdout.contains(" (95%, CPU time, looked at 6 rounds): "),
        "{stdout}"
    );
    // Said either way: a run this short may be too short for /proc's ticks.
    assert!(
        stdout.contains(" cores during the rounds") || stdout.contains("load not measured during the rounds"),
        "{stdout}"
    );
    assert!(!stderr.contains("error"), "{stderr}");
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            "fixtures/conv_float.mge",
            "fixtures/conv_float.mge",
            "--rounds",
            "6",
            "--json",
            "-q",
        ]),
        0,
    );
    let timing = &json_of(&stdout)["timing"];
    assert_eq!(timing["rounds"], 6, "{timing}");
    assert_eq!(timing["looks"], serde_json::json!([6]), "{timing}");
    assert_eq!(timing["look_confidence"], 0.95, "{timing}");
    assert!(timing["a_ms"].as_f64().unwrap() > 0.0 && timing["b_ms"].as_f64().unwrap() > 0.0);
    let ratio = timing["ratio"].as_f64().unwrap();
    let interval = timing["ci95"].as_array().unwrap();
    let (low, high) = (interval[0].as_f64().unwrap(), interval[1].as_f64().unwrap());
    assert!(low <= ratio && ratio <= high, "{timing}");
    let speed = timing["speed"].as_str().unwrap();
    assert!(["faster", "same", "slower", "undecided"].contains(&speed), "{timing}");
    assert!(
        ["wall", "cpu"].contains(&timing["measure"].as_str().unwrap()),
        "{timing}"
    );
    assert_eq!(timing["reason"].is_null(), speed != "undecided", "{timing}");
    // The 6 rounds' one look stops them either way; it decides where their
    // interval does (CPU time on a loaded machine can hold ±2% in 6 rounds).
    let stopped = if speed == "undecided" { "rounds" } else { "decided" };
    assert_eq!(timing["stopped"], stopped, "{timing}");
    assert_eq!(timing["min_effect_pct"], 2.0);
    // The load other processes put on the machine, as `run` measures it, or
    // null where each side's timed runs were too short for /proc's ticks.
    let load = &timing["noise"]["other_load_cores"];
    assert!(load.is_null() || load.as_f64().unwrap() >= 0.0, "{timing}");
    assert!(timing["noise"]["cores"].as_u64().unwrap() >= 1, "{timing}");
    // Without --max-slowdown nothing about speed fails the check.
    assert_eq!(timing["too_slow"], false);
    assert!(timing["max_slowdown_pct"].is_null());
}

/// Without --rounds, rounds go on until the verdict is decided: B sleeps
/// 20 ms a run more than A, a certain slowdown, decided at the first look.
#[test]
fn rounds_go_on_until_the_verdict_is_decided() {
    let sleeps = [
        ("MGE_FAULT", "slow"),
        ("MGE_FAULT_MS", "20"),
        ("MGE_FAULT_ONLY_WITH", "cpu-inplace"),
    ];
    let (report, _) = on_stand_in(&sleeps, &["fixtures/conv_float.mge", "--b-options", "--cpu-inplace"], 0);
    let timing = &report["timing"];
    assert_eq!(timing["speed"], "slower", "{timing}");
    assert_eq!(
        (&timing["rounds"], &timing["stopped"]),
        (&8.into(), &"decided".into()),
        "{timing}"
    );
    assert_eq!(timing["looks"], serde_json::json!([8]), "{timing}");
    assert!(
        (timing["look_confidence"].as_f64().unwrap() - 0.9875).abs() < 1e-12,
        "{timing}"
    );
    assert!(timing["reason"].is_null(), "{timing}");
}

/// Both sides sleep 100 ms a run: the same speed, decided once B/A's
/// interval lies within ±10% (--min-effect 10): no load makes a sleep
/// shorter, and only a wake-up 10 ms late on the median of one side's runs
/// in a round could reach across it.
#[test]
fn the_same_speed_is_decided_within_the_minimum_effect() {
    let sleeps = [("MGE_FAULT", "slow"), ("MGE_FAULT_MS", "100")];
    let args = [
        "fixtures/conv_float.mge",
        "--b-options",
        "--threads 2",
        "--min-effect",
        "10",
    ];
    let (report, _) = on_stand_in(&sleeps, &args, 0);
    let timing = &report["timing"];
    assert_eq!(timing["speed"], "same", "{timing}");
    // Sides unlike in threads are held on wall time, loaded or not: CPU time cannot see what threads change.
    assert_eq!(timing["measure"], "wall", "{timing}");
    let interval = timing["ci95"].as_array().unwrap();
    assert!(
        interval[0].as_f64().unwrap() >= 0.9 && interval[1].as_f64().unwrap() <= 1.1,
        "{timing}"
    );
    assert_eq!(timing["min_effect_pct"], 10.0);
}

/// A --timing-budget spent after the first round leaves too few rounds for
/// any interval: undecided, and why, in the text and in JUnit, where it is
/// no failure.
#[test]
fn too_few_rounds_leave_the_verdict_undecided_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("timing.xml");
    let (stdout, stderr) = run_expecting(
        mge()
            .arg("--lite-lib")
            .arg(fault_library())
            .args(["compare", "fixtures/conv_float.mge", "--b-options", "--threads 2"])
            .args(["--timing-budget", "0.001", "--junit"])
            .arg(&junit),
        0,
    );
    // Said first: the load, where other processes used a quarter of the cores, else too few rounds.
    let why = "1 round gives no 98.75% interval (it needs 8); the --timing-budget of 0.001 s was spent after 1 round";
    let verdict = stdout
        .lines()
        .find_map(|line| line.strip_prefix("        b/a "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let reason = verdict
        .strip_suffix(why)
        .and_then(|said| said.split_once("(95%, wall time, looked at 1 round): undecided: "))
        .map(|(_, first)| first)
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        reason == "too few rounds: " || reason.starts_with("the machine was loaded: other processes used "),
        "{stdout}"
    );
    assert!(!stderr.contains("check failed"), "{stderr}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"failures="0" errors="0""#), "{xml}");
    assert!(
        xml.contains(&format!("<system-out>undecided: {reason}{why}</system-out>")),
        "{xml}"
    );
}

#[test]
fn the_timing_options_are_checked() {
    for (args, message) in [
        (&["--rounds", "6", "--timing-budget", "10"][..], "cannot be used with"),
        (&["--min-effect", "100"], "is not a percentage below 100"),
        (&["--timing-budget", "0"], "is not a positive number of seconds"),
        (&["--no-timing", "--min-effect", "5"], "cannot be used with"),
    ] {
        let (_, stderr) = run_expecting(
            mge()
                .args(["compare", "fixtures/conv_float.mge", "--b-naive"])
                .args(args),
            2,
        );
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn no_timing_and_naive_kernels_are_not_timed() {
    let (stdout, _) = run_expecting(
        mge().args(["compare", "fixtures/conv_float.mge", "--b-naive", "--json"]),
        0,
    );
    assert!(json_of(&stdout)["timing"].is_null(), "{stdout}");
    let (report, _) = on_stand_in(
        &[],
        &["fixtures/conv_float.mge", "--b-options", "--threads 2", "--no-timing"],
        0,
    );
    assert!(report["timing"].is_null(), "{report}");
    let (_, stderr) = run_expecting(
        mge().args([
            "compare",
            "fixtures/conv_float.mge",
            "--b-naive",
            "--no-timing",
            "--rounds",
            "6",
        ]),
        2,
    );
    assert!(
        stderr.contains("--no-timing") && stderr.contains("--rounds"),
        "{stderr}"
    );
}

#[test]
fn a_slowdown_beyond_max_slowdown_fails_the_check() {
    let args = [
        "fixtures/conv_float.mge",
        "--b-options",
        "--cpu-inplace",
        "--rounds",
        "6",
        "--max-slowdown",
        "10",
    ];
    let (report, stderr) = on_stand_in(&B_SLEEPS, &args, 1);
    let timing = &report["timing"];
    assert_eq!(timing["speed"], "slower", "{timing}");
    assert_eq!(timing["too_slow"], true);
    assert!(timing["ci95"][0].as_f64().unwrap() > 1.1, "{timing}");
    assert!(timing["b_ms"].as_f64().unwrap() >= 50.0, "{timing}");
    // The outputs agree: the timing alone failed it.
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(1), Some(0))
    );
    assert!(
        stderr.starts_with("mge: check failed: b is ") && stderr.contains("beyond --max-slowdown 10%"),
        "{stderr}"
    );
    // Without --max-slowdown the same slowdown is said, and passes.
    let (report, _) = on_stand_in(&B_SLEEPS, &args[..5], 0);
    assert_eq!(report["timing"]["speed"], "slower");
    assert_eq!(report["timing"]["too_slow"], false);
}

/// Both sides sleep 50 ms a run: no load can shorten a sleep, and only a
/// wake-up 50 ms late on most of one side's runs, round after round, could
/// double B/A. The verdict may be any but `slower` beyond 100%.
#[test]
fn the_same_speed_passes_max_slowdown() {
    let args = [
        "fixtures/conv_float.mge",
        "--b-options",
        "--threads 2",
        "--rounds",
        "6",
        "--max-slowdown",
        "100",
    ];
    let (report, _) = on_stand_in(&[("MGE_FAULT", "slow"), ("MGE_FAULT_MS", "50")], &args, 0);
    let timing = &report["timing"];
    assert_eq!(timing["too_slow"], false, "{timing}");
    assert!(timing["a_ms"].as_f64().unwrap() >= 50.0, "{timing}");
    assert_eq!(timing["max_slowdown_pct"], 100.0);
}

/// Sleeps of 1 s a run under --timeout 2.5: the outputs' run (one run) ends
/// in time with 1.5 s to spare for its start, each timed run (two warm-ups
/// and a timed run, 3 s of sleep) cannot.
#[test]
fn a_side_that_fails_while_timed_is_named() {
    let (stdout, stderr) = run_expecting(
        mge()
            .arg("--lite-lib")
            .arg(fault_library())
            .env("MGE_FAULT", "slow")
            .env("MGE_FAULT_MS", "1000")
            .env("MGE_FAULT_ONLY_WITH", "cpu-inplace")
            .args([
                "compare",
                "-q",
                "fixtures/conv_float.mge",
                "--b-options",
                "--cpu-inplace",
            ])
            .args(["--rounds", "6", "--timeout", "2.5"]),
        2,
    );
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.starts_with(
            "mge: error: run b (fixtures/conv_float.mge --cpu-inplace), timed: stopped after --timeout 2.5s"
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// `--a-options '--lite-lib PATH'` runs A alone on that library: the
/// stand-in's outputs are zeros, the engine's are not.
#[test]
fn each_side_runs_on_its_own_runtime() {
    let mut stand_in = String::from("--lite-lib ");
    stand_in.push_str(fault_library().to_str().unwrap());
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            "-q",
            "--json",
            "--no-timing",
            "fixtures/conv_float.mge",
            "-i",
            "fixtures/feeds/conv_data.npy",
            "--a-options",
            &stand_in,
        ]),
        1,
    );
    let report = json_of(&stdout);
    assert_eq!(report["a"]["runtime"], fault_library().to_str().unwrap(), "{report}");
    assert!(report["b"].get("runtime").is_none(), "{report}");
    let mismatch = &report["outputs"][0]["first_mismatch"];
    assert_eq!(mismatch["a"], 0.0, "{report}");
    // megenginelite's output, written when the fixtures were made.
    let reference = read_f32(&root().join("fixtures/ref/conv_float__conv_data/feat.npy"));
    let index: Vec<usize> = mismatch["index"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_u64().unwrap() as usize)
        .collect();
    let expected = reference[ndarray::IxDyn(&index)];
    assert!(
        (mismatch["b"].as_f64().unwrap() - f64::from(expected)).abs() < 1e-5,
        "{report}"
    );
    let (_, stderr) = run_expecting(
        mge().args([
            "compare",
            "fixtures/conv_float.mge",
            "--b-options",
            "--lite-lib no/such/lite.so",
        ]),
        2,
    );
    assert!(
        stderr.starts_with("mge: error: run b: --lite-lib / MGE_LITE_LIB: no/such/lite.so is not a file"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// `--a-runtime VERSION` takes that install from the cache folder, the one
/// the tests run on (`mge runtime install`), checked as the newest would be.
#[test]
fn a_side_runs_on_an_installed_version() {
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            "-q",
            "--json",
            "--no-timing",
            "fixtures/conv_float.mge",
            "--a-runtime",
            "1.13.0",
            "--b-options",
            "--threads 2",
        ]),
        0,
    );
    let report = json_of(&stdout);
    let runtime = report["a"]["runtime"].as_str().unwrap();
    assert!(
        runtime.contains("/runtime/1.13.0/") && runtime.ends_with(".so"),
        "{report}"
    );
    let cases: [(&[&str], &str); 3] = [
        (
            &["--b-runtime", "9.9.9"],
            "run b: MegEngine 9.9.9 is not installed (installed: ",
        ),
        (
            &["--b-runtime", "../1.13.0"],
            "run b: --b-runtime \"../1.13.0\": expected a version such as 1.13.0",
        ),
        (
            &["--a-runtime", "1.13.0", "--a-options", "--lite-lib x.so"],
            "run a: give --a-runtime or --lite-lib in --a-options, not both",
        ),
    ];
    for (args, message) in cases {
        let (_, stderr) = run_expecting(
            mge()
                .args(["compare", "fixtures/conv_float.mge", "--b-naive"])
                .args(args),
            2,
        );
        assert!(
            stderr.starts_with(&format!("mge: error: {message}")),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}
