//! `mge runtime info`, `mge completions` and `mge man`.

mod from_python;
mod install;
mod trust;
mod wheel;

use crate::common::*;

#[test]
fn runtime_info_reports_the_engine() {
    let (stdout, _) = run_expecting(mge().args(["runtime", "info", "--json"]), 0);
    let info = json_of(&stdout);
    assert_eq!(info["version"], manifest()["megengine_version"]);
    assert!(info["cpu_devices"].as_u64().unwrap() >= 1, "{info}");
    assert!(std::path::Path::new(info["path"].as_str().unwrap()).is_file(), "{info}");
}

#[test]
fn completions_cover_the_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let (stdout, _) = run_expecting(mge().args(["completions", shell]), 0);
        assert!(
            stdout.contains("runtime") && stdout.contains("input") && stdout.contains("resize-input"),
            "{shell}"
        );
    }
}

#[test]
fn committed_completions_are_current() {
    for (shell, file) in [("bash", "mge.bash"), ("zsh", "_mge"), ("fish", "mge.fish")] {
        let (stdout, _) = run_expecting(mge().args(["completions", shell]), 0);
        let committed = std::fs::read_to_string(root().join("completions").join(file)).unwrap();
        assert!(
            stdout == committed,
            "completions/{file} is stale: regenerate with `mge completions {shell}`"
        );
    }
}

/// Every relative link and anchor of the README, the guide and the other
/// pages resolves (`scripts/check_doc_links.py`), whatever folder the
/// script runs from.
#[test]
fn doc_links_resolve_from_any_folder() {
    let elsewhere = tempfile::tempdir().unwrap();
    let output = std::process::Command::new("python3")
        .arg(root().join("scripts/check_doc_links.py"))
        .current_dir(elsewhere.path())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.starts_with("links resolve in "),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn committed_man_pages_are_current() {
    let dir = tempfile::tempdir().unwrap();
    run_expecting(mge().arg("man").arg(dir.path()), 0);
    let pages = |dir: &std::path::Path| {
        let mut pages: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&path).unwrap())
            })
            .collect();
        pages.sort();
        pages
    };
    let generated = pages(dir.path());
    let names: Vec<&str> = generated.iter().map(|(name, _)| name.as_str()).collect();
    assert!(
        names.contains(&"mge.1") && names.contains(&"mge-runtime-install.1"),
        "{names:?}"
    );
    assert!(
        generated == pages(&root().join("man")),
        "man/ is stale: regenerate with `cargo run -- man man/` (and delete pages of removed commands)"
    );
}

#[test]
fn a_failed_install_leaves_nothing_behind() {
    let home = tempfile::tempdir().unwrap();
    // pip answers at once that no such release exists.
    let (_, stderr) = run_expecting(
        mge()
            .args(["runtime", "install", "--version", "0.0.1"])
            .env("MGE_HOME", home.path()),
        2,
    );
    assert!(stderr.contains("megengine==0.0.1"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(home.path().join("mge/runtime")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    let (_, stderr) = run_expecting(
        mge()
            .args(["runtime", "install", "--version", "../x"])
            .env("MGE_HOME", home.path()),
        2,
    );
    assert!(stderr.contains("release number"), "{stderr}");
}

/// `MGE_HOME` is MegEngine's too (its Python's `hub/`, `serialized/` and
/// `persistent_cache/`): mge keeps to `$MGE_HOME/mge` and touches nothing
/// of MegEngine's; a runtime an earlier mge left in `$MGE_HOME/runtime` is
/// named with the command that moves it, not passed over for another.
#[test]
fn mge_keeps_to_its_own_folder_in_mge_home() {
    let (home, wheels) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let megengine_files = [
        "persistent_cache/cache.bin",
        "hub/site/model.pkl",
        "serialized/weights.pkl",
    ];
    for file in megengine_files {
        let path = home.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"MegEngine's").unwrap();
    }
    let wheel = stand_in_wheel(wheels.path(), "1.13.0", WheelFile::Bytes(b"engine"));
    let (stdout, _) = run_expecting(
        mge_home(home.path())
            .args(["runtime", "install", "-q", "--wheel"])
            .arg(&wheel),
        0,
    );
    let ours = home.path().join("mge");
    assert_eq!(
        stdout.trim_end(),
        ours.join("runtime/1.13.0").join(STAND_IN_LITE).display().to_string()
    );
    let mut entries: Vec<String> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, ["hub", "mge", "persistent_cache", "serialized"]);
    for file in megengine_files {
        assert_eq!(std::fs::read(home.path().join(file)).unwrap(), b"MegEngine's");
    }
    // The layout of an earlier mge: its runtime in MGE_HOME itself.
    std::fs::rename(ours.join("runtime"), home.path().join("runtime")).unwrap();
    let (_, stderr) = run_expecting(mge_home(home.path()).args(["run", "fixtures/conv_float.mge"]), 2);
    let moved = format!(
        "where an earlier mge installed it: mge now keeps its files in {0}, apart from MegEngine's own in MGE_HOME; \
         move them there: mkdir -p {0} && mv {1} {0}/",
        ours.display(),
        home.path().join("runtime").display()
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&moved), "{stderr}");
}
