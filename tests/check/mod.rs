//! `mge check` and `mge run` on testcase containers. Which testcases pass, fail
//! or have nothing to check comes from how `fixtures/make_fixtures.py` built
//! each container (`expected_pass`), not from `mge`.

use crate::common::*;
use serde_json::Value;

fn containers(manifest: &Value) -> Vec<&Value> {
    entries(manifest, "models")
        .iter()
        .filter(|m| m["container"] == true)
        .collect()
}

/// `passed`, `failed` or `skipped`, as the fixture was made.
fn expected_status(expected_pass: &Value) -> &'static str {
    match expected_pass.as_bool() {
        Some(true) => "passed",
        Some(false) => "failed",
        None => "skipped",
    }
}

fn expected_tally(models: &[&Value]) -> (u64, u64, u64) {
    let mut tally = (0, 0, 0);
    for model in models {
        for testcase in model["testcase_list"].as_array().unwrap() {
            match expected_status(&testcase["expected_pass"]) {
                "passed" => tally.0 += 1,
                "failed" => tally.1 += 1,
                _ => tally.2 += 1,
            }
        }
    }
    tally
}

fn files<'a>(models: &[&'a Value]) -> Vec<&'a str> {
    models.iter().map(|m| m["file"].as_str().unwrap()).collect()
}

#[test]
fn each_container_checks_as_it_was_made() {
    let manifest = manifest();
    let all = containers(&manifest);
    assert!(all.len() >= 8);
    for model in all {
        let file = model["file"].as_str().unwrap();
        let expected = model["testcase_list"].as_array().unwrap();
        let fails = expected.iter().any(|t| t["expected_pass"] == false);
        let (stdout, _) = run_expecting(mge().args(["check", "--json", file]), if fails { 1 } else { 0 });
        let report = json_of(&stdout);
        let got = report["models"][0]["testcases"].as_array().unwrap();
        assert_eq!(got.len(), expected.len(), "{file}");
        let checked: Vec<String> = model["expect_inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| name.as_str().unwrap().trim_end_matches(":expect").to_string())
            .collect();
        for (testcase, want) in got.iter().zip(expected) {
            let status = expected_status(&want["expected_pass"]);
            assert_eq!(testcase["index"], want["index"], "{file}");
            assert_eq!(testcase["status"], status, "{file} #{}", want["index"]);
            let outputs = testcase["outputs"].as_array().unwrap();
            let mut names: Vec<String> = outputs
                .iter()
                .map(|o| o["name"].as_str().unwrap().to_string())
                .collect();
            names.sort();
            assert_eq!(names, checked, "{file}: every expectation is a checked output");
            for output in outputs {
                assert_eq!(output["maxerr"], model["assert_equal"]["maxerr"], "{file}");
                let err = &output["err"];
                if model["assert_equal"]["prints_err"] == true {
                    let err = err.as_f64().unwrap_or_else(|| panic!("{file}: no err in {output}"));
                    assert_eq!(err <= output["maxerr"].as_f64().unwrap(), status == "passed", "{file}");
                } else {
                    assert!(err.is_null(), "{file}: a silent AssertEqual prints no error");
                }
            }
            if status == "failed" {
                let message = testcase["message"].as_str().unwrap();
                assert!(message.starts_with(&format!("'{}': got ", checked[0])), "{message}");
            }
            if status == "skipped" {
                assert_eq!(testcase["message"], "no expectations");
            }
        }
    }
}

#[test]
fn all_containers_at_once_in_one_process_or_two_workers() {
    let manifest = manifest();
    let all = containers(&manifest);
    let (passed, failed, skipped) = expected_tally(&all);
    let closing = format!("{passed} passed, {failed} failed, {skipped} skipped");
    let mut reports = Vec::new();
    for jobs in ["1", "2"] {
        let (stdout, _) = run_expecting(mge().args(["check", "-j", jobs]).args(files(&all)), 1);
        assert_eq!(stdout.lines().last(), Some(closing.as_str()), "-j {jobs}:\n{stdout}");
        assert!(!stdout.contains("AssertEqual"), "engine chatter on stdout:\n{stdout}");
        let testcase_lines = stdout.lines().filter(|line| line.contains(".mge #")).count() as u64;
        assert_eq!(testcase_lines, passed + failed + skipped, "{stdout}");
        let (stdout, _) = run_expecting(mge().args(["check", "--json", "-j", jobs]).args(files(&all)), 1);
        let report = json_of(&stdout);
        assert_eq!(report["passed"], passed);
        assert_eq!(report["failed"], failed);
        assert_eq!(report["skipped"], skipped);
        let order: Vec<&str> = report["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["model"].as_str().unwrap())
            .collect();
        assert_eq!(order, files(&all), "models are reported in the order given");
        reports.push(report);
    }
    let statuses = |report: &Value| -> Vec<Value> {
        report["models"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["testcases"].as_array().unwrap().iter().map(|t| t["status"].clone()))
            .collect()
    };
    assert_eq!(statuses(&reports[0]), statuses(&reports[1]));
}

#[test]
fn junit_holds_one_failure_for_the_wrong_testcase() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let models = [
        "fixtures/conv_float_tc3_wrong.mge",
        "fixtures/conv_float_tc1_noassert.mge",
    ];
    run_expecting(mge().args(["check", "-q"]).args(models).arg("--junit").arg(&junit), 1);
    let text = std::fs::read_to_string(&junit).unwrap();
    let xml = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    let suites: Vec<_> = xml.descendants().filter(|n| n.has_tag_name("testsuite")).collect();
    assert_eq!(suites.len(), 2);
    assert_eq!(suites[0].attribute("name"), Some(models[0]));
    // Loading the model is a testcase of its own, whose time is the load time.
    assert_eq!(suites[0].attribute("tests"), Some("4"));
    assert_eq!(suites[0].attribute("failures"), Some("1"));
    let failures: Vec<_> = xml.descendants().filter(|n| n.has_tag_name("failure")).collect();
    assert_eq!(failures.len(), 1);
    let failed_case = failures[0].parent().unwrap();
    assert_eq!(failed_case.attribute("name"), Some("testcase 1"));
    assert!(failures[0].attribute("message").unwrap().contains("'feat'"));
    for testcase in xml.descendants().filter(|n| n.has_tag_name("testcase")) {
        let time: f64 = testcase.attribute("time").unwrap().parse().unwrap();
        assert!(time >= 0.0);
    }
    assert_eq!(xml.descendants().filter(|n| n.has_tag_name("skipped")).count(), 1);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary left beside"
    );
}

/// Each model's load time: `load_s` in JSON, the `load` testcase's time in
/// JUnit (the suite's time adds the testcases' to it); none for a model that
/// did not load.
#[test]
fn the_load_time_is_in_json_and_junit() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let models = ["fixtures/conv_float_tc3.mge", "fixtures/conv_float_truncated.mge"];
    let mut command = mge();
    command
        .args(["check", "-q", "--json"])
        .args(models)
        .arg("--junit")
        .arg(&junit);
    let (stdout, _) = run_expecting(&mut command, 1);
    let report = json_of(&stdout);
    let checked = &report["models"][0];
    let load_s = checked["load_s"].as_f64().expect("load_s of a model that loaded");
    assert!(load_s > 0.0);
    assert!(report["models"][1].get("load_s").is_none(), "{report}");
    let text = std::fs::read_to_string(&junit).unwrap();
    let xml = roxmltree::Document::parse(&text).unwrap();
    let suite = xml
        .descendants()
        .find(|n| n.attribute("name") == Some(models[0]))
        .unwrap();
    let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
    let time = |node: &roxmltree::Node| node.attribute("time").unwrap().parse::<f64>().unwrap();
    assert_eq!(cases[0].attribute("name"), Some("load"));
    assert!((time(&cases[0]) - load_s).abs() <= 5e-7, "{text}");
    let testcases: f64 = checked["testcases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["time_s"].as_f64().unwrap())
        .sum();
    assert!((time(&suite) - (load_s + testcases)).abs() <= 5e-7, "{text}");
}

#[test]
fn a_model_that_cannot_be_checked_does_not_stop_the_others() {
    let (stdout, _) = run_expecting(
        mge().args([
            "check",
            "--json",
            "fixtures/conv_float_tc1.mge",
            "fixtures/conv_float.mge",
            "fixtures/missing.mge",
            "fixtures/conv_float_truncated.mge",
        ]),
        1,
    );
    let report = json_of(&stdout);
    let models = report["models"].as_array().unwrap();
    assert_eq!(models[0]["testcases"][0]["status"], "passed");
    for unchecked in &models[1..] {
        assert_eq!(unchecked["testcases"].as_array().unwrap().len(), 0);
    }
    assert_eq!(
        models[1]["no_testcases"], true,
        "a plain model is neither a pass nor a failure"
    );
    assert!(models[1]["error"].is_null(), "{}", models[1]);
    for broken in &models[2..] {
        assert!(broken["error"].is_string(), "{broken}");
    }
    assert_eq!(
        (
            report["passed"].clone(),
            report["failed"].clone(),
            report["without_testcases"].clone()
        ),
        (1.into(), 2.into(), 1.into())
    );
}

/// A folder of plain models and containers (a model zoo) passes when its
/// containers do: a plain model is said to have no testcases, once, and
/// fails only under `--require-testcases`.
#[test]
fn plain_models_beside_containers_have_no_testcases_unless_required() {
    let dir = tempfile::tempdir().unwrap();
    for model in ["conv_float.mge", "conv_float_tc1.mge"] {
        std::fs::copy(root().join("fixtures").join(model), dir.path().join(model)).unwrap();
    }
    let folder = dir.path().to_str().unwrap();
    let plain = dir.path().join("conv_float.mge").display().to_string();
    let (stdout, stderr) = run_expecting(mge().args(["check", folder]), 0);
    let plain_line = format!("{plain}: no testcases: a plain model, not a container dumped with input_data");
    assert_eq!(stdout.lines().next(), Some(plain_line.as_str()), "{stdout}");
    assert_eq!(
        stdout.matches(&plain).count(),
        1,
        "the plain model's path once:\n{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("1 passed, 0 failed, 1 without testcases"),
        "{stdout}"
    );
    assert!(!stderr.contains("check failed"), "{stderr}");

    let junit = dir.path().join("report.xml");
    let (stdout, stderr) = run_expecting(
        mge()
            .args(["check", "--require-testcases", folder, "--junit"])
            .arg(&junit),
        1,
    );
    assert!(
        stdout.contains(&format!(
            "{plain}: ERROR: no testcases: a plain model, not a container dumped with input_data (--require-testcases)"
        )),
        "{stdout}"
    );
    assert_eq!(stdout.lines().last(), Some("1 passed, 1 failed"), "{stdout}");
    assert!(stderr.contains("mge: check failed: 1 passed, 1 failed"), "{stderr}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("--require-testcases"), "{xml}");

    // Plain models alone: nothing to check, nothing failed.
    let (stdout, _) = run_expecting(mge().args(["check", "--json", "fixtures/conv_float.mge"]), 0);
    let report = json_of(&stdout);
    assert_eq!(report["models"][0]["no_testcases"], true);
    assert_eq!(
        (report["failed"].clone(), report["without_testcases"].clone()),
        (0.into(), 1.into())
    );
    let (_, stderr) = run_expecting(
        mge().args(["check", "--require-testcases", "fixtures/conv_float.mge"]),
        2,
    );
    assert!(stderr.contains("no testcase could run"), "{stderr}");
}

#[test]
fn nothing_to_run_is_an_error() {
    for jobs in ["1", "2"] {
        let (stdout, stderr) = run_expecting(
            mge().args([
                "check",
                "-j",
                jobs,
                "fixtures/conv_float.mge",
                "fixtures/not_a_model.mge",
            ]),
            2,
        );
        assert_eq!(
            stdout.lines().last(),
            Some("0 passed, 1 failed, 1 without testcases"),
            "{stdout}"
        );
        assert!(stderr.contains("no testcase could run"), "{stderr}");
    }
    let (_, stderr) = run_expecting(
        mge().args(["check", "fixtures/conv_float_tc1.mge", "--junit", "no/such/dir/r.xml"]),
        2,
    );
    assert!(stderr.contains("does not exist"), "{stderr}");
}

#[test]
fn run_goes_through_every_testcase_then_fails() {
    let (stdout, stderr) = run_expecting(
        mge().args([
            "run",
            "fixtures/conv_float_tc3_wrong.mge",
            "--iter",
            "2",
            "--json",
            "-q",
        ]),
        1,
    );
    let report = json_of(&stdout);
    let statuses: Vec<&str> = report["testcases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["passed", "failed", "passed"]);
    assert_eq!(report["testcases"][0]["timing_ms"]["iterations"], 2);
    assert_eq!(report["testcases"][0]["inputs"][0]["source"], "testcase 0");
    assert!(report["testcases"][1]["timing_ms"].is_null());
    assert!(stderr.contains("2 passed, 1 failed"), "{stderr}");

    let (stdout, _) = run_expecting(
        mge().args(["run", "fixtures/two_inputs_tc2.mge", "--iter", "1", "-q"]),
        0,
    );
    assert!(stdout.contains("testcase 1: passed"), "{stdout}");
    assert!(!stdout.contains("AssertEqual"), "{stdout}");
}

#[test]
fn no_testcase_runs_the_model_on_feeds() {
    let (stdout, _) = run_expecting(
        mge().args([
            "run",
            "fixtures/conv_float_tc1_noassert.mge",
            "--no-testcase",
            "--json",
            "-q",
        ]),
        0,
    );
    let report = json_of(&stdout);
    assert!(report.get("testcases").is_none());
    assert_eq!(report["inputs"][0]["source"], "#rand(0,1)");
    let (_, stderr) = run_expecting(
        mge().args([
            "run",
            "fixtures/conv_float_tc1.mge",
            "--expect",
            "feat:fixtures/ref/conv_float__conv_data/feat.npy",
        ]),
        2,
    );
    assert!(stderr.contains("--no-testcase"), "{stderr}");
}

#[test]
fn the_same_models_get_the_same_verdicts_with_any_jobs() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    // A path that is not UTF-8, and a FIFO nobody writes (it must not block the check).
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"odd\xffname.mge"));
    std::fs::copy(root().join("fixtures/conv_float_tc1.mge"), &odd).unwrap();
    let fifo = dir.path().join("fifo.mge");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mut verdicts = Vec::new();
    for jobs in ["1", "2"] {
        let mut command = mge();
        command.args(["check", "--json", "-j", jobs]).arg(&odd).arg(&fifo);
        command.arg("fixtures/conv_float_tc3_wrong.mge");
        let (stdout, _) = run_expecting(&mut command, 1);
        let report = json_of(&stdout);
        let models = report["models"].as_array().unwrap();
        assert_eq!(models[0]["testcases"][0]["status"], "passed", "-j {jobs}: {stdout}");
        assert!(
            models[1]["error"].as_str().unwrap().contains("not a regular file"),
            "-j {jobs}: {stdout}"
        );
        let verdict = |model: &Value| {
            let statuses: Vec<Value> = model["testcases"]
                .as_array()
                .unwrap()
                .iter()
                .map(|testcase| testcase["status"].clone())
                .collect();
            (model["error"].clone(), statuses)
        };
        verdicts.push(models.iter().map(verdict).collect::<Vec<_>>());
    }
    assert_eq!(verdicts[0], verdicts[1]);
}

#[test]
fn shards_cover_each_container_exactly_once() {
    let manifest = manifest();
    let all = containers(&manifest);
    let mut reversed = files(&all);
    reversed.reverse();
    let mut checked = Vec::new();
    let mut tally = (0, 0, 0);
    for shard in ["1/3", "2/3", "3/3"] {
        // Every other shard gets the list backwards: the slice must not depend on the order.
        let order = if shard == "2/3" { reversed.clone() } else { files(&all) };
        let mut command = mge();
        command.args(["check", "--json", "--shard", shard]).args(order);
        let output = command.output().unwrap();
        assert!(matches!(output.status.code(), Some(0 | 1)), "{shard}: {output:?}");
        let report = json_of(&String::from_utf8_lossy(&output.stdout));
        let models = report["models"].as_array().unwrap();
        assert!(
            !models.is_empty() && models.len() <= all.len().div_ceil(3),
            "{shard}: {report}"
        );
        checked.extend(models.iter().map(|m| m["model"].as_str().unwrap().to_string()));
        tally.0 += report["passed"].as_u64().unwrap();
        tally.1 += report["failed"].as_u64().unwrap();
        tally.2 += report["skipped"].as_u64().unwrap();
    }
    checked.sort();
    let mut expected = files(&all);
    expected.sort();
    assert_eq!(checked, expected);
    assert_eq!(tally, expected_tally(&all), "the shards' counts add up to the whole");
}

#[test]
fn a_folder_is_checked_as_its_models_sorted_and_an_empty_shard_passes() {
    fn models_under(dir: &str, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let entry = entry.unwrap();
            let path = format!("{dir}/{}", entry.file_name().to_string_lossy());
            if entry.file_type().unwrap().is_dir() {
                models_under(&path, found);
            } else if path.ends_with(".mge") {
                found.push(path);
            }
        }
    }
    let mut expected = Vec::new();
    models_under("fixtures", &mut expected);
    expected.sort();
    let (stdout, _) = run_expecting(mge().args(["check", "--json", "fixtures", "-q"]), 1);
    let report = json_of(&stdout);
    let models: Vec<&str> = report["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, expected);
    let (stdout, stderr) = run_expecting(
        mge().args(["check", "--shard", "2/2", "fixtures/conv_float_tc1.mge"]),
        0,
    );
    assert!(stdout.contains("0 passed, 0 failed"), "{stdout}");
    assert!(stderr.contains("shard 2/2 has no model"), "{stderr}");
    let (_, stderr) = run_expecting(mge().args(["check", "--shard", "3/2", "fixtures"]), 2);
    assert!(stderr.contains("K/N"), "{stderr}");
}

#[test]
fn testcases_are_checked_under_the_engine_options_given() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("tuned.json");
    std::fs::write(
        &saved,
        r#"{"args": ["--threads", "2", "--fast-run"], "fast_run_cache": null}"#,
    )
    .unwrap();
    let mut command = mge();
    command
        .args([
            "check",
            "fixtures/conv_float_tc3_wrong.mge",
            "fixtures/two_inputs_tc2.mge",
            "-j",
            "2",
            "--options",
        ])
        .arg(&saved);
    let (stdout, _) = run_expecting(&mut command, 1);
    assert!(stdout.contains("#1: FAILED  'feat' err 1"), "{stdout}");
    assert!(stdout.ends_with("4 passed, 1 failed\n"), "{stdout}");
    let (_, stderr) = run_expecting(
        mge().args(["check", "fixtures/conv_float_tc1.mge", "--record-comp-seq", "2"]),
        2,
    );
    assert!(stderr.contains("disables the engine's AssertEqual"), "{stderr}");
}

/// Under the layout transform the engine's oneDNN kernels exit(1) from an
/// engine thread on AMD CPUs with AVX-512: there the model is an ERROR that
/// fails the check (exit 1, JUnit written); anywhere else its testcase passes.
#[test]
fn check_under_the_layout_transform_passes_or_reports_the_engines_exit() {
    for jobs in ["1", "2"] {
        let dir = tempfile::tempdir().unwrap();
        let junit = dir.path().join("report.xml");
        let output = mge()
            .args([
                "check",
                "fixtures/conv_float_tc1.mge",
                "--layout-transform",
                "--threads",
                "2",
                "-j",
                jobs,
            ])
            .arg("--junit")
            .arg(&junit)
            .output()
            .expect("mge finishes before the test's deadline");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let xml = std::fs::read_to_string(&junit).expect("the JUnit report is written");
        match output.status.code() {
            Some(0) => assert!(stdout.contains("fixtures/conv_float_tc1.mge #0: passed"), "{stdout}"),
            Some(1) => {
                let line = stdout.lines().next().unwrap_or_default();
                assert!(
                    line.starts_with("fixtures/conv_float_tc1.mge: ERROR: the engine ended the process with exit(1)")
                        && line.contains("it said last: 'bad err=45 in Xbyak::Error'"),
                    "{stdout}"
                );
                assert_eq!(xml.matches("<error").count(), 1, "{xml}");
            }
            code => panic!("-j {jobs}: exit {code:?}\n{stdout}"),
        }
    }
}
