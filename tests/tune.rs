//! `mge tune` on the real engine: the search runs within its budget and every
//! candidate it calls safe computes the baseline's outputs.

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

/// Tune's fast-run candidates keep their algorithms in the cache folder's
/// algorithm cache: the second tune's `--fast-run` profiles nothing. The
/// options given clash with every other candidate: fast-run is the one tried.
#[test]
fn fast_run_candidates_keep_their_algorithms_in_the_algorithm_cache() {
    let home = tempfile::tempdir().unwrap();
    let fast_run_profiling = || {
        let (stdout, _) = run_expecting(
            mge_with_algo_cache(home.path())
                .args(["tune", "fixtures/conv_float.mge", "--json", "--budget", "20"])
                .args(["--threads", "1", "--record-comp-seq", "1", "--weight-preprocess"])
                .args(["--fuse-preprocess", "--layout", "nchw44", "--graph-opt-level", "2"]),
            0,
        );
        let report = json_of(&stdout);
        let candidates = report["candidates"].as_array().unwrap();
        let fast_run = candidates
            .iter()
            .find(|candidate| candidate["options"] == "--fast-run")
            .unwrap_or_else(|| panic!("fast-run was tried: {report:#}"));
        assert_eq!(fast_run["status"], "ok", "{fast_run}");
        fast_run["profiling_s"].as_f64()
    };
    assert!(fast_run_profiling().is_some());
    let kept = std::fs::read_dir(home.path().join("algo-cache")).unwrap().count();
    assert!(kept >= 2, "a cache file and its lock");
    assert_eq!(fast_run_profiling(), None);
}
