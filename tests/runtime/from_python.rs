//! `mge runtime install` from the MegEngine a Python environment has, with pip
//! kept off every index: real virtualenvs (`python3 -m venv`) holding a
//! MegEngine as its wheel lays it out in site-packages (its dist-info, its
//! `megenginelite/libs/` and `megengine/core/lib/`): the runtime the tests run
//! on, hard-linked in, or a stand-in (the fault library, a few bytes of engine).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use super::install::{install_dir, mge_in, wheel_folder};
use crate::common::{fault_library, installed_lite_library, left_in, mge, run_expecting, LITE_IN_WHEEL};

const ENGINE_IN_WHEEL: &str = "megengine/core/lib/libmegengine_shared.so";

/// A virtualenv without pip (made in a second) and its site-packages.
fn virtualenv(dir: &Path) -> (PathBuf, PathBuf) {
    let venv = dir.join("venv");
    let status = Process::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("python3 runs");
    assert!(status.success(), "python3 -m venv failed");
    let site = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .map(|entry| entry.path().join("site-packages"))
        .find(|site| site.is_dir())
        .expect("the virtualenv has a site-packages");
    (venv.join("bin/python"), site)
}

/// MegEngine `version` in `site`: its dist-info and the runtime's `files`
/// (named as in the wheel) taken from `from` (a hard link where it can be).
fn install_megengine(site: &Path, version: &str, files: &[(&str, &Path)]) {
    let info = site.join(format!("MegEngine-{version}.dist-info"));
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: MegEngine\nVersion: {version}\n"),
    )
    .unwrap();
    std::fs::write(info.join("RECORD"), "").unwrap();
    for (name, from) in files {
        let to = site.join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        if std::fs::hard_link(from, &to).is_err() {
            std::fs::copy(from, &to).unwrap();
        }
    }
    std::fs::write(site.join("megenginelite/__init__.py"), "").unwrap();
}

/// A virtualenv with MegEngine `version` whose Lite library is the fault
/// library and whose engine is a few bytes.
fn stand_in_virtualenv(dir: &Path, version: &str) -> (PathBuf, PathBuf) {
    let (python, site) = virtualenv(dir);
    let engine = dir.join("engine.so");
    std::fs::write(&engine, [7; 4096]).unwrap();
    install_megengine(
        site.as_path(),
        version,
        &[(LITE_IN_WHEEL, fault_library()), (ENGINE_IN_WHEEL, &engine)],
    );
    (python, site)
}

/// `mge runtime install ARGS` with its own cache folder, pip offline, no virtualenv active.
fn install_in(home: &Path, args: &[&str]) -> assert_cmd::Command {
    let offline = tempfile::tempdir().unwrap();
    let mut command = mge_in(home, offline.path(), &["runtime", "install"]);
    command
        .env_remove("VIRTUAL_ENV")
        .env_remove("MGE_RUNTIME_VERSION")
        .args(args);
    command
}

/// The runtime the tests run on, in a virtualenv, is copied with no
/// network, recorded and verified as a downloaded one is, and runs a model
/// as MegEngine did. Before, `--from-python` was unknown, and a plain
/// install with pip off the index failed.
#[test]
fn a_pythons_megengine_is_copied_verified_and_runs_a_model_offline() {
    let dir = tempfile::tempdir().unwrap();
    let (python, site) = virtualenv(dir.path());
    let runtime = installed_lite_library().ancestors().nth(3).unwrap();
    let files: Vec<(String, PathBuf)> = ["megenginelite/libs", "megengine/core/lib"]
        .iter()
        .flat_map(|folder| std::fs::read_dir(runtime.join(folder)).unwrap().flatten())
        .map(|entry| {
            let name = entry
                .path()
                .strip_prefix(runtime)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            (name, entry.path())
        })
        .collect();
    let named: Vec<(&str, &Path)> = files
        .iter()
        .map(|(name, path)| (name.as_str(), path.as_path()))
        .collect();
    install_megengine(&site, "1.13.0", &named);

    let home = tempfile::tempdir().unwrap();
    let (stdout, stderr) = run_expecting(install_in(home.path(), &[]).arg("--from-python").arg(&python), 0);
    assert_eq!(
        stdout.trim(),
        install_dir(home.path()).join(LITE_IN_WHEEL).display().to_string()
    );
    assert!(
        stderr.contains(&format!("copying MegEngine 1.13.0 from {}", python.display())),
        "{stderr}"
    );
    assert!(!stderr.contains("downloading"), "{stderr}");
    let mut info = mge_in(home.path(), dir.path(), &["runtime", "info", "--json"]);
    let (stdout, _) = run_expecting(&mut info, 0);
    let info = crate::common::json_of(&stdout);
    assert_eq!(info["files"]["state"], "verified", "{info}");
    assert_eq!(info["version"], "1.13.0");

    // The fixture's feed gives what MegEngine's Python computed for it.
    let manifest = crate::common::manifest();
    let case = &crate::common::entries(&manifest, "cases")[0];
    let out = tempfile::tempdir().unwrap();
    let mut run = mge_in(home.path(), dir.path(), &["run", "-q", "--iter", "1"]);
    run.arg(case["model_file"].as_str().unwrap())
        .arg("-i")
        .arg(format!("data:{}", case["inputs"][0].as_str().unwrap()))
        .arg("--outputs")
        .arg(out.path());
    run_expecting(&mut run, 0);
    let reference = crate::common::root().join(case["outputs"]["feat"]["file"].as_str().unwrap());
    crate::common::assert_close(
        &crate::common::read_f32(&out.path().join("feat.npy")),
        &crate::common::read_f32(&reference),
        "feat",
    );
}

/// Without `--from-python`, the active virtualenv's MegEngine is copied,
/// else `python3`'s (the first on PATH), and pip downloads only where
/// neither has the version; each says which it did.
#[test]
fn a_plain_install_copies_the_virtualenvs_or_python3s_megengine_before_downloading() {
    let dir = tempfile::tempdir().unwrap();
    let (python, _) = stand_in_virtualenv(dir.path(), "1.13.0");
    let venv = python.parent().unwrap().parent().unwrap();

    let home = tempfile::tempdir().unwrap();
    let (_, stderr) = run_expecting(install_in(home.path(), &[]).env("VIRTUAL_ENV", venv), 0);
    assert!(
        stderr.contains(&format!("copying MegEngine 1.13.0 from {}", python.display())),
        "{stderr}"
    );
    assert!(install_dir(home.path()).join(ENGINE_IN_WHEEL).is_file());

    let home = tempfile::tempdir().unwrap();
    let path = std::env::join_paths(
        std::iter::once(venv.join("bin")).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let (_, stderr) = run_expecting(install_in(home.path(), &[]).env("PATH", path), 0);
    let python3 = venv.join("bin/python3");
    assert!(
        stderr.contains(&format!("copying MegEngine 1.13.0 from {}", python3.display())),
        "{stderr}"
    );

    // The virtualenv's is another release: passed over, said, and the wheel downloaded.
    let other = tempfile::tempdir().unwrap();
    let (other_python, _) = stand_in_virtualenv(other.path(), "1.12.0");
    let home = tempfile::tempdir().unwrap();
    let wheels = wheel_folder();
    let other_venv = other_python.parent().unwrap().parent().unwrap();
    let mut install = mge_in(home.path(), wheels.path(), &["runtime", "install"]);
    let (_, stderr) = run_expecting(
        install.env("VIRTUAL_ENV", other_venv).env_remove("MGE_RUNTIME_VERSION"),
        0,
    );
    assert!(
        stderr.contains(&format!(
            "{} has MegEngine 1.12.0, not the 1.13.0 asked for",
            other_python.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("downloading MegEngine 1.13.0"), "{stderr}");
}

/// A PYTHON that is not Python, has no MegEngine or another version, or
/// whose runtime files are links or writable by every user: one line, exit
/// 2, nothing installed.
#[test]
fn a_python_unfit_to_copy_from_is_one_line_and_installs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let not_python = dir.path().join("not-python");
    std::fs::write(&not_python, "#!/bin/sh\necho 'Python 3.10.0'\n").unwrap();
    std::fs::set_permissions(&not_python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bare = tempfile::tempdir().unwrap();
    let (bare_python, _) = virtualenv(bare.path());
    let older = tempfile::tempdir().unwrap();
    let (older_python, _) = stand_in_virtualenv(older.path(), "1.12.0");
    let linked = tempfile::tempdir().unwrap();
    let (linked_python, linked_site) = stand_in_virtualenv(linked.path(), "1.13.0");
    let engine = linked_site.join(ENGINE_IN_WHEEL);
    std::fs::remove_file(&engine).unwrap();
    std::os::unix::fs::symlink(linked.path().join("engine.so"), &engine).unwrap();
    let open = tempfile::tempdir().unwrap();
    let (open_python, open_site) = stand_in_virtualenv(open.path(), "1.13.0");
    let lite = open_site.join(LITE_IN_WHEEL);
    std::fs::copy(fault_library(), dir.path().join("lite.so")).unwrap();
    std::fs::remove_file(&lite).unwrap();
    std::fs::copy(dir.path().join("lite.so"), &lite).unwrap();
    std::fs::set_permissions(&lite, std::fs::Permissions::from_mode(0o666)).unwrap();

    for (python, said) in [
        (not_python.clone(), "is not Python".to_string()),
        (dir.path().join("missing"), "cannot run it as Python".to_string()),
        (bare_python, "has no MegEngine installed".to_string()),
        (
            older_python,
            "has MegEngine 1.12.0, not the 1.13.0 asked for".to_string(),
        ),
        (linked_python, format!("{} is a symbolic link", engine.display())),
        (open_python, format!("{} is writable by every user", lite.display())),
    ] {
        let home = tempfile::tempdir().unwrap();
        let (stdout, stderr) = run_expecting(install_in(home.path(), &[]).arg("--from-python").arg(&python), 2);
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(stderr.lines().count(), 1, "{}: {stderr}", python.display());
        assert!(
            stderr.starts_with("mge: error: ") && stderr.contains(&said),
            "{said}: {stderr}"
        );
        let runtimes = home.path().join("runtime");
        assert!(
            !runtimes.exists() || left_in(&runtimes).is_empty(),
            "{said}: something installed"
        );
    }
    // Named, it is asked even where the version is installed already.
    let good = tempfile::tempdir().unwrap();
    let (good_python, _) = stand_in_virtualenv(good.path(), "1.13.0");
    let home = tempfile::tempdir().unwrap();
    run_expecting(install_in(home.path(), &["-q", "--from-python"]).arg(&good_python), 0);
    let (_, stderr) = run_expecting(install_in(home.path(), &["--from-python"]).arg(&not_python), 2);
    assert!(stderr.contains("is not Python"), "{stderr}");

    let (_, stderr) = run_expecting(
        mge()
            .args(["runtime", "install", "--from-python"])
            .arg(&not_python)
            .args(["--wheel", "x.whl"]),
        2,
    );
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}
