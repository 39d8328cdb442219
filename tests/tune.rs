//! `mge tune` on the real engine: the search runs within its budget and every
//! candidate it calls safe computes the baseline's outputs.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

#[test]
fn tune_reports_candidates_and_a_reproducible_best() {
    let mut command = mge();
    command.args([
        "tune",
        "fixtures/conv_float.mge",
        "-i",
        "fixtures/feeds/conv_data.npy",
        "--json",
        "--budget",
        "30",
    ]);
    let (stdout, _) = run_expecting(&mut command, 0);
    let report = json_of(&stdout);
    assert!(report["baseline"]["median_ms"].as_f64().unwrap() > 0.0);
    let candidates = report["candidates"].as_array().unwrap();
    assert!(candidates.len() > 1, "{report:#}");
    for candidate in candidates {
        let status = candidate["status"].as_str().unwrap();
        assert!(
            ["ok", "rejected", "crashed", "failed", "timed_out"].contains(&status),
            "{candidate}"
        );
        if status == "ok" {
            assert!(candidate["err"].as_f64().unwrap() <= 1e-4, "{candidate}");
            // Where its time went lies within the whole of it.
            let seconds = |name: &str| candidate[name].as_f64().unwrap();
            assert!(seconds("load_s") > 0.0 && seconds("timed_s") > 0.0, "{candidate}");
            assert!(
                seconds("load_s") + seconds("timed_s") <= seconds("seconds"),
                "{candidate}"
            );
        }
    }
    let best = &report["best"];
    assert!(best["speedup"].as_f64().unwrap() >= 1.0, "{best}");
    let command = best["command"].as_str().unwrap();
    assert!(
        command.starts_with("mge run -i=fixtures/feeds/conv_data.npy ")
            && command.ends_with(" -- fixtures/conv_float.mge"),
        "{command}"
    );
}

#[test]
fn tune_refuses_what_it_cannot_tune_in_one_line() {
    for (args, message) in [
        (
            &["tune", "fixtures/missing.mge"][..],
            "cannot read model fixtures/missing.mge",
        ),
        (
            &["tune", "fixtures/conv_float.mge", "--budget", "0"],
            "not a positive number of seconds",
        ),
        (
            &["tune", "fixtures/conv_float.mge", "-i", "nope:1"],
            "the baseline does not run",
        ),
    ] {
        let (_, stderr) = run_expecting(mge().args(args), 2);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn saved_options_reproduce_the_winner() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("tuned.json");
    let mut command = mge();
    command
        .args([
            "tune",
            "fixtures/conv_float.mge",
            "--json",
            "--budget",
            "15",
            "--threads",
            "1",
            "--save",
        ])
        .arg(&saved);
    let (stdout, _) = run_expecting(&mut command, 0);
    let report = json_of(&stdout);
    let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let args: Vec<&str> = file["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let best = report["best"]["options"].as_str().unwrap();
    assert_eq!(args[..2], ["--threads", "1"], "the fixed options come along: {args:?}");
    if best != "(baseline)" {
        assert_eq!(args[2..].join(" "), best);
    }
    let mut run = mge();
    run.args(["run", "fixtures/conv_float.mge", "-q", "--iter", "2", "--options"])
        .arg(&saved)
        .args(["-i", "fixtures/feeds/conv_data.npy"])
        .args(["--expect", "feat:fixtures/ref/conv_float__conv_data/feat.npy"]);
    run_expecting(&mut run, 0);

    let (_, stderr) = run_expecting(
        mge().args(["run", "fixtures/conv_float.mge", "--options", "nope.json"]),
        2,
    );
    assert!(stderr.starts_with("mge: error: --options nope.json: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// Options that clash with every candidate but fast-run (and the layout
/// transform): a search of a few trials.
const ALL_BUT_FAST_RUN: [&str; 11] = [
    "--threads",
    "1",
    "--record-comp-seq",
    "1",
    "--weight-preprocess",
    "--fuse-preprocess",
    "--layout",
    "nchw44",
    "--graph-opt-level",
    "2",
    "--json",
];

/// `mge tune fixtures/conv_float.mge` with the algorithm cache of `home`,
/// fast-run the one candidate that runs, and `more` options: its report.
fn tune_with_algo_cache(home: &Path, more: &[&str]) -> (Value, String) {
    let (stdout, stderr) = run_expecting(
        mge_with_algo_cache(home)
            .args(["tune", "fixtures/conv_float.mge", "--budget", "20"])
            .args(ALL_BUT_FAST_RUN)
            .args(more),
        0,
    );
    (json_of(&stdout), stderr)
}

/// Tune's fast-run candidates keep their algorithms in the cache folder's
/// algorithm cache: the second tune's `--fast-run` profiles nothing (its
/// search measured anew, not taken from the first's record).
#[test]
fn fast_run_candidates_keep_their_algorithms_in_the_algorithm_cache() {
    let home = tempfile::tempdir().unwrap();
    let fast_run_profiling = |more: &[&str]| {
        let (report, stderr) = tune_with_algo_cache(home.path(), more);
        assert_eq!(report["search"]["source"], "measured", "{report:#}");
        let candidates = report["candidates"].as_array().unwrap();
        let fast_run = candidates
            .iter()
            .find(|candidate| candidate["options"] == "--fast-run")
            .unwrap_or_else(|| panic!("fast-run was tried: {report:#}"));
        assert_eq!(fast_run["status"], "ok", "{fast_run}");
        (fast_run["profiling_s"].as_f64(), stderr)
    };
    assert!(fast_run_profiling(&[]).0.is_some());
    let folder = home.path().join("mge/algo-cache");
    let kept = std::fs::read_dir(&folder).unwrap().count();
    assert!(kept >= 3, "a cache file, the search's record and the lock");
    assert_eq!(fast_run_profiling(&["--search-again"]).0, None);

    // A damaged file changes nothing but a note: set aside, profiled again.
    let algorithms: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "algo"))
        .collect();
    assert_eq!(algorithms.len(), 1, "{algorithms:?}");
    std::fs::write(&algorithms[0], "mge algorithm cache 1\n{}").unwrap();
    let (profiling, stderr) = fast_run_profiling(&["--search-again"]);
    assert!(profiling.is_some(), "{stderr}");
    let note = format!("note: the algorithm cache {} is damaged: ", algorithms[0].display());
    let notes: Vec<&str> = stderr.lines().filter(|line| line.starts_with(&note)).collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].ends_with(".algo.set-aside; fast-run profiles again"),
        "{stderr}"
    );
}

/// `mge tune fixtures/conv_float.mge --json` with the algorithm cache of
/// `home`, on the stand-in library whose every forward sleeps 5 ms (the
/// baseline takes the same time however loaded the machine, so that a
/// record is used whatever else runs): its report, and its stderr.
fn steady_tune(home: &Path) -> (Value, String) {
    let (stdout, stderr) = run_expecting(
        mge_with_algo_cache(home)
            .env("MGE_FAULT", "slow")
            .env("MGE_FAULT_MS", "5")
            .arg("--lite-lib")
            .arg(fault_library())
            .args(["tune", "fixtures/conv_float.mge", "--budget", "6"])
            .args(ALL_BUT_FAST_RUN),
        0,
    );
    (json_of(&stdout), stderr)
}

/// The one record of a search that the algorithm cache of `home` keeps.
fn search_record(home: &Path) -> PathBuf {
    let records: Vec<PathBuf> = std::fs::read_dir(home.join("mge/algo-cache"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "tune"))
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    records[0].clone()
}

/// A record whose figures no run measures (a baseline's median below zero,
/// which a drift from the baseline now would have explained as a machine
/// that changed) is damaged: a note, and every candidate measured anew.
#[test]
fn a_record_of_figures_no_run_measures_is_measured_anew() {
    let home = tempfile::tempdir().unwrap();
    let (first, _) = steady_tune(home.path());
    assert_eq!(first["search"]["source"], "measured", "{first:#}");
    let record = search_record(home.path());
    let mut kept: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    kept["baseline"]["measured"]["median_ms"] = (-1.0).into();
    std::fs::write(&record, serde_json::to_vec(&kept).unwrap()).unwrap();
    let (second, stderr) = steady_tune(home.path());
    assert_eq!(second["search"]["source"], "measured", "{second:#}");
    assert_eq!(second["search"]["record_unused"], Value::Null, "{second:#}");
    let note = "note: the record of tune's last search of this model is damaged: it holds figures no run measures: every candidate is measured anew";
    assert!(stderr.lines().any(|line| line == note), "{stderr}");
}

/// A second tune of the same model with the same settings takes its search
/// from the first's record (the same table, to the figure) and measures
/// only the baseline and the confirmation; a damaged record is said in a
/// note and the search measured anew.
#[test]
fn a_second_tune_takes_its_search_from_the_record() {
    let home = tempfile::tempdir().unwrap();
    let tune = || steady_tune(home.path());
    let (first, _) = tune();
    assert_eq!(first["search"]["source"], "measured", "{first:#}");
    let (second, _) = tune();
    assert_eq!(second["search"]["source"], "recorded", "{second:#}");
    assert_eq!(second["search"]["took_s"], first["search"]["took_s"]);
    assert_eq!(second["candidates"], first["candidates"]);
    assert!(
        second["search"]["age_s"].as_f64().is_some_and(|age| age < 600.0),
        "{second:#}"
    );

    let record = search_record(home.path());
    std::fs::write(&record, "not a record").unwrap();
    let (third, stderr) = tune();
    assert_eq!(third["search"]["source"], "measured", "{third:#}");
    let note = "note: the record of tune's last search of this model is damaged: it is not a record mge writes: every candidate is measured anew";
    assert!(stderr.lines().any(|line| line == note), "{stderr}");
    // Measured anew, it is the record again.
    let (fourth, _) = tune();
    assert_eq!(fourth["search"]["source"], "recorded", "{fourth:#}");

    // A record another user could change is neither read nor replaced.
    let kept = std::fs::read(&record).unwrap();
    let folder = home.path().join("mge/algo-cache");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (fifth, stderr) = tune();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(fifth["search"]["source"], "measured", "{fifth:#}");
    let refused = format!(
        "{} is writable by every user: mge reads nothing it keeps that another user could change",
        folder.display()
    );
    assert!(
        stderr.contains(&format!(
            "note: the record of tune's last search is not read: {refused}"
        )) && stderr.contains(&format!("note: the search's record is not kept: {refused}")),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&record).unwrap(), kept);
}
