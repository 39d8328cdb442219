//! A Lite packed model chooses how the engine computes, never a file of the
//! machine that runs it: a pack whose `extra_info` carries an option that
//! names a file, a library or a cache is refused, in one line that names the
//! option, by every command that runs models, and nothing it names is
//! loaded, read or written; `info` shows what it carries.

use std::path::{Path, PathBuf};

use crate::common::*;

/// `fixtures/deploy/conv_float_packed_options.pack` with an info that
/// carries `options` as mge's (in place of the fixture's info, padded with
/// spaces, which Lite's JSON parser skips).
fn pack_carrying(dir: &Path, options: &[&str]) -> PathBuf {
    let mut bytes = std::fs::read(root().join("fixtures/deploy/conv_float_packed_options.pack")).unwrap();
    let needle = br#"{"name":"conv_float""#;
    let start = bytes
        .windows(needle.len())
        .position(|window| window == needle)
        .expect("the fixture's info");
    let length = u32::from_le_bytes(bytes[start - 4..start].try_into().unwrap()) as usize;
    let info = serde_json::json!({
        "name": "conv_float", "valid": true, "version": "1.13.0", "backend": "MGE",
        "extra_info": {"mge": {"options": options}},
    })
    .to_string();
    assert!(info.len() <= length, "{info}");
    bytes[start..start + length].fill(b' ');
    bytes[start..start + info.len()].copy_from_slice(info.as_bytes());
    let path = dir.join("m.mge");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_pack_that_names_a_library_is_refused_by_every_command_that_runs_models() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(planted_library(), dir.path().join("libx.so")).unwrap();
    let marker = dir.path().join("LOADED");
    pack_carrying(dir.path(), &["--c-opr-lib", "./libx.so"]);
    let commands: [&[&str]; 6] = [
        &["run", "m.mge", "--iter", "1", "-q"],
        &["profile", "m.mge", "--iter", "1", "-o", "t.json"],
        &["dump", "m.mge", "--outputs", "out"],
        &["compare", "m.mge", "m.mge", "--no-timing"],
        &["tune", "m.mge", "--budget", "5"],
        &[
            "run",
            "m.mge",
            "--iter",
            "1",
            "--c-opr-lib",
            "./libx.so",
            "--timeout",
            "30",
        ],
    ];
    for args in commands {
        let (_, stderr) = run_expecting(
            mge()
                .current_dir(dir.path())
                .env("MGE_TEST_PLANTED", &marker)
                .args(args),
            2,
        );
        assert!(
            !marker.exists(),
            "{args:?} loaded the library the model names: {stderr}"
        );
        let errors: Vec<&str> = stderr.lines().filter(|line| line.starts_with("mge: error:")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
        assert!(
            errors[0].contains("m.mge: the pack carries --c-opr-lib in its extra_info")
                && errors[0].ends_with("give --c-opr-lib on the command line"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("./libx.so"), "the value is not repeated: {stderr}");
    }
    assert!(!dir.path().join("out").exists() && !dir.path().join("t.json").exists());
    // A pack holds no testcases (Lite cannot load a packed container): to
    // check, a plain model, neither loaded nor run.
    let (stdout, _) = run_expecting(
        mge()
            .current_dir(dir.path())
            .env("MGE_TEST_PLANTED", &marker)
            .args(["check", "m.mge"]),
        0,
    );
    assert!(stdout.starts_with("m.mge: no testcases"), "{stdout}");
    assert!(!marker.exists(), "check loaded the library the model names");
}

/// Each option that names a file, a cache, this machine's cores or a key:
/// refused, and nothing it names is written.
#[test]
fn a_pack_never_names_a_file_a_cache_cores_or_a_key() {
    let carried: [&[&str]; 6] = [
        &["--fast-run", "--fast-run-cache", "written.cache"],
        &["--full-run", "--fast-run-cache=written.cache"],
        &["--tensorrt", "--tensorrt-cache", "written.cache"],
        &["--cpu-cores", "0"],
        &["--model-key", "@/etc/passwd"],
        &["--model-decryption", "RC4_default"],
    ];
    for options in carried {
        let dir = tempfile::tempdir().unwrap();
        pack_carrying(dir.path(), options);
        let flag = options.iter().rev().find(|word| word.starts_with("--")).unwrap();
        let flag = flag.split('=').next().unwrap();
        let (_, stderr) = run_expecting(mge().current_dir(dir.path()).args(["run", "m.mge", "-q"]), 2);
        assert_eq!(stderr.lines().count(), 1, "{options:?}: {stderr}");
        assert!(
            stderr.contains(&format!("the pack carries {flag} in its extra_info"))
                && stderr.contains(&format!("give {flag} on the command line")),
            "{options:?}: {stderr}"
        );
        assert!(!dir.path().join("written.cache").exists(), "{options:?}");
    }
}

/// `info` reads the pack without running it: it shows what it carries, and
/// why a run refuses it.
#[test]
fn info_shows_what_a_refused_pack_carries() {
    let dir = tempfile::tempdir().unwrap();
    pack_carrying(dir.path(), &["--layout", "nchw44", "--c-opr-lib", "./libx.so"]);
    let (stdout, _) = run_expecting(mge().current_dir(dir.path()).args(["info", "m.mge", "--json"]), 0);
    let packing = &json_of(&stdout)["packing"];
    assert_eq!(
        packing["mge_options"],
        serde_json::json!(["--layout", "nchw44", "--c-opr-lib", "./libx.so"])
    );
    let refused = packing["mge_options_refused"].as_str().unwrap();
    assert!(refused.contains("carries --c-opr-lib"), "{refused}");
    let (stdout, _) = run_expecting(mge().current_dir(dir.path()).args(["info", "m.mge"]), 0);
    assert!(
        stdout.contains(
            "mge options (extra_info, refused by every command that runs it): --layout nchw44 --c-opr-lib ./libx.so"
        ),
        "{stdout}"
    );
    // What chooses how the engine computes is still carried, and applied.
    pack_carrying(dir.path(), &["--layout", "nchw44"]);
    let (_, stderr) = run_expecting(mge().current_dir(dir.path()).args(["run", "m.mge", "--iter", "1"]), 0);
    assert!(
        stderr.contains("--layout nchw44 (its extra_info, applied by mge)"),
        "{stderr}"
    );
}
