//! `mge info` against what the fixture generator recorded from megenginelite.

mod cost;

use crate::common::*;
use serde_json::Value;

#[test]
fn info_matches_the_manifest_for_every_model() {
    let manifest = manifest();
    for model in entries(&manifest, "models") {
        let file = model["file"].as_str().unwrap();
        let (stdout, _) = run_expecting(mge().args(["info", file, "--json"]), 0);
        let info = json_of(&stdout);
        assert_eq!(info["format"], model["format"], "{file}");
        assert_eq!(info["size_bytes"], model["size"], "{file}");
        assert_eq!(info["testcases"], model["testcase_count"], "{file}");
        for key in ["inputs", "outputs"] {
            // The engine's order of inputs is its own; compare as sets.
            let described = |tensors: &Value| {
                let mut all: Vec<String> = tensors
                    .as_array()
                    .unwrap()
                    .iter()
                    // A container's outputs are named after the output they check, the
                    // engine's name (megenginelite's) kept as `assertion`.
                    .map(|t| {
                        let name = t.get("assertion").unwrap_or(&t["name"]);
                        format!("{} {} {}", name, t["shape"], t["dtype"])
                    })
                    .collect();
                all.sort();
                all
            };
            assert_eq!(described(&info[key]), described(&model[key]), "{file} {key}");
        }
        let expectations: Vec<&str> = info["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["expectation"] == true)
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let declared = model["expect_inputs"]
            .as_array()
            .map_or(vec![], |names| names.iter().map(|n| n.as_str().unwrap()).collect());
        let mut sorted = declared.clone();
        sorted.sort();
        let mut found = expectations.clone();
        found.sort();
        assert_eq!(found, sorted, "{file}: expectation inputs");
    }
}

/// A container's outputs are named after the outputs they check, as the
/// testcases' lines name them, in `info` and in `run`'s report and files.
#[test]
fn a_containers_outputs_are_named_after_what_they_check() {
    let (stdout, _) = run_expecting(mge().args(["info", "fixtures/conv_float_tc1.mge", "--json"]), 0);
    let outputs = &json_of(&stdout)["outputs"];
    assert_eq!(outputs[0]["name"], "feat", "{outputs}");
    assert_eq!(outputs[0]["assertion"], "assert_eq(feat:expect,feat)[86]", "{outputs}");
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = run_expecting(
        mge()
            .args(["run", "fixtures/conv_float_tc1.mge", "--iter", "1", "-q", "--outputs"])
            .arg(dir.path()),
        0,
    );
    assert!(stdout.lines().any(|line| line.starts_with("feat ")), "{stdout}");
    assert!(!stdout.contains("assert_eq"), "{stdout}");
    assert!(dir.path().join("0/feat.npy").is_file());
}

#[test]
fn info_shows_each_testcase_tensor() {
    let manifest = manifest();
    for model in entries(&manifest, "models").iter().filter(|m| m["container"] == true) {
        let file = model["file"].as_str().unwrap();
        let (stdout, _) = run_expecting(mge().args(["info", file, "--json"]), 0);
        let info = json_of(&stdout);
        let testcases = info["testcase_values"].as_array().unwrap();
        let expected = model["testcase_list"].as_array().unwrap();
        assert_eq!(testcases.len(), expected.len(), "{file}");
        for (got, want) in testcases.iter().zip(expected) {
            assert_eq!(got["index"], want["index"]);
            let got = got["tensors"].as_array().unwrap();
            let want = want["tensors"].as_array().unwrap();
            assert_eq!(got.len(), want.len(), "{file}");
            for (g, w) in got.iter().zip(want) {
                assert_eq!(
                    (&g["name"], &g["shape"], &g["dtype"]),
                    (&w["name"], &w["shape"], &w["dtype"]),
                    "{file}"
                );
                for key in ["min", "max"] {
                    let (g, w) = (g[key].as_f64().unwrap(), w[key].as_f64().unwrap());
                    assert!((g - w).abs() <= 1e-6 * w.abs().max(1.0), "{file} {key}: {g} vs {w}");
                }
            }
        }
    }
}

/// An integer tensor's least and greatest values are integers, and the
/// table shows them so (`30`, not `30.000000`); a float's keep six decimals.
#[test]
fn info_text_shows_integer_tensors_values_as_integers() {
    let manifest = manifest();
    let mut integers = 0;
    for model in entries(&manifest, "models").iter().filter(|m| m["container"] == true) {
        let file = model["file"].as_str().unwrap();
        let (stdout, _) = run_expecting(mge().args(["info", file]), 0);
        for testcase in model["testcase_list"].as_array().unwrap() {
            // The testcase's own table: its title `#N`, then its rows.
            let title = format!("#{} ", testcase["index"]);
            let rows: Vec<&str> = stdout
                .lines()
                .skip_while(|line| !line.trim_start().starts_with(&title))
                .skip(1)
                .take_while(|line| !line.trim_start().starts_with('#'))
                .collect();
            for tensor in testcase["tensors"].as_array().unwrap() {
                let name = tensor["name"].as_str().unwrap();
                let row = rows
                    .iter()
                    .find(|line| line.trim_start().starts_with(&format!("{name} ")))
                    .unwrap_or_else(|| panic!("{file}: no row of {name} in {stdout}"));
                let cells: Vec<&str> = row.split_whitespace().collect();
                let (min, max) = (tensor["min"].as_f64().unwrap(), tensor["max"].as_f64().unwrap());
                let dtype = tensor["dtype"].as_str().unwrap();
                let expected = match dtype.starts_with("float") {
                    true => [format!("{min:.6}"), format!("{max:.6}")],
                    false => [format!("{min:.0}"), format!("{max:.0}")],
                };
                integers += usize::from(!dtype.starts_with("float"));
                let shown = [cells[cells.len() - 3], cells[cells.len() - 2]];
                assert_eq!(shown, [expected[0].as_str(), expected[1].as_str()], "{file}: {row}");
            }
        }
    }
    assert!(integers > 0, "the containers hold integer tensors");
}

#[test]
fn info_text_names_inputs_and_outputs() {
    let (stdout, _) = run_expecting(mge().args(["info", "fixtures/conv_float_tc3.mge"]), 0);
    assert!(stdout.contains("testcase container"), "{stdout}");
    assert!(
        stdout.contains("feat:expect") && stdout.contains("(1, 3, 16, 16)"),
        "{stdout}"
    );
    assert!(stdout.contains("testcases: 3"), "{stdout}");
}

/// An encrypted model opened with its key is verified once decrypted, as a
/// plain one is; one whose key the engine is not given is not claimed verified.
#[test]
fn an_encrypted_graph_is_verified_once_decrypted() {
    let cases: [(&str, &[&str]); 3] = [
        ("conv_float_packed_aes.pack", &[]),
        ("conv_float_rc4.emod", &["--model-decryption", "RC4_default"]),
        (
            "conv_float_packed_aes_userkey.pack",
            &["--model-key", "@fixtures/deploy/user_aes.key"],
        ),
    ];
    for (file, options) in cases {
        let model = format!("fixtures/deploy/{file}");
        let (stdout, _) = run_expecting(mge().args(["info", &model, "--json"]).args(options), 0);
        assert_eq!(json_of(&stdout)["verified"], true, "{file}");
        let (stdout, _) = run_expecting(mge().args(["info", &model]).args(options), 0);
        assert!(!stdout.contains("not verified"), "{file}: {stdout}");
    }
}
