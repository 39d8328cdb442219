//! What every command's JSON report shares: how it was made (`made_by`),
//! as hyperfine and trtexec record their command.

use crate::common::*;
use serde_json::Value;

/// The runtime's version as the engine gives it (`runtime info`).
fn engine_version() -> String {
    let (stdout, _) = run_expecting(mge().args(["runtime", "info", "--json"]), 0);
    json_of(&stdout)["version"].as_str().unwrap().to_string()
}

/// `made_by` of `report`: mge's version and this machine's CPU, with the
/// engine options given.
fn made_by<'a>(report: &'a Value, what: &str, options: &[&str]) -> &'a Value {
    let made_by = &report["made_by"];
    assert_eq!(made_by["mge"], env!("CARGO_PKG_VERSION"), "{what}: {made_by}");
    assert_eq!(made_by["cpu"]["architecture"], std::env::consts::ARCH, "{what}");
    let cpus = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let flags = made_by["cpu"]["flags"].as_array().unwrap();
    assert!(flags.iter().all(|flag| cpus.contains(flag.as_str().unwrap())), "{what}");
    let given: Vec<&str> = made_by["engine_options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|word| word.as_str().unwrap())
        .collect();
    assert_eq!(given, options, "{what}");
    made_by
}

#[test]
fn every_json_report_says_how_it_was_made() {
    let version = engine_version();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let container = dir.path().join("tc.mge");
    let model = "fixtures/conv_float.mge";
    let profile = deploy_manifest()["profiles"][0]["file"].as_str().unwrap().to_string();
    let engine_runs: [(Vec<&str>, &[&str]); 6] = [
        (vec!["run", model, "--iter", "1", "--threads", "1"], &["--threads", "1"]),
        (vec!["run", "fixtures/conv_float_tc1.mge"], &[]),
        (vec!["info", model], &[]),
        (vec!["check", "fixtures/conv_float_tc1.mge"], &["--cpu-inplace"]),
        (
            vec!["profile", model, "--iter", "1", "-o", trace.to_str().unwrap()],
            &[],
        ),
        (
            vec!["pack-testcases", model, "-o", container.to_str().unwrap(), "--fast-run"],
            &["--fast-run"],
        ),
    ];
    for (args, options) in engine_runs {
        let (stdout, _) = run_expecting(mge().args(&args).args(["--json", "-q"]), 0);
        let report = json_of(&stdout);
        let runtime = &made_by(&report, &args.join(" "), options)["runtime"];
        assert_eq!(runtime["version"], version.as_str(), "{args:?}");
        let files = runtime["files"].as_array().unwrap();
        assert!(
            files
                .iter()
                .any(|file| file["path"].as_str().unwrap().contains("lite_shared")),
            "{args:?}: {runtime}"
        );
    }
    let (stdout, _) = run_expecting(mge().args(["runtime", "info", "--json"]), 0);
    made_by(&json_of(&stdout), "runtime info", &[]);
    // Without the engine: nothing of a runtime.
    for args in [
        vec![
            "compare",
            "fixtures/feeds/conv_data.npy",
            "fixtures/feeds/conv_data.npy",
        ],
        vec!["profile", "--analyze", &profile, "-o", trace.to_str().unwrap()],
    ] {
        let (stdout, _) = run_expecting(mge().args(&args).arg("--json"), 0);
        let report = json_of(&stdout);
        assert!(made_by(&report, &args.join(" "), &[])["runtime"].is_null(), "{args:?}");
    }
    // A key given on the command line is not written into a report.
    let key: String = std::fs::read(root().join("fixtures/deploy/user_aes.key"))
        .unwrap()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let (stdout, _) = run_expecting(
        mge().args([
            "info",
            "fixtures/deploy/conv_float_packed_aes_userkey.pack",
            "--model-key",
            &key,
            "--json",
        ]),
        0,
    );
    assert!(!stdout.contains(&key), "{stdout}");
    made_by(
        &json_of(&stdout),
        "info --model-key",
        &["--model-key", "(not recorded)"],
    );
}
