//! Where the runtime may come from: nothing from the current folder,
//! a shared temporary folder or a folder another user could change is loaded or
//! run, and a supervised child loads the library its parent located. Each
//! planted library writes a marker file when loaded (`tests/runtime/planted_lite.c`);
//! each planted Python module or program writes one when run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::install::{install_dir, mge_in, wheel_folder};
use crate::common::LITE_IN_WHEEL;
use crate::common::*;

/// Where the planted library, module or program says it ran.
const MARKER_ENV: &str = "MGE_TEST_PLANTED";

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A folder as a CI job over other people's models finds it: a `megenginelite`
/// package whose library is the planted one, a `pip` package and a `python3`
/// program that write `marker` when run.
fn planted_folder(marker: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let libs = dir.path().join("megenginelite/libs");
    std::fs::create_dir_all(&libs).unwrap();
    std::fs::write(dir.path().join("megenginelite/__init__.py"), "").unwrap();
    std::fs::copy(planted_library(), libs.join("liblite_shared_x.so")).unwrap();
    std::fs::create_dir(dir.path().join("pip")).unwrap();
    let write_marker = format!("open({:?}, 'w').write('ran')\n", marker.display().to_string());
    std::fs::write(dir.path().join("pip/__init__.py"), &write_marker).unwrap();
    std::fs::write(dir.path().join("pip/__main__.py"), &write_marker).unwrap();
    executable(
        &dir.path().join("python3"),
        &format!("#!/bin/sh\necho ran > '{}'\n", marker.display()),
    );
    dir
}

/// Exit 2 without the marker written.
fn refused_unplanted(command: &mut assert_cmd::Command, marker: &Path) -> String {
    let (_, stderr) = run_expecting(command.env(MARKER_ENV, marker), 2);
    assert!(!marker.exists(), "something planted was loaded or run:\n{stderr}");
    stderr
}

/// Python puts the current folder first on `sys.path`: the runtime's look-up
/// must not load `./megenginelite/libs/*.so`, nor `runtime install` run `./pip`.
/// Also `PYTHONPATH` (ignored by `python3 -I`) and a `PATH` holding `.`.
#[test]
fn nothing_from_the_current_folder_is_loaded_or_run() {
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("marker");
    let planted = planted_folder(&marker);
    let (empty_home, no_wheels) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let model = root().join("fixtures/conv_float.mge");
    let dot_first = format!(".:{}", std::env::var("PATH").unwrap());
    let commands: [(&[&str], Option<&str>, Option<&Path>); 5] = [
        (&["run", "-q", "--iter", "1"], None, None),
        (&["runtime", "install", "-q"], None, None),
        (&["runtime", "info"], None, None),
        (&["runtime", "install", "-q"], Some(&dot_first), None),
        (&["runtime", "install", "-q"], None, Some(planted.path())),
    ];
    for (args, path, python_path) in commands {
        let mut command = mge_in(empty_home.path(), no_wheels.path(), args);
        if args[0] == "run" {
            command.arg(&model);
        }
        command.current_dir(planted.path());
        if let Some(path) = path {
            command.env("PATH", path);
        }
        if let Some(python_path) = python_path {
            command.current_dir(root()).env("PYTHONPATH", python_path);
        }
        let stderr = refused_unplanted(&mut command, &marker);
        assert!(
            stderr.lines().any(|line| line.starts_with("mge: error: ")),
            "{args:?}: {stderr}"
        );
    }
}

/// A `python3` in a folder of `PATH` that every user can write to is never run.
#[test]
fn no_python3_runs_from_a_folder_anyone_can_write() {
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("marker");
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    executable(
        &shared.path().join("python3"),
        &format!("#!/bin/sh\necho ran > '{}'\n", marker.display()),
    );
    let (empty_home, no_wheels) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let path = format!("{}:{}", shared.path().display(), std::env::var("PATH").unwrap());
    for args in [&["runtime", "install", "-q"][..], &["runtime", "info"]] {
        refused_unplanted(
            mge_in(empty_home.path(), no_wheels.path(), args).env("PATH", &path),
            &marker,
        );
    }
}

/// Without HOME the cache is not `$TMPDIR/mge`, which any local user can
/// write into (a planted newest version there would be loaded): a line asks
/// for MGE_HOME, and `run` says the same (rather than its child, with a
/// TMPDIR of its own, saying no runtime was found).
#[test]
fn without_a_home_no_temporary_folder_is_a_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let libs = tmp.path().join("mge/runtime/99.0.0").join(LITE_IN_WHEEL);
    std::fs::create_dir_all(libs.parent().unwrap()).unwrap();
    std::fs::copy(planted_library(), &libs).unwrap();
    let marker = tmp.path().join("marker");
    for args in [
        &["runtime", "info"][..],
        &["run", "fixtures/conv_float.mge", "-q"],
        &["runtime", "install"],
    ] {
        let stderr = refused_unplanted(
            mge()
                .args(args)
                .env_remove("HOME")
                .env_remove("XDG_CACHE_HOME")
                .env_remove("MGE_HOME")
                .env_remove("MGE_LITE_LIB")
                .env("TMPDIR", tmp.path()),
            &marker,
        );
        assert_eq!(
            stderr.trim_end(),
            "mge: error: no cache folder for the MegEngine runtime: HOME is not set (nor XDG_CACHE_HOME); \
             set MGE_HOME to a folder of yours (or name a library with --lite-lib)",
            "{args:?}"
        );
    }
}

/// A site-packages folder holding `megenginelite/libs/liblite_shared_whl*.so`, a copy of `library`.
fn site_with(library: &Path) -> tempfile::TempDir {
    let site = tempfile::tempdir().unwrap();
    let libs = site.path().join("megenginelite/libs");
    std::fs::create_dir_all(&libs).unwrap();
    std::fs::copy(library, libs.join("liblite_shared_whl.so")).unwrap();
    site
}

/// A folder holding a `python3` that runs `body` (sh) instead of Python.
fn python_stand_in(body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    executable(&dir.path().join("python3"), &format!("#!/bin/sh\n{body}\n"));
    dir
}

/// `mge` with `python`'s `python3` first on PATH, an empty cache folder, no library named.
fn mge_with_python(python: &tempfile::TempDir, home: &Path) -> assert_cmd::Command {
    let path = format!("{}:{}", python.path().display(), std::env::var("PATH").unwrap());
    let mut command = mge();
    command
        .env("PATH", path)
        .env("MGE_HOME", home)
        .env_remove("MGE_LITE_LIB");
    command
}

/// Python's `megenginelite` is refused where it lies under the current folder
/// (however Python came to find it there), or where any user can change its
/// library or the engine beside it.
#[test]
fn python_s_megenginelite_is_refused_under_the_current_folder_or_writable_by_all() {
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("marker");
    let empty_home = tempfile::tempdir().unwrap();
    let site = site_with(planted_library());
    let python = python_stand_in(&format!("echo '{}'", site.path().join("megenginelite").display()));
    let info = || {
        let mut command = mge_with_python(&python, empty_home.path());
        command.args(["runtime", "info"]);
        command
    };
    let stderr = refused_unplanted(info().current_dir(site.path()), &marker);
    assert!(
        stderr.contains("lies under the current folder: not loaded unless named"),
        "{stderr}"
    );
    let stderr = refused_unplanted(info().current_dir(site.path().join("megenginelite")), &marker);
    assert!(stderr.contains("lies under the current folder"), "{stderr}");

    let engine = site.path().join("megengine/core/lib/libmegengine_shared.so");
    std::fs::create_dir_all(engine.parent().unwrap()).unwrap();
    std::fs::write(&engine, b"").unwrap();
    for writable in [site.path().join("megenginelite/libs/liblite_shared_whl.so"), engine] {
        std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o666)).unwrap();
        refused_naming(&mut info(), &writable, "writable by every user", &marker);
        std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
}

/// The supervised child loads the library its parent located instead of looking
/// again, so its own environment (a TMPDIR of its own) cannot change which one
/// loads; where the parent found none, the child says so without looking either.
/// Python's look-up is a stand-in `python3` here that answers by its TMPDIR:
/// `answer` for the user's, the planted library for any other.
#[test]
fn the_child_loads_the_library_its_parent_located() {
    let engine = site_with(fault_library());
    let planted = site_with(planted_library());
    let engine_package = engine.path().join("megenginelite").display().to_string();
    for (answer, code) in [(engine_package.as_str(), 0), ("", 2)] {
        let (tmp, scratch) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (marker, calls) = (scratch.path().join("marker"), scratch.path().join("calls"));
        let python = python_stand_in(&format!(
            "echo \"$@\" >> '{}'\nif [ \"$TMPDIR\" = '{}' ]; then echo '{answer}'; else echo '{}'; fi",
            calls.display(),
            tmp.path().display(),
            planted.path().join("megenginelite").display(),
        ));
        let empty_home = tempfile::tempdir().unwrap();
        let (stdout, stderr) = run_expecting(
            mge_with_python(&python, empty_home.path())
                .args(["run", "fixtures/conv_float.mge", "-q", "--iter", "1", "--json"])
                .env("TMPDIR", tmp.path())
                .env(MARKER_ENV, &marker),
            code,
        );
        assert!(
            !marker.exists(),
            "the child looked again and loaded another library:\n{stderr}"
        );
        match code {
            0 => drop(json_of(&stdout)),
            _ => assert!(
                stderr.starts_with("mge: error: no MegEngine Lite runtime found"),
                "{stderr}"
            ),
        }
        let asked = std::fs::read_to_string(&calls).unwrap();
        assert_eq!(asked.lines().count(), 1, "python3 is asked once:\n{asked}");
        assert!(asked.starts_with("-I -c "), "isolated:\n{asked}");
    }
}

/// An install of `wheel_folder`'s stand-in runtime in a cache folder of its own.
fn installed_cache() -> (tempfile::TempDir, tempfile::TempDir) {
    let (home, wheels) = (tempfile::tempdir().unwrap(), wheel_folder());
    run_expecting(
        &mut mge_in(home.path(), wheels.path(), &["runtime", "install", "-q"]),
        0,
    );
    (home, wheels)
}

/// `mge ARGS` refused in one line that names `path` and says why.
fn refused_naming(command: &mut assert_cmd::Command, path: &Path, why: &str, marker: &Path) {
    let stderr = refused_unplanted(command, marker);
    let expected = format!(
        "mge: error: {} is {why}: mge loads no runtime that another user could change",
        path.display()
    );
    assert!(
        stderr.trim_end().lines().count() == 1 && stderr.starts_with(&expected),
        "{expected}\n{stderr}"
    );
}

/// The newest version in the cache a link into a shared folder, or an install
/// folder any user can write to: refused, naming it, nothing loaded.
#[test]
fn a_cache_install_others_could_change_is_refused_naming_it() {
    let (home, wheels) = installed_cache();
    let (home, wheels) = (home.path(), wheels.path());
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("marker");
    let run = ["run", "fixtures/conv_float.mge", "-q", "--iter", "1"];

    let shared = tempfile::tempdir().unwrap();
    let library = shared.path().join(LITE_IN_WHEEL);
    std::fs::create_dir_all(library.parent().unwrap()).unwrap();
    std::fs::copy(planted_library(), &library).unwrap();
    let newest = home.join("mge/runtime/99.0.0");
    std::os::unix::fs::symlink(shared.path(), &newest).unwrap();
    for args in [&run[..], &["runtime", "info"]] {
        refused_naming(&mut mge_in(home, wheels, args), &newest, "a symbolic link", &marker);
    }
    std::fs::remove_file(&newest).unwrap();
    run_expecting(&mut mge_in(home, wheels, &run), 0);

    let install = install_dir(home);
    for writable in [install.clone(), install.join(LITE_IN_WHEEL)] {
        let mode = std::fs::metadata(&writable).unwrap().permissions().mode();
        std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(mode | 0o002)).unwrap();
        for args in [&run[..], &["runtime", "info"], &["runtime", "install"]] {
            refused_naming(
                &mut mge_in(home, wheels, args),
                &writable,
                "writable by every user",
                &marker,
            );
        }
        std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    run_expecting(&mut mge_in(home, wheels, &run), 0);
}

/// An install an older `mge` made, without a record of its files, is refused
/// before loading (a damaged file could crash the engine, and nothing tells);
/// `runtime install` reinstalls it.
#[test]
fn an_install_without_a_record_is_refused_until_reinstalled() {
    let (home, wheels) = installed_cache();
    let (home, wheels) = (home.path(), wheels.path());
    let record: PathBuf = install_dir(home).join("files.json");
    std::fs::remove_file(&record).unwrap();
    let run = ["run", "fixtures/conv_float.mge", "-q", "--iter", "1"];
    let (_, stderr) = run_expecting(&mut mge_in(home, wheels, &run), 2);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "mge: error: the MegEngine runtime in {} has no record of its files (installed by an older mge), \
             so a damaged file could crash the engine; `mge runtime install` reinstalls it",
            install_dir(home).display()
        )
    );
    let (stdout, _) = run_expecting(&mut mge_in(home, wheels, &["runtime", "info", "--json"]), 2);
    let info = json_of(&stdout);
    assert_eq!(info["files"]["state"], "unrecorded", "{info}");
    assert_eq!(
        info["version"],
        serde_json::Value::Null,
        "an unrecorded install is not loaded"
    );
    let (_, stderr) = run_expecting(&mut mge_in(home, wheels, &["runtime", "install"]), 0);
    assert!(stderr.contains("has no record of its files"), "{stderr}");
    assert!(record.is_file());
    run_expecting(&mut mge_in(home, wheels, &run), 0);
}
