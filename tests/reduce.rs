//! `--repro DIR --reduce` of run and check: the folder also holds the
//! smallest part of the model found to fail alike, `reduced.mge`, which its
//! `command.sh` runs, and `full-command.sh` the whole model. The model
//! (`fixtures/make_reduce_fixtures.py`): its fifth computing operator is
//! log(x - 2), six more follow; what the first five compute, their operators
//! and the first var to go NaN all come from MegEngine. Crashes and hangs in
//! that operator come from the stand-in library (`MGE_FAULT_VAR`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::*;
use crate::repro::{elsewhere, files_in, reproduce, written};

fn reduce_manifest() -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join("fixtures/reduce_manifest.json")).unwrap()).unwrap()
}

/// Operators by type, as MegEngine listed them.
fn by_type(operators: &[Value]) -> BTreeMap<String, u64> {
    let mut counted = BTreeMap::new();
    for operator in operators {
        *counted
            .entry(operator["type"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    counted
}

/// The reduced model is MegEngine's own cut at the fifth operator's var:
/// the same operators by type, the input, and that var its only output.
fn assert_is_the_first_five_operators(reduced: &Path) {
    let manifest = reduce_manifest();
    let cut = &manifest["cut"];
    let mut info = mge();
    info.args(["info", "--ops", "--json"]).arg(reduced);
    let (stdout, _) = run_expecting(&mut info, 0);
    let info = json_of(&stdout);
    let outputs: Vec<&str> = info["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(outputs, [cut["var"].as_str().unwrap()]);
    assert_eq!(info["inputs"][0]["name"], "data");
    let counted: BTreeMap<String, u64> = info["ops"]["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kind| {
            (
                kind["type"].as_str().unwrap().to_string(),
                kind["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(counted, by_type(cut["operators"].as_array().unwrap()));
}

/// `mge ARGS` on the stand-in library, failing with `fault` in the operator that writes var `LOG`.
fn failing_in_the_log(fault: &str) -> assert_cmd::Command {
    let mut command = mge();
    command
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", fault)
        .env("MGE_FAULT_VAR", "LOG");
    command
}

#[test]
fn a_nan_is_cut_at_the_first_var_that_holds_it() {
    let manifest = reduce_manifest();
    let cut = &manifest["cut"];
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .args([
            "run",
            manifest["model"].as_str().unwrap(),
            "-q",
            "--check-finite",
            "--iter",
            "2",
        ])
        .args(["-i", &format!("data:{}", manifest["input"].as_str().unwrap())])
        .arg("--repro")
        .arg(&repro)
        .arg("--reduce");
    let (_, stderr) = run_expecting(&mut command, 1);
    let written = written(&stderr);
    let (folder, line) = &written[0];
    assert!(line.ends_with("-- reduced.mge"), "{line}");
    let files = files_in(folder);
    assert!(
        files.contains(&"reduced.mge".into()) && files.contains(&"full-command.sh".into()),
        "{files:?}"
    );
    assert_is_the_first_five_operators(&folder.join("reduced.mge"));
    let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
    for said in [
        "reduced.mge is the part of the model that computes var 'LOG'",
        "5 of them computing",
        "of type Elemwise (as the engine runs it), whose inputs had shapes (1, 4, 16, 16) in the run",
        "Found by the engine's io dump of the whole model, in which var 'LOG' is the first",
    ] {
        assert!(readme.contains(said), "{said:?} in\n{readme}");
    }

    // Its output is MegEngine's for the first five operators.
    let outputs = dir.path().join("outputs");
    let mut run = mge();
    run.args(["run", "-q", "--iter", "1"])
        .arg(folder.join("reduced.mge"))
        .args([
            "-i",
            &format!("data:{}", manifest["input"].as_str().unwrap()),
            "--outputs",
        ])
        .arg(&outputs);
    run_expecting(&mut run, 0);
    let got = read_f32(&outputs.join("LOG.npy"));
    let reference = read_f32(&root().join(cut["reference"].as_str().unwrap()));
    assert_eq!(got.shape(), reference.shape());
    let nan = got.iter().filter(|value| value.is_nan()).count();
    assert_eq!(nan as u64, cut["nan"].as_u64().unwrap());
    for (a, b) in got.iter().zip(reference.iter()) {
        assert!(
            (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-5 * b.abs().max(1.0),
            "{a} vs {b}"
        );
    }

    // Both commands fail alike from a copy of the folder.
    let (_place, copy) = elsewhere(folder);
    let (_, stderr) = run_expecting(&mut reproduce(&copy, "bash command.sh"), 1);
    let holds = format!(
        "output 'LOG' holds {} NaN among 1024 values (--check-finite)",
        cut["nan"]
    );
    assert!(stderr.contains(&holds), "{stderr}");
    let (_, stderr) = run_expecting(&mut reproduce(&copy, "bash full-command.sh"), 1);
    let holds = format!(
        "output 'out' holds {} NaN among 4 values (--check-finite)",
        manifest["output_nan"]
    );
    assert!(stderr.contains(&holds), "{stderr}");
}

/// `check`: the container's model, fed the values of the testcase that failed.
#[test]
fn check_cuts_a_container_fed_its_testcases_values() {
    let manifest = reduce_manifest();
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .args([
            "check",
            manifest["container"].as_str().unwrap(),
            "--check-finite",
            "--repro",
        ])
        .arg(&repro)
        .arg("--reduce");
    let (_, stderr) = run_expecting(&mut command, 1);
    let (folder, line) = &written(&stderr)[0];
    assert!(
        line.contains("-i=data:feeds/0/data.npy") && line.ends_with("-- reduced.mge"),
        "{line}"
    );
    assert_is_the_first_five_operators(&folder.join("reduced.mge"));
    let (_place, copy) = elsewhere(folder);
    let (_, stderr) = run_expecting(&mut reproduce(&copy, "bash command.sh"), 1);
    assert!(stderr.contains("output 'LOG' holds"), "{stderr}");
    let (stdout, _) = run_expecting(&mut reproduce(&copy, "bash full-command.sh"), 1);
    assert!(stdout.contains("model.mge #0: FAILED: output 'out' holds"), "{stdout}");
}

/// A crash, and a hang, in the fifth operator: bisection over the eleven
/// computing operators finds the first five, each try in a process of its own.
#[test]
fn a_crash_or_a_hang_is_cut_by_bisection() {
    let manifest = reduce_manifest();
    for (fault, code, said) in [
        ("segv", 2, "the engine crashed (SIGSEGV)"),
        ("hang", 2, "stopped after --timeout 2s"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let repro = dir.path().join("repro");
        let mut command = failing_in_the_log(fault);
        command
            .args([
                "run",
                manifest["model"].as_str().unwrap(),
                "-q",
                "--iter",
                "1",
                "--timeout",
                "2",
            ])
            .arg("--repro")
            .arg(&repro)
            .arg("--reduce");
        let (_, stderr) = run_expecting(&mut command, code);
        assert!(stderr.contains(said), "{stderr}");
        let (folder, line) = &written(&stderr)[0];
        assert!(line.ends_with("-- reduced.mge"), "{fault}: {line}");
        assert_is_the_first_five_operators(&folder.join("reduced.mge"));
        let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
        assert!(
            readme.contains("Found by bisection over the model's 11 computing operators"),
            "{fault}: {readme}"
        );
        let (_place, copy) = elsewhere(folder);
        for script in ["bash command.sh", "bash full-command.sh"] {
            let (_, stderr) = run_expecting(&mut reproduce(&copy, script), code);
            assert!(stderr.contains(said), "{fault}, {script}: {stderr}");
        }
    }
}

/// A wrong output is not cut: the folder says why, and its command runs the model.
#[test]
fn a_failure_that_is_not_cut_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .args([
            "run",
            "fixtures/conv_float_tc3_wrong.mge",
            "-q",
            "--iter",
            "1",
            "--repro",
        ])
        .arg(&repro)
        .arg("--reduce");
    let (_, stderr) = run_expecting(&mut command, 1);
    let (folder, line) = &written(&stderr)[0];
    assert!(line.ends_with("-- model.mge"), "{line}");
    assert!(!files_in(folder).contains(&"reduced.mge".into()));
    let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
    assert!(
        readme.contains("Not reduced (--reduce): --reduce cuts crashes, exits, hangs and non-finite outputs"),
        "{readme}"
    );
    let mut alone = mge();
    alone.args(["run", "fixtures/conv_float.mge", "--reduce"]);
    let (_, stderr) = run_expecting(&mut alone, 2);
    assert!(stderr.contains("--repro"), "{stderr}");
}
