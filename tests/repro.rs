//! `--repro DIR` of run, check and compare: the folder a failing model leaves
//! reproduces the failure with the command mge printed, run from inside a copy
//! of the folder somewhere else (the fixtures and the first folder out of
//! reach), with only mge and the runtime installed. Failures come from
//! MegEngine (a testcase container whose expectations are wrong, two models
//! that diverge) or from the stand-in fault library, as `supervision` has them.

use std::path::{Path, PathBuf};

use crate::common::*;

/// What `mge ... --repro DIR` said of each folder it wrote: the folder and
/// the command line that reproduces its failure from inside it.
pub(crate) fn written(stderr: &str) -> Vec<(PathBuf, String)> {
    stderr
        .lines()
        .filter_map(|line| line.strip_prefix("repro: wrote "))
        .map(|line| {
            let (folder, command) = line
                .split_once("; to reproduce, from inside it run: ")
                .unwrap_or_else(|| panic!("no command in {line}"));
            (PathBuf::from(folder), command.to_string())
        })
        .collect()
}

/// A copy of `folder` in a new place, as a bug report arrives elsewhere.
pub(crate) fn elsewhere(folder: &Path) -> (tempfile::TempDir, PathBuf) {
    let place = tempfile::tempdir().unwrap();
    let copy = place.path().join(folder.file_name().unwrap());
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(folder)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    (place, copy)
}

/// `bash -c COMMAND` from inside `folder`, with mge on PATH and, besides the
/// runtime's cache, nothing of the environment that made the folder.
pub(crate) fn reproduce(folder: &Path, command: &str) -> assert_cmd::Command {
    let mge = assert_cmd::cargo::cargo_bin("mge");
    let path = format!(
        "{}:{}",
        mge.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut bash = assert_cmd::Command::new("bash");
    bash.current_dir(folder)
        .env("PATH", path)
        .env_remove("MGE_LITE_LIB")
        .env_remove("MGE_FAULT")
        .env_remove("MGE_FAULT_AT")
        .arg("-c")
        .arg(command)
        .timeout(COMMAND_TIMEOUT);
    bash
}

pub(crate) fn files_in(folder: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

/// The folder's files every reproducer has, besides its model and feeds.
const ALWAYS: [&str; 6] = [
    "README.txt",
    "command.sh",
    "cpu.json",
    "engine.log",
    "options.txt",
    "runtime.json",
];

/// The recorded values of testcase `index` of `conv_float_tc3_wrong` against
/// what MegEngine wrote in the manifest when it made the container.
fn assert_testcase_feeds(folder: &Path, index: usize) {
    let manifest = manifest();
    let testcase = &model(&manifest, "conv_float_tc3_wrong")["testcase_list"][index];
    let feeds = folder.join("feeds").join(index.to_string());
    let inputs: Vec<(String, String)> =
        serde_json::from_str(&std::fs::read_to_string(feeds.join("inputs.json")).unwrap()).unwrap();
    for tensor in testcase["tensors"].as_array().unwrap() {
        let name = tensor["name"].as_str().unwrap();
        let (_, file) = inputs.iter().find(|(input, _)| input == name).unwrap();
        let values = read_f32(&feeds.join(file));
        let min = values.iter().copied().fold(f32::INFINITY, f32::min);
        let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(min, tensor["min"].as_f64().unwrap() as f32, "{name}");
        assert_eq!(max, tensor["max"].as_f64().unwrap() as f32, "{name}");
    }
}

#[test]
fn a_failing_testcase_of_run_reproduces_from_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .args([
            "run",
            "fixtures/conv_float_tc3_wrong.mge",
            "-q",
            "--iter",
            "2",
            "--repro",
        ])
        .arg(&repro);
    let (stdout, stderr) = run_expecting(&mut command, 1);
    assert!(stdout.contains("testcase 1: FAILED  'feat' err 1"), "{stdout}");
    let written = written(&stderr);
    assert_eq!(written.len(), 1, "{stderr}");
    let (folder, line) = &written[0];
    assert_eq!(folder, &repro.join("conv_float_tc3_wrong"));
    assert_eq!(line, "mge run --seed=0 --warmup=1 --iter=2 -- model.mge");
    let mut expected = [&ALWAYS[..], &["feeds", "model.mge"]].concat();
    expected.sort();
    assert_eq!(files_in(folder), expected);
    assert_eq!(
        std::fs::read(folder.join("model.mge")).unwrap(),
        std::fs::read(root().join("fixtures/conv_float_tc3_wrong.mge")).unwrap()
    );
    for index in 0..3 {
        assert_testcase_feeds(folder, index);
    }
    let log = std::fs::read_to_string(folder.join("engine.log")).unwrap();
    assert!(log.contains("AssertEqual: err=1 "), "the engine's own words:\n{log}");
    let script = std::fs::read_to_string(folder.join("command.sh")).unwrap();
    assert!(script.ends_with(&format!("\n{line}\n")), "{script}");

    let (_place, copy) = elsewhere(folder);
    let (stdout, _) = run_expecting(&mut reproduce(&copy, line), 1);
    assert!(stdout.contains("testcase 1: FAILED  'feat' err 1"), "{stdout}");
    assert!(
        stdout.contains("testcase 0: passed") && stdout.contains("testcase 2: passed"),
        "{stdout}"
    );
    let (stdout, _) = run_expecting(&mut reproduce(&copy, "bash command.sh"), 1);
    assert!(stdout.contains("testcase 1: FAILED  'feat' err 1"), "{stdout}");
}

#[test]
fn a_failing_testcase_of_check_reproduces_from_its_folder_and_a_passing_model_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .args([
            "check",
            "fixtures/conv_float_tc3_wrong.mge",
            "fixtures/conv_float_tc1.mge",
            "-j",
            "2",
            "--repro",
        ])
        .arg(&repro);
    let (_, stderr) = run_expecting(&mut command, 1);
    let written = written(&stderr);
    assert_eq!(written.len(), 1, "{stderr}");
    assert_eq!(files_in(&repro), ["conv_float_tc3_wrong"], "only the failing model");
    let (folder, line) = &written[0];
    assert_eq!(line, "mge check --cpu-inplace -- model.mge");
    assert_testcase_feeds(folder, 1);
    let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
    assert!(
        readme.contains("What failed: testcase 1 failed: 'feat': got 0.289750, expected 1.289750"),
        "{readme}"
    );
    let (_place, copy) = elsewhere(folder);
    let (stdout, _) = run_expecting(&mut reproduce(&copy, line), 1);
    assert!(stdout.contains("model.mge #1: FAILED  'feat' err 1"), "{stdout}");
    assert!(stdout.contains("2 passed, 1 failed"), "{stdout}");
}

/// The fault library's engine exit from a worker thread (as oneDNN's on AMD
/// CPUs with AVX-512): the command carries what makes it fail (the library and
/// `MGE_FAULT`), and the feeds are the user's values exactly.
#[test]
fn an_engine_exit_of_run_reproduces_from_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", "exit")
        .env("MGE_FAULT_AT", "forward")
        .args(["run", "fixtures/conv_float.mge", "-q", "--threads", "2"])
        .args(["-i", "data:fixtures/feeds/conv_data.npy", "--repro"])
        .arg(&repro);
    let (_, stderr) = run_expecting(&mut command, 2);
    let failure =
        "mge: error: the engine ended the process with exit(1) from its thread 'multithread2:0' during the warm-up";
    assert!(stderr.contains(failure), "{stderr}");
    let written = written(&stderr);
    assert_eq!(written.len(), 1, "{stderr}");
    let (folder, line) = &written[0];
    let library = fault_library().display().to_string();
    assert_eq!(
        line,
        &format!(
            "env MGE_FAULT=exit MGE_FAULT_AT=forward mge run -i=data:feeds/data.npy --seed=0 --threads=2 \
             --warmup=1 --iter=10 --no-testcase --lite-lib={library} -- model.mge"
        )
    );
    assert_eq!(
        read_f32(&folder.join("feeds/data.npy")),
        read_f32(&root().join("fixtures/feeds/conv_data.npy")),
        "the values fed"
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("options.txt")).unwrap(),
        "--threads 2\n"
    );
    let runtime: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("runtime.json")).unwrap()).unwrap();
    assert_eq!(runtime["version"], "1.13.0", "as the library says");
    assert_eq!(runtime["files"][0]["path"], library.as_str());
    assert_eq!(runtime["files"][0]["sha256"].as_str().unwrap().len(), 64);
    let cpu: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("cpu.json")).unwrap()).unwrap();
    assert!(
        cpu["vendor"].is_string() && !cpu["flags"].as_array().unwrap().is_empty(),
        "{cpu}"
    );
    let log = std::fs::read_to_string(folder.join("engine.log")).unwrap();
    assert!(log.contains("bad err=45 in Xbyak::Error"), "{log}");

    let (_place, copy) = elsewhere(folder);
    let (_, stderr) = run_expecting(&mut reproduce(&copy, line), 2);
    assert!(stderr.contains(failure), "{stderr}");
    let (_, stderr) = run_expecting(&mut reproduce(&copy, "bash command.sh -q"), 2);
    assert!(stderr.contains(failure), "{stderr}");
}

/// A hang at load: the command stops at the same `--timeout`; the engine was
/// not fed, and the folder says so.
#[test]
fn a_hang_reproduces_from_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", "hang")
        .env("MGE_FAULT_AT", "load")
        .args(["run", "fixtures/conv_float.mge", "-q", "--timeout", "1", "--repro"])
        .arg(&repro);
    let (_, stderr) = run_expecting(&mut command, 2);
    let (folder, line) = &written(&stderr)[0];
    assert!(!folder.join("feeds").exists());
    let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
    assert!(
        readme.contains("(no feeds: the engine failed before it was fed)"),
        "{readme}"
    );
    let (_place, copy) = elsewhere(folder);
    let (_, stderr) = run_expecting(&mut reproduce(&copy, line), 2);
    assert!(
        stderr.contains("stopped after --timeout 1s while the engine loaded the model"),
        "{stderr}"
    );
}

#[test]
fn an_engine_exit_of_check_reproduces_each_model_from_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", "exit")
        .env("MGE_FAULT_AT", "forward")
        .args([
            "check",
            "fixtures/conv_float_tc1.mge",
            "fixtures/two_inputs_tc2.mge",
            "-j",
            "2",
            "--threads",
            "2",
            "--repro",
        ])
        .arg(&repro);
    let (_, stderr) = run_expecting(&mut command, 1);
    let written = written(&stderr);
    assert_eq!(files_in(&repro), ["conv_float_tc1", "two_inputs_tc2"], "{stderr}");
    for (folder, line) in &written {
        assert!(
            line.starts_with("env MGE_FAULT=exit MGE_FAULT_AT=forward mge check --threads=2 "),
            "{line}"
        );
        let (_place, copy) = elsewhere(folder);
        let (stdout, _) = run_expecting(&mut reproduce(&copy, line), 1);
        assert!(
            stdout.contains(
                "model.mge: ERROR: the engine ended the process with exit(1) from its thread 'multithread2:0'"
            ),
            "{stdout}"
        );
    }
}

/// Two models whose outputs differ (MegEngine's `divergence_a` and `_b`).
#[test]
fn differing_outputs_of_compare_reproduce_from_their_folder() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .args([
            "compare",
            "fixtures/divergence_a.mge",
            "fixtures/divergence_b.mge",
            "-q",
            "-i",
            "fixtures/feeds/divergence_data.npy",
            "--no-timing",
            "--repro",
        ])
        .arg(&repro);
    let (_, stderr) = run_expecting(&mut command, 1);
    let (folder, line) = &written(&stderr)[0];
    assert_eq!(
        line,
        "mge compare -i=data:feeds/data.npy --seed=0 --no-timing --stat=max --allow-outliers=0 --no-testcase -- a.mge b.mge"
    );
    assert_eq!(
        read_f32(&folder.join("feeds/data.npy")),
        read_f32(&root().join("fixtures/feeds/divergence_data.npy"))
    );
    let (_place, copy) = elsewhere(folder);
    let (stdout, _) = run_expecting(&mut reproduce(&copy, line), 1);
    assert!(stdout.contains("out"), "{stdout}");
    assert!(stdout.contains("0 passed, 1 failed"), "{stdout}");
}

/// Run B dies in the engine (the stand-in's exit from a worker thread, on
/// B's own runtime library named in `--b-options`): the line runs B on it again.
#[test]
fn an_engine_exit_of_compare_reproduces_from_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let library = fault_library().display().to_string();
    let mut command = mge();
    command
        .env("MGE_FAULT", "exit")
        .env("MGE_FAULT_AT", "forward")
        .args(["compare", "fixtures/conv_float.mge", "-q", "--threads", "2"])
        .arg(format!("--b-options=--lite-lib {library}"))
        .args(["-i", "data:fixtures/feeds/conv_data.npy", "--repro"])
        .arg(&repro);
    let (_, stderr) = run_expecting(&mut command, 2);
    let failure = "the engine ended the process with exit(1) from its thread 'multithread2:0'";
    assert!(
        stderr.contains("\nmge: error: run b (") && stderr.contains(failure),
        "{stderr}"
    );
    let written = written(&stderr);
    assert_eq!(written.len(), 1, "{stderr}");
    let (folder, line) = &written[0];
    assert_eq!(
        line,
        &format!(
            "env MGE_FAULT=exit MGE_FAULT_AT=forward mge compare -i=data:feeds/data.npy --seed=0 \
             '--a-options=--threads 2' '--b-options=--threads 2 --lite-lib {library}' --no-timing --stat=max \
             --allow-outliers=0 --no-testcase -- model.mge"
        )
    );
    assert_eq!(
        read_f32(&folder.join("feeds/data.npy")),
        read_f32(&root().join("fixtures/feeds/conv_data.npy")),
        "the values fed"
    );
    let (_place, copy) = elsewhere(folder);
    let (_, stderr) = run_expecting(&mut reproduce(&copy, line), 2);
    assert!(
        stderr.contains("mge: error: run b (model.mge --threads 2") && stderr.contains(failure),
        "{stderr}"
    );
}

/// Two folders of models: `--repro` writes one pair's folder, and says so.
#[test]
fn two_folders_refuse_repro_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for side in [&a, &b] {
        std::fs::create_dir(side).unwrap();
        std::fs::copy(root().join("fixtures/conv_float.mge"), side.join("conv.mge")).unwrap();
    }
    let mut command = mge();
    command
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("--repro")
        .arg(dir.path().join("repro"));
    let (_, stderr) = run_expecting(&mut command, 2);
    assert_eq!(
        stderr,
        "mge: error: --repro writes the folder of one pair: compare the failing pair's models alone to write it\n"
    );
    assert!(!dir.path().join("repro").exists());
}

#[test]
fn nothing_is_written_when_nothing_fails() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .args(["run", "fixtures/conv_float.mge", "-q", "--repro"])
        .arg(&repro);
    let (_, stderr) = run_expecting(&mut command, 0);
    assert!(!stderr.contains("repro"), "{stderr}");
    assert!(left_in(dir.path()).is_empty(), "{:?}", left_in(dir.path()));
}

#[test]
fn the_folder_is_claimed_as_every_output_is() {
    for args in [
        &["run", "fixtures/conv_float.mge", "--repro", "fixtures"][..],
        &["check", "fixtures/conv_float_tc1.mge", "--repro", "fixtures"],
        &[
            "compare",
            "fixtures/divergence_a.mge",
            "fixtures/divergence_b.mge",
            "--repro",
            "fixtures",
        ],
    ] {
        let (_, stderr) = run_expecting(mge().args(args), 2);
        assert!(
            stderr.starts_with("mge: error: --repro fixtures: fixtures holds ")
                && stderr.contains("which this command reads"),
            "{args:?}: {stderr}"
        );
    }
}

/// `--repro` at a link that leads to no folder was taken: the run went
/// ahead and ended with a warning and no folder (the staging folder cannot
/// be renamed over the link). It is refused as `--outputs` is, before any
/// work: the engine here crashes as it loads, should a child load it.
#[test]
fn a_folder_at_a_dangling_link_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    for args in [
        &["run", "fixtures/conv_float.mge", "--iter", "1"][..],
        &["check", "fixtures/conv_float_tc1.mge"],
        &["compare", "fixtures/conv_float.mge", "fixtures/conv_float.mge"],
        &["run", "fixtures/conv_float.mge", "--sweep", "data:1x3x16x16"],
    ] {
        let mut command = mge();
        command
            .args(args)
            .args(["-q", "--repro"])
            .arg(&dangling)
            .env("MGE_LITE_LIB", fault_library())
            .env("MGE_FAULT", "segv")
            .env("MGE_FAULT_AT", "open");
        let (stdout, stderr) = run_expecting(&mut command, 2);
        let expected = format!(
            "mge: error: --repro {0}: {0} is a symbolic link to {1}, which leads to no folder: make the folder, or name another\n",
            dangling.display(),
            dir.path().join("nowhere").display()
        );
        assert_eq!(stderr, expected, "{args:?}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(left_in(dir.path()), std::slice::from_ref(&dangling), "{args:?}");
    }
}

/// The variable that has a child record its feeds is the parent's to set:
/// one in the user's environment records nothing anywhere.
#[test]
fn a_record_folder_from_the_environment_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record");
    let mut command = mge();
    command
        .env("MGE_REPRO_RECORD", &record)
        .args(["run", "fixtures/conv_float.mge", "-q"]);
    run_expecting(&mut command, 0);
    assert!(!record.exists());
}

/// A report meant to be shared holds no secret: a key given inline becomes
/// `--model-key @model.key`, which the folder says to supply (nothing the
/// folder holds, nor the `repro:` line, holds the key); of the variables
/// that share the engine's prefixes, only those the runtime reads (named in
/// its libraries) are carried, not a token or a name the engine never reads.
#[test]
fn a_reproducer_holds_no_key_and_no_variable_the_engine_does_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let key = std::fs::read(root().join("fixtures/deploy/user_rc4.key")).unwrap();
    let hex: String = key.iter().map(|byte| format!("{byte:02x}")).collect();
    let wrong = dir.path().join("wrong.npy");
    ndarray_npy::write_npy(&wrong, &ndarray::Array2::<f32>::zeros((1, 8))).unwrap();
    let repro = dir.path().join("repro");
    let (_, stderr) = run_expecting(
        mge()
            .env("MGE_API_TOKEN", "s3cret-token")
            .env("MGB_NOT_READ_BY_THE_ENGINE", "1")
            .env("MGB_WORKER_MAX_SPIN", "3")
            .args(["run", "fixtures/deploy/conv_float_packed_rc4_userkey.pack", "-q"])
            .args(["--model-key", &hex, "--expect"])
            .arg(format!("feat:{}", wrong.display()))
            .arg("--repro")
            .arg(&repro),
        1,
    );
    assert!(!stderr.contains(&hex), "{stderr}");
    let written = written(&stderr);
    let (folder, line) = &written[0];
    assert!(line.starts_with("env MGB_WORKER_MAX_SPIN=3 mge run "), "{line}");
    assert!(line.contains("--model-key=@model.key"), "{line}");
    for entry in walk(folder) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
        for secret in [
            hex.as_str(),
            "s3cret-token",
            "MGE_API_TOKEN",
            "MGB_NOT_READ_BY_THE_ENGINE",
        ] {
            assert!(!text.contains(secret), "{} holds {secret}", entry.display());
        }
    }
    let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
    assert!(readme.contains("model.key  not here: the model's key"), "{readme}");
    assert!(!folder.join("model.key").exists());
    // Supplied, the key reproduces the failure.
    let (_place, copy) = elsewhere(folder);
    std::fs::write(copy.join("model.key"), &key).unwrap();
    let (stdout, _) = run_expecting(&mut reproduce(&copy, line), 1);
    assert!(stdout.contains(") FAILED"), "{stdout}");
}

/// Every file under `folder`.
fn walk(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        match path.is_dir() {
            true => files.extend(walk(&path)),
            false => files.push(path),
        }
    }
    files
}
