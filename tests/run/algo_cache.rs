//! Fast-run paid once: the algorithm cache of the cache folder, on the real
//! engine. Whether the engine profiled is what `run` reports
//! (`timing_ms.profiling`, measured apart, is absent when nothing was
//! profiled), never how long anything took.

use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::Value;

/// `mge run MODEL --fast-run` on the cache folder `home`, its outputs written
/// into `outputs`: its JSON report and what it said on stderr.
fn fast_run(home: &Path, model: &str, outputs: &Path, extra: &[&str]) -> (Value, String) {
    let (stdout, stderr) = run_expecting(
        mge_with_algo_cache(home)
            .args(["run", model, "--fast-run", "--json", "--iter", "2", "-i"])
            .arg(root().join("fixtures/feeds/conv_data.npy"))
            .arg("--outputs")
            .arg(outputs)
            .args(extra),
        0,
    );
    (json_of(&stdout), stderr)
}

fn profiled(report: &Value) -> bool {
    !report["timing_ms"]["profiling"].is_null()
}

/// The cache folder's algorithm cache files (`*.algo`).
fn cache_files(home: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(home.join("mge/algo-cache")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "algo"))
        .collect();
    files.sort();
    files
}

/// conv_float's output on conv_data, as megenginelite wrote it.
fn assert_reference(outputs: &Path) {
    let reference = read_f32(&root().join("fixtures/ref/conv_float__conv_data/feat.npy"));
    assert_close(&read_f32(&outputs.join("feat.npy")), &reference, "feat");
}

#[test]
fn a_second_fast_run_loads_what_the_first_profiled() {
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (first, _) = fast_run(home.path(), "fixtures/conv_float.mge", &out.path().join("1"), &[]);
    assert!(profiled(&first), "{first}");
    assert_eq!(cache_files(home.path()).len(), 1);
    let (second, stderr) = fast_run(home.path(), "fixtures/conv_float.mge", &out.path().join("2"), &[]);
    assert!(!profiled(&second), "{second}");
    assert!(!stderr.contains("algorithm cache"), "{stderr}");
    for run in ["1", "2"] {
        assert_reference(&out.path().join(run));
    }
    // Another thread count chooses its own algorithms: another file, profiled.
    let (threads, _) = fast_run(
        home.path(),
        "fixtures/conv_float.mge",
        &out.path().join("3"),
        &["--threads", "2"],
    );
    assert!(profiled(&threads), "{threads}");
    assert_eq!(cache_files(home.path()).len(), 2);
    // `runtime info` says where it is and how much it holds.
    let (stdout, _) = run_expecting(mge_with_algo_cache(home.path()).args(["runtime", "info", "--json"]), 0);
    let info = &json_of(&stdout)["algo_cache"];
    let dir = home.path().join("mge/algo-cache");
    assert_eq!(info["path"], dir.to_str().unwrap(), "{info}");
    assert_eq!(info["files"], 2, "{info}");
    let bytes: u64 = cache_files(home.path())
        .iter()
        .map(|file| std::fs::metadata(file).unwrap().len())
        .sum();
    assert_eq!(info["bytes"], bytes, "{info}");
    assert_eq!(info["disabled"], false, "{info}");
}

#[test]
fn a_damaged_cache_changes_nothing_but_a_note() {
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    fast_run(home.path(), "fixtures/conv_float.mge", &out.path().join("1"), &[]);
    let [file] = &cache_files(home.path())[..] else {
        panic!("one cache file");
    };
    // A byte of the engine's cache changed, then the file cut short, then garbage.
    let whole = std::fs::read(file).unwrap();
    let mut flipped = whole.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x55;
    for (at, damaged) in [
        flipped,
        whole[..whole.len() / 2].to_vec(),
        b"\x01\0\0\0\xff\xff".to_vec(),
    ]
    .into_iter()
    .enumerate()
    {
        std::fs::write(file, &damaged).unwrap();
        let outputs = out.path().join(format!("damaged-{at}"));
        let (report, stderr) = fast_run(home.path(), "fixtures/conv_float.mge", &outputs, &[]);
        assert!(profiled(&report), "{report}");
        assert_reference(&outputs);
        let aside = file.with_extension("algo.set-aside");
        let note = format!("note: the algorithm cache {} is damaged: ", file.display());
        assert!(stderr.contains(&note), "{stderr}");
        assert!(
            stderr.contains(&format!("set aside as {}; fast-run profiles again", aside.display())),
            "{stderr}"
        );
        assert_eq!(std::fs::read(&aside).unwrap(), damaged);
        // The run kept what it profiled: the next one loads it.
        let (next, stderr) = fast_run(home.path(), "fixtures/conv_float.mge", &out.path().join("next"), &[]);
        assert!(!profiled(&next) && !stderr.contains("algorithm cache"), "{stderr}");
    }
}

/// Two processes profile and keep at once, under the same key: each one's
/// algorithms are kept, and a later run of either model profiles nothing.
#[test]
fn two_processes_at_once_are_fine() {
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let models = ["fixtures/conv_float.mge", "fixtures/divergence_a.mge"];
    std::thread::scope(|scope| {
        for (at, model) in models.iter().enumerate() {
            let (home, outputs) = (home.path(), out.path().join(at.to_string()));
            scope.spawn(move || {
                run_expecting(
                    mge_with_algo_cache(home)
                        .args(["run", model, "--fast-run", "-q", "--iter", "2", "--outputs"])
                        .arg(outputs),
                    0,
                )
            });
        }
    });
    assert_eq!(cache_files(home.path()).len(), 1);
    for model in models {
        let (stdout, _) = run_expecting(
            mge_with_algo_cache(home.path()).args(["run", model, "--fast-run", "--json", "-q", "--iter", "2"]),
            0,
        );
        let report = json_of(&stdout);
        assert!(!profiled(&report), "{model}: {report}");
    }
}

#[test]
fn the_opt_outs_profile_and_keep_nothing() {
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (opted_out, _) = fast_run(
        home.path(),
        "fixtures/conv_float.mge",
        &out.path().join("1"),
        &["--no-algo-cache"],
    );
    assert!(profiled(&opted_out));
    assert!(cache_files(home.path()).is_empty());
    let (stdout, _) = run_expecting(
        mge_with_algo_cache(home.path()).env("MGE_NO_ALGO_CACHE", "1").args([
            "run",
            "fixtures/conv_float.mge",
            "--fast-run",
            "--json",
            "-q",
            "--iter",
            "2",
        ]),
        0,
    );
    assert!(profiled(&json_of(&stdout)));
    assert!(cache_files(home.path()).is_empty());
    // With a cache kept, the opt-outs still profile.
    fast_run(home.path(), "fixtures/conv_float.mge", &out.path().join("2"), &[]);
    let (opted_out, _) = fast_run(
        home.path(),
        "fixtures/conv_float.mge",
        &out.path().join("3"),
        &["--no-algo-cache"],
    );
    assert!(profiled(&opted_out));
    // `--fast-run-cache FILE` keeps its meaning: the user's file, profiled into, the cache folder's untouched.
    let before = std::fs::read(&cache_files(home.path())[0]).unwrap();
    let own = out.path().join("own.cache");
    let (own_run, _) = fast_run(
        home.path(),
        "fixtures/conv_float.mge",
        &out.path().join("4"),
        &["--fast-run-cache", own.to_str().unwrap()],
    );
    assert!(profiled(&own_run));
    assert!(std::fs::metadata(&own).unwrap().len() > 4);
    assert_eq!(std::fs::read(&cache_files(home.path())[0]).unwrap(), before);
    let (stdout, _) = run_expecting(
        mge_with_algo_cache(home.path())
            .env("MGE_NO_ALGO_CACHE", "1")
            .args(["runtime", "info"]),
        0,
    );
    assert!(stdout.contains("(off: MGE_NO_ALGO_CACHE)"), "{stdout}");
}
