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

/// `command` runs the reduce fixture once under `--timeout 2`, with
/// `--repro REPRO --reduce`.
fn reduced_within_two_seconds(command: &mut assert_cmd::Command, manifest: &Value, repro: &Path) {
    let model = manifest["model"].as_str().unwrap();
    command
        .args(["run", model, "-q", "--iter", "1", "--timeout", "2", "--repro"])
        .arg(repro)
        .arg("--reduce");
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
        reduced_within_two_seconds(&mut command, &manifest, &repro);
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

/// A whole model that runs into its deadline (the stand-in takes a minute
/// over any part that holds the eighth computing operator's var, as an
/// engine that profiles a larger graph for long) but crashes in the fifth:
/// the deadline the whole model needed is not a part's. The parts that
/// crash sooner fail, and the cut is the first five operators, where the
/// crash comes, not the first eight, where the deadline does.
#[test]
fn a_crash_that_a_deadline_hid_is_cut_where_it_comes() {
    let manifest = reduce_manifest();
    let computing: Vec<&str> = manifest["operators"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["inputs"].as_u64().unwrap() > 0)
        .map(|o| o["outputs"][0].as_str().unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = failing_in_the_log("segv");
    command
        .env("MGE_FAULT_SLOW_VAR", computing[7])
        .env("MGE_FAULT_MS", "60000");
    reduced_within_two_seconds(&mut command, &manifest, &repro);
    let (_, stderr) = run_expecting(&mut command, 2);
    assert!(stderr.contains("stopped after --timeout 2s"), "{stderr}");
    let (folder, line) = &written(&stderr)[0];
    assert!(line.ends_with("-- reduced.mge"), "{line}");
    assert_is_the_first_five_operators(&folder.join("reduced.mge"));
    let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
    assert!(
        readme.contains(
            "It fails otherwise than the whole model, which ran into its deadline (stopped after --timeout 2s"
        ) && readme.contains("the engine crashed (SIGSEGV)"),
        "{readme}"
    );
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

/// A crash that comes and goes (the stand-in fails as `MGE_FAULT_PATTERN`
/// says, process after process): whether the whole model's failure does
/// not come back from inside the folder, or a part fails once and then not,
/// no part is claimed; the folder and a warning say the failure is flaky.
#[test]
fn a_failure_that_comes_and_goes_is_flaky_and_not_reduced() {
    let manifest = reduce_manifest();
    // 1: the command's run; then the reproduction, then each part twice.
    for (pattern, said) in [
        (
            "10",
            "the failure did not come back when the model ran again from inside the folder on its recorded feeds: it ran",
        ),
        ("1101", "failed in one of two runs and not in the other: it ran; then: the engine crashed (SIGSEGV)"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let repro = dir.path().join("repro");
        let mut command = failing_in_the_log("segv");
        command
            .env("MGE_FAULT_PATTERN", pattern)
            .env("MGE_FAULT_COUNTER", dir.path().join("count"))
            .args(["run", manifest["model"].as_str().unwrap(), "-q", "--iter", "1"])
            .arg("--repro")
            .arg(&repro)
            .arg("--reduce");
        let (_, stderr) = run_expecting(&mut command, 2);
        let (folder, line) = &written(&stderr)[0];
        assert!(line.ends_with("-- model.mge"), "{pattern}: {line}");
        let files = files_in(folder);
        assert!(
            !files.contains(&"reduced.mge".into()) && !files.contains(&"full-command.sh".into()),
            "{pattern}: {files:?}"
        );
        let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
        assert!(
            readme.contains("Not reduced (--reduce): the failure is flaky, and no part of the model is claimed to reproduce it")
                && readme.contains(said),
            "{pattern}: {readme}"
        );
        let warning = format!("warning: the failure in {} is flaky", folder.display());
        assert!(stderr.contains(&warning), "{pattern}: {stderr}");
    }
}

/// Where the offset field `index` of the table at `table` of `bytes` points, if present.
fn field_target(bytes: &[u8], table: usize, index: usize) -> Option<usize> {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u16_at = |at: usize| u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap()) as usize;
    let vtable = (table as i64 - i64::from(u32_at(table) as i32)) as usize;
    let entry = 4 + 2 * index;
    let offset = match entry < u16_at(vtable) {
        true => u16_at(vtable + entry),
        false => 0,
    };
    let field = table + offset;
    (offset != 0).then(|| field + u32_at(field) as usize)
}

/// The plain model `model` with the first input of its first operator that
/// reads a var reading var `var`; and that operator's position.
fn reading(model: &[u8], var: u32) -> (Vec<u8>, usize) {
    let u32_at = |at: usize| u32::from_le_bytes(model[at..at + 4].try_into().unwrap()) as usize;
    let root = 4 + u32_at(4);
    let operators = field_target(model, root, 2).unwrap();
    let (operator, inputs) = (0..u32_at(operators))
        .find_map(|operator| {
            let slot = operators + 4 + 4 * operator;
            Some((operator, field_target(model, slot + u32_at(slot), 7)?))
        })
        .unwrap();
    let mut edited = model.to_vec();
    edited[inputs + 4..inputs + 8].copy_from_slice(&var.to_le_bytes());
    (edited, operator)
}

/// An operator that reads a var no operator before it writes (out of
/// range, or written later): MegEngine 1.13 refuses such a graph as it
/// loads, another engine build (the stand-in) runs it and crashes. The crash
/// is the error, in one line; the folder is written, and says why the graph
/// is not cut.
#[test]
fn a_graph_whose_var_ids_do_not_hold_is_not_cut() {
    let manifest = reduce_manifest();
    let model = std::fs::read(root().join(manifest["model"].as_str().unwrap())).unwrap();
    // The last var, which the last operator writes.
    let later = manifest["operators"].as_array().unwrap().len() as u32 - 1;
    for var in [999, u32::MAX, later] {
        let dir = tempfile::tempdir().unwrap();
        let crafted = dir.path().join("crafted.mge");
        let (edited, computing) = reading(&model, var);
        std::fs::write(&crafted, edited).unwrap();
        let repro = dir.path().join("repro");
        let mut command = mge();
        command
            .env("MGE_LITE_LIB", fault_library())
            .env("MGE_FAULT", "segv")
            .args(["run", "-q", "--iter", "1"])
            .arg(&crafted)
            .arg("--repro")
            .arg(&repro)
            .arg("--reduce");
        let (_, stderr) = run_expecting(&mut command, 2);
        let errors: Vec<&str> = stderr.lines().filter(|line| line.starts_with("mge: error:")).collect();
        assert_eq!(errors.len(), 1, "{var}: {stderr}");
        assert!(errors[0].contains("the engine crashed (SIGSEGV)"), "{var}: {stderr}");
        let (folder, line) = &written(&stderr)[0];
        assert!(line.ends_with("-- model.mge"), "{var}: {line}");
        let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
        let why = format!("Not reduced (--reduce): cannot read the model's operators: operator {computing} (Convolution) reads var {var}, which no operator before it writes");
        assert!(readme.contains(&why), "{var}: {readme}");
    }
}

/// `divergence_a.mge` cut at its first convolution's output (the stand-in
/// crashes in the operator writing `RELU[0]`): `reduced.mge` holds that part
/// alone, the second convolution's weights left out, and the real engine
/// runs it to the values MegEngine's own io dump of the whole model holds.
#[test]
fn a_cut_holds_its_part_alone_and_computes_as_the_whole_did() {
    let dump = engine_io_dump("divergence_a");
    let model = dump["model_file"].as_str().unwrap();
    let feed = dump["inputs"][0].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", "segv")
        .env("MGE_FAULT_VAR", "RELU[0]")
        .args(["run", model, "-q", "--iter", "1", "-i", feed, "--repro"])
        .arg(&repro)
        .arg("--reduce");
    let (_, stderr) = run_expecting(&mut command, 2);
    let (folder, _) = &written(&stderr)[0];
    let reduced = std::fs::read(folder.join("reduced.mge")).unwrap();
    let whole = std::fs::read(root().join(model)).unwrap();
    let contains = |bytes: &[u8], part: &[f32]| {
        let part: Vec<u8> = part.iter().flat_map(|value| value.to_le_bytes()).collect();
        bytes.windows(part.len()).any(|window| window == part)
    };
    let (kept, _) = engine_dumped_var(&dump, "const{8,3,3,3}[2]");
    assert!(contains(&reduced, &kept), "the first convolution's weights");
    let mut left_out = 0;
    for weight in ["const{6,8,3,3}[6]", "const{1,6,1,1}[8]"] {
        let (values, _) = engine_dumped_var(&dump, weight);
        assert!(contains(&whole, &values) && !contains(&reduced, &values), "{weight}");
        left_out += 4 * values.len();
    }
    assert!(
        reduced.len() + left_out <= whole.len(),
        "{} bytes of the model's {}, which without the weights left out is {}",
        reduced.len(),
        whole.len(),
        whole.len() - left_out
    );

    let outputs = dir.path().join("outputs");
    let mut run = mge();
    run.args(["run", "-q", "--iter", "1", "--threads", "1", "-i", feed])
        .arg(folder.join("reduced.mge"))
        .arg("--outputs")
        .arg(&outputs);
    run_expecting(&mut run, 0);
    let got = read_f32(&outputs.join("RELU_0_.npy"));
    let (want, entry) = engine_dumped_var(&dump, "RELU[0]");
    let shape: Vec<usize> = entry["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(got.shape(), shape.as_slice());
    for (got, want) in got.iter().zip(&want) {
        assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0), "{got} vs {want}");
    }
}

/// A model that loads and then fails inside the engine as it runs (a
/// reshape to a row count the graph computes, fed a batch of 2:
/// `fixtures/make_runtime_failure_fixtures.py`): `--repro` keeps its folder
/// too, and `--reduce` cuts it at the reshape that fails, the engine's error
/// seen again from inside the folder and in each part twice.
#[test]
fn an_engine_error_as_the_model_runs_is_kept_and_cut_where_it_fails() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("fixtures/fails_on_size_manifest.json")).unwrap())
            .unwrap();
    let message = manifest["message"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let mut command = mge();
    command
        .args(["run", manifest["model"].as_str().unwrap(), "-q", "--iter", "1"])
        .args(["-i", &format!("data:{}", manifest["input"].as_str().unwrap())])
        .arg("--repro")
        .arg(&repro)
        .arg("--reduce");
    let (_, stderr) = run_expecting(&mut command, 2);
    assert!(stderr.contains(message), "{stderr}");
    let written = written(&stderr);
    let (folder, line) = &written[0];
    assert!(line.ends_with("-- reduced.mge"), "{line}");
    let readme = std::fs::read_to_string(folder.join("README.txt")).unwrap();
    let failing = &manifest["failing_operator"];
    for said in [
        "What failed: error: ".to_string(),
        format!(
            "reduced.mge is the part of the model that computes var '{}'",
            failing["var"].as_str().unwrap()
        ),
        "It fails alike: ".to_string(),
        message.to_string(),
    ] {
        assert!(readme.contains(&said), "{said:?} in\n{readme}");
    }

    // From inside a copy of the folder, the part fails as the whole model did.
    let (_place, copy) = elsewhere(folder);
    let output = reproduce(&copy, line).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(message), "{stderr}");
}
