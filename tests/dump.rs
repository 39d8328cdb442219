//! `mge dump` on the real engine: outputs against megenginelite's references,
//! the io dump against the operators megenginelite's profiler recorded, and the
//! first divergence of two models made to differ in one layer.

use std::path::Path;

use crate::common::*;
use serde_json::Value;

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn dumped_outputs_equal_megenginelite() {
    let manifest = manifest();
    for case in entries(&manifest, "cases") {
        let name = case["name"].as_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut command = mge();
        command.args(["dump", case["model_file"].as_str().unwrap(), "-q", "--outputs"]);
        command.arg(dir.path());
        for spec in case["inputs"].as_array().unwrap() {
            command.args(["-i", spec.as_str().unwrap()]);
        }
        if case["resize_input"].as_bool().unwrap() {
            command.arg("--resize-input");
        }
        run_expecting(&mut command, 0);
        for (output, reference) in case["outputs"].as_object().unwrap() {
            let written = read_f32(&dir.path().join(format!("{output}.npy")));
            let reference = read_f32(&root().join(reference["file"].as_str().unwrap()));
            assert_close(&written, &reference, &format!("{name}: {output}"));
        }
    }
}

#[test]
fn io_dump_indexes_every_operator_in_execution_order() {
    let recorded = read_json(&root().join("fixtures/operators.json"));
    let conv = recorded["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "conv_float")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    run_expecting(
        mge()
            .args([
                "dump",
                "fixtures/conv_float.mge",
                "-i",
                "fixtures/feeds/conv_data.npy",
                "-q",
                "--io",
            ])
            .arg(dir.path()),
        0,
    );
    let index = read_json(&dir.path().join("index.json"));
    let vars = index["vars"].as_array().unwrap();
    let mut dumped: Vec<&str> = vars.iter().map(|v| v["operator"].as_str().unwrap()).collect();
    dumped.dedup();
    // Every operator that produces a value, in the order the engine ran them
    // (the output callback produces none).
    let expected: Vec<&str> = conv["operators"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|op| op["type"] != "ComputingGraphImpl::CallbackCaller")
        .map(|op| op["name"].as_str().unwrap())
        .collect();
    assert_eq!(dumped, expected);
    for var in vars {
        let file = dir.path().join(var["file"].as_str().unwrap());
        assert_eq!(
            read_f32(&file).shape(),
            var["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect::<Vec<_>>()
                .as_slice(),
            "{var}"
        );
    }
    // The model's output is among them, with megenginelite's value.
    let feat = vars.iter().find(|v| v["name"] == "feat").expect("the output var");
    assert_close(
        &read_f32(&dir.path().join(feat["file"].as_str().unwrap())),
        &read_f32(&root().join("fixtures/ref/conv_float__conv_data/feat.npy")),
        "feat",
    );
    // Nothing else is left in the folder.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), vars.len() + 1, "{names:?}");
}

#[test]
fn compare_of_io_dumps_names_the_changed_layer() {
    let manifest = manifest();
    let case = &manifest["divergence"];
    let dir = tempfile::tempdir().unwrap();
    for side in ["a", "b"] {
        run_expecting(
            mge()
                .args([
                    "dump",
                    case[side].as_str().unwrap(),
                    "-q",
                    "-i",
                    case["input"].as_str().unwrap(),
                    "--io",
                ])
                .arg(dir.path().join(side)),
            0,
        );
    }
    let (stdout, _) = run_expecting(
        mge()
            .arg("compare")
            .arg(dir.path().join("a"))
            .arg(dir.path().join("b"))
            .arg("--json"),
        1,
    );
    let report = json_of(&stdout);
    let first = &report["first_divergence"];
    let changed = &case["changed_layer"];
    assert_eq!(first["operator"], changed["operator"], "{report}");
    assert_eq!(first["type"], changed["type"]);
    assert!(first["err"].as_f64().unwrap() > 1e-4);
    assert!(!first["then"].as_array().unwrap().is_empty(), "{first}");
    assert!(report["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .all(|row| row["status"].is_string()));
    // A dump compared with itself does not diverge.
    let (stdout, _) = run_expecting(
        mge()
            .arg("compare")
            .arg(dir.path().join("a"))
            .arg(dir.path().join("a"))
            .arg("--json"),
        0,
    );
    assert!(json_of(&stdout)["first_divergence"].is_null());
}

#[test]
fn testcases_are_written_as_inputs_and_expectations_that_run_again() {
    let manifest = manifest();
    let model = model(&manifest, "conv_float_tc3");
    let dir = tempfile::tempdir().unwrap();
    run_expecting(
        mge()
            .args(["dump", "fixtures/conv_float_tc3.mge", "-q", "--testcases"])
            .arg(dir.path()),
        0,
    );
    for testcase in model["testcase_list"].as_array().unwrap() {
        let folder = dir.path().join(testcase["index"].to_string());
        for tensor in testcase["tensors"].as_array().unwrap() {
            let name = tensor["name"].as_str().unwrap();
            let file = match name.strip_suffix(":expect") {
                Some(output) => folder.join(format!("{output}.expect.npy")),
                None => folder.join(format!("{name}.npy")),
            };
            let values = read_f32(&file);
            let shape: Vec<usize> = tensor["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(values.shape(), shape.as_slice(), "{}", file.display());
            let min = values.iter().copied().fold(f32::INFINITY, f32::min);
            assert_eq!(min, tensor["min"].as_f64().unwrap() as f32, "{}", file.display());
        }
        // The files reproduce the testcase with `mge run`.
        let data = folder.join("data.npy");
        let expect = folder.join("feat.expect.npy");
        run_expecting(
            mge()
                .args(["run", "fixtures/conv_float.mge", "-q", "--iter", "1", "-i"])
                .arg(format!("data:{}", data.display()))
                .arg("--expect")
                .arg(format!("feat:{}", expect.display())),
            0,
        );
    }
    let (_, stderr) = run_expecting(
        mge()
            .args(["dump", "fixtures/conv_float.mge", "--testcases"])
            .arg(dir.path()),
        2,
    );
    assert!(stderr.contains("embeds no testcases"), "{stderr}");
}

#[test]
fn layout_transformed_model_runs_again_with_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let transformed = dir.path().join("transformed.mge");
    let mut dump = mge();
    dump.args(["dump", "fixtures/conv_float.mge", "-q", "--layout-transform-model"])
        .arg(&transformed);
    // The transform runs oneDNN's kernels, which fail on some CPUs (see common).
    if crate::common::run_or_onednn_exit(&mut dump).is_none() {
        assert!(!transformed.exists(), "no model written after the engine's exit");
        return;
    }
    run_expecting(
        mge()
            .arg("run")
            .arg(&transformed)
            .args(["-q", "--iter", "1", "-i", "fixtures/feeds/conv_data.npy"])
            .args(["--expect", "feat:fixtures/ref/conv_float__conv_data/feat.npy"]),
        0,
    );
}

#[test]
fn text_io_dump_is_indexed_but_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    run_expecting(
        mge()
            .args(["dump", "fixtures/conv_float.mge", "-q", "--io-format", "txt", "--io"])
            .arg(dir.path()),
        0,
    );
    let text = std::fs::read_to_string(dir.path().join("io.txt")).unwrap();
    assert!(
        text.contains("owner_opr=conv(data,const{8,3,3,3}[2])[6]{ConvolutionForward}"),
        "{text}"
    );
    let index = read_json(&dir.path().join("index.json"));
    assert_eq!(index["format"], "txt");
    assert!(index["vars"].as_array().unwrap().iter().any(|v| v["name"] == "feat"));
    let (_, stderr) = run_expecting(mge().arg("compare").arg(dir.path()).arg(dir.path()), 2);
    assert!(stderr.contains("text io dump"), "{stderr}");
}

/// A run the engine refuses part way (a reshape to a row count the graph
/// computes, fed a batch of 2: `fixtures/make_runtime_failure_fixtures.py`):
/// `--io` keeps the vars the engine dumped before it, in both formats, and
/// index.json says where it stopped; the one error line says so; compare
/// refuses the partial folder in one line.
#[test]
fn a_run_the_engine_refuses_keeps_the_vars_before_it() {
    let manifest = read_manifest("fixtures/fails_on_size_manifest.json");
    let (model, input) = (manifest["model"].as_str().unwrap(), manifest["input"].as_str().unwrap());
    let message = manifest["message"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut kept = Vec::new();
    for format in ["bin", "txt"] {
        let io = dir.path().join(format);
        let mut command = mge();
        command
            .args([
                "dump",
                model,
                "-q",
                "-i",
                &format!("data:{input}"),
                "--io-format",
                format,
                "--io",
            ])
            .arg(&io);
        let (_, stderr) = run_expecting(&mut command, 2);
        let errors: Vec<&str> = stderr.lines().filter(|line| line.starts_with("mge: error: ")).collect();
        let [error] = errors.as_slice() else {
            panic!("one error line in\n{stderr}");
        };
        for said in [
            "the run failed inside the engine at operator '",
            &format!(
                "{} holds the 6 vars dumped before it (index.json: failed_at)",
                io.display()
            ),
            message,
        ] {
            assert!(error.contains(said), "{said:?} in {error}");
        }
        let index = read_json(&io.join("index.json"));
        let failed = &index["failed_at"];
        assert_eq!(failed["var"], manifest["failing_operator"]["var"], "{index}");
        assert!(failed["type"]
            .as_str()
            .unwrap()
            .starts_with(manifest["failing_operator"]["type"].as_str().unwrap()));
        assert_eq!(failed["message"], message);
        let mut names: Vec<&str> = index["vars"]
            .as_array()
            .unwrap()
            .iter()
            .map(|var| var["name"].as_str().unwrap())
            .collect();
        names.sort();
        assert!(names.contains(&"data") && names.contains(&"MUL[0]"), "{names:?}");
        kept.push(names.join(","));
        if format == "bin" {
            let data = index["vars"]
                .as_array()
                .unwrap()
                .iter()
                .find(|var| var["name"] == "data")
                .unwrap();
            let file = io.join(data["file"].as_str().unwrap());
            assert_eq!(read_f32(&file), read_f32(&root().join(input)));
        }
    }
    assert_eq!(kept[0], kept[1], "both formats keep the same vars");
    let bin = dir.path().join("bin");
    let (_, stderr) = run_expecting(mge().arg("compare").arg(&bin).arg(&bin), 2);
    assert!(
        stderr.contains("is the io dump of a run that failed inside the engine at operator"),
        "{stderr}"
    );
}

#[test]
fn dump_needs_something_to_write() {
    let (_, stderr) = run_expecting(mge().args(["dump", "fixtures/conv_float.mge"]), 2);
    assert!(stderr.contains("--outputs"), "{stderr}");
}

/// A model whose score filter keeps nothing for a feed of zeros, as a
/// detector's can (`fixtures/make_runtime_failure_fixtures.py`): the empty
/// output is written with megenginelite's shape, the text io dump holds the
/// empty var, and the binary one, which MegEngine's dumper refuses (its
/// assertion, recorded by megenginelite), is said to be the dumper's, with
/// the way out.
#[test]
fn an_output_that_keeps_nothing_is_empty_and_only_the_binary_dumper_refuses_it() {
    let manifest = read_manifest("fixtures/keeps_nothing_manifest.json");
    let model = manifest["model"].as_str().unwrap();
    let expected = &manifest["outputs"]["zeros"];
    let dir = tempfile::tempdir().unwrap();
    let zeros = ["-i", "data:#rand(0,0)"];

    let outputs = dir.path().join("outputs");
    run_expecting(
        mge()
            .args(["dump", model, "-q"])
            .args(zeros)
            .arg("--outputs")
            .arg(&outputs),
        0,
    );
    for name in ["kept", "relu"] {
        let written = read_f32(&outputs.join(format!("{name}.npy")));
        let shape: Vec<usize> = serde_json::from_value(expected[name]["shape"].clone()).unwrap();
        let values: Vec<f32> = serde_json::from_value(expected[name]["values"].clone()).unwrap();
        assert_eq!(written.shape(), shape.as_slice(), "{name}");
        assert_eq!(written.iter().copied().collect::<Vec<f32>>(), values, "{name}");
    }

    let (stdout, _) = run_expecting(mge().args(["run", model, "--iter", "1"]).args(zeros), 0);
    let row = stdout.lines().find(|line| line.starts_with("kept ")).unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["kept", "(0,)", "float32", "-", "-", "-"]
    );

    let text = dir.path().join("txt");
    run_expecting(
        mge()
            .args(["dump", model, "-q", "--io-format", "txt"])
            .args(zeros)
            .arg("--io")
            .arg(&text),
        0,
    );
    let index = read_json(&text.join("index.json"));
    assert!(
        index["vars"]
            .as_array()
            .unwrap()
            .iter()
            .any(|var| var["name"] == "kept"),
        "the empty output among the vars of {index}"
    );
    let dumped = std::fs::read_to_string(text.join("io.txt")).unwrap();
    assert!(dumped.contains("name=kept layout={0(1) Float32}"), "{dumped}");

    let binary = dir.path().join("bin");
    let mut command = mge();
    command
        .args(["dump", model, "-q", "--io-format", "bin"])
        .args(zeros)
        .arg("--io")
        .arg(&binary);
    let (_, stderr) = run_expecting(&mut command, 2);
    let errors: Vec<&str> = stderr.lines().filter(|line| line.starts_with("mge: error: ")).collect();
    let [error] = errors.as_slice() else {
        panic!("one error line in\n{stderr}");
    };
    for said in [
        "the engine's binary io dumper refused a var",
        "empty tensor",
        "--io-format txt dumps it",
    ] {
        assert!(error.contains(said), "{said:?} in {error}");
    }
    let refusal = manifest["binary_dump_refusal"].as_str().unwrap();
    let assertion = refusal.split(" at ").next().unwrap();
    let failed = &read_json(&binary.join("index.json"))["failed_at"];
    assert!(failed["message"].as_str().unwrap().contains(assertion), "{failed}");
}
