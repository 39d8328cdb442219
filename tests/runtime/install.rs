//! `mge runtime install` and a damaged runtime, without the network: pip
//! "downloads" a stand-in MegEngine wheel from a local folder (its Lite
//! library is the fault library, its other files a few bytes), and the cache
//! folder is the test's own (`MGE_HOME`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{fault_library, gencode_engine_library, mge, run_expecting, WheelFile, LITE_IN_WHEEL};

const ENGINE_IN_WHEEL: &str = "megengine/core/lib/libmegengine_shared.so";

/// A folder holding a wheel pip takes for `megengine==1.13.0` on CPython 3.10.
pub(super) fn wheel_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let wheel = dir.path().join("MegEngine-1.13.0-cp310-cp310-manylinux2014_x86_64.whl");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(wheel).unwrap());
    let lite = std::fs::read(fault_library()).unwrap();
    let files: [(&str, &[u8]); 8] = [
        (LITE_IN_WHEEL, &lite),
        (ENGINE_IN_WHEEL, &[7; 4096]),
        ("megengine/core/lib/libatomic.so.1", b"atomic"),
        ("megengine/core/lib/libnvrtc.so.10.1", b"nvrtc"),
        ("megengine/core/lib/libnvToolsExt.so.1", b"nvtx"),
        (
            "megengine-1.13.0.dist-info/METADATA",
            b"Metadata-Version: 2.1\nName: MegEngine\nVersion: 1.13.0\n",
        ),
        (
            "megengine-1.13.0.dist-info/WHEEL",
            b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp310-cp310-manylinux2014_x86_64\n",
        ),
        ("megengine-1.13.0.dist-info/RECORD", b""),
    ];
    for (name, bytes) in files {
        zip.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    dir
}

/// `mge ARGS` with its own cache folder, pip offline on `wheels`, no Lite library given.
pub(super) fn mge_in(home: &Path, wheels: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = mge();
    command
        .env("MGE_HOME", home)
        .env("PIP_FIND_LINKS", wheels)
        .env("PIP_NO_INDEX", "1")
        .env_remove("MGE_LITE_LIB")
        .args(args);
    command
}

pub(super) fn install_dir(home: &Path) -> PathBuf {
    home.join("mge/runtime/1.13.0")
}

#[test]
fn a_damaged_runtime_is_refused_before_loading_named_and_repaired_without_force() {
    let (home, wheels) = (tempfile::tempdir().unwrap(), wheel_folder());
    let (home, wheels) = (home.path(), wheels.path());
    run_expecting(&mut mge_in(home, wheels, &["runtime", "install", "-q"]), 0);
    let run = ["run", "fixtures/conv_float.mge", "-q", "--iter", "1"];
    run_expecting(&mut mge_in(home, wheels, &run), 0);

    // Truncated, as by a full disk or an interrupted copy: loading it would be SIGBUS.
    let engine = install_dir(home).join(ENGINE_IN_WHEEL);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&engine)
        .unwrap()
        .set_len(100)
        .unwrap();
    let named = format!("{ENGINE_IN_WHEEL} holds 100 bytes, 4096 expected");
    let (_, stderr) = run_expecting(&mut mge_in(home, wheels, &run), 2);
    assert!(
        stderr.contains("the MegEngine runtime in")
            && stderr.contains(&named)
            && stderr.contains("`mge runtime install` repairs it"),
        "{stderr}"
    );
    let (stdout, _) = run_expecting(&mut mge_in(home, wheels, &["runtime", "info", "--json"]), 2);
    let info = crate::common::json_of(&stdout);
    assert_eq!(info["files"]["state"], "damaged", "{info}");
    assert_eq!(info["files"]["damage"][0]["path"], ENGINE_IN_WHEEL, "{info}");
    assert_eq!(
        info["version"],
        serde_json::Value::Null,
        "a damaged library is not loaded"
    );

    // The same size with other bytes: only the hashes tell.
    let (_, stderr) = run_expecting(&mut mge_in(home, wheels, &["runtime", "install"]), 0);
    assert!(
        stderr.contains(&format!(
            "repairing MegEngine 1.13.0 in {}",
            install_dir(home).display()
        )),
        "{stderr}"
    );
    std::fs::write(&engine, [8; 4096]).unwrap();
    let (stdout, _) = run_expecting(&mut mge_in(home, wheels, &["runtime", "info"]), 2);
    assert!(
        stdout.contains(&format!("DAMAGED: {ENGINE_IN_WHEEL} differs from what was installed")),
        "{stdout}"
    );
    run_expecting(&mut mge_in(home, wheels, &["runtime", "install", "-q"]), 0);
    let (stdout, _) = run_expecting(&mut mge_in(home, wheels, &["runtime", "info"]), 0);
    assert!(stdout.contains("verified (sizes and SHA-256 as installed)"), "{stdout}");
    run_expecting(&mut mge_in(home, wheels, &run), 0);
}

#[test]
fn an_intact_runtime_is_reinstalled_by_no_one_and_old_staging_goes() {
    let (installed, wheels) = (tempfile::tempdir().unwrap(), wheel_folder());
    run_expecting(
        &mut mge_in(installed.path(), wheels.path(), &["runtime", "install", "-q"]),
        0,
    );
    // A cache folder that holds the install but no lock file, and the staging
    // folder of an install that was killed.
    let home = tempfile::tempdir().unwrap();
    std::fs::rename(installed.path().join("mge"), home.path().join("mge")).unwrap();
    let abandoned = home.path().join("mge/runtime/.install-abandoned");
    std::fs::create_dir(&abandoned).unwrap();
    std::fs::write(abandoned.join("MegEngine.whl"), b"partial").unwrap();

    let no_pip = tempfile::tempdir().unwrap();
    let (_, stderr) = run_expecting(&mut mge_in(home.path(), no_pip.path(), &["runtime", "install"]), 0);
    assert!(stderr.contains("is already installed"), "{stderr}");
    assert!(!abandoned.exists(), "the killed install's staging folder is removed");
}

/// A second `runtime install` into the same cache waits for the first, then
/// finds its result instead of installing again.
#[test]
fn concurrent_installs_wait_for_each_other() {
    let (finished, wheels) = (tempfile::tempdir().unwrap(), wheel_folder());
    run_expecting(
        &mut mge_in(finished.path(), wheels.path(), &["runtime", "install", "-q"]),
        0,
    );
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("mge")).unwrap();
    let first = std::fs::File::create(home.path().join("mge/install.lock")).unwrap();
    first.lock().unwrap();
    // Offline without a wheel: a second download would fail.
    let no_wheels = tempfile::tempdir().unwrap();
    let mut second = mge_in(home.path(), no_wheels.path(), &["runtime", "install"]);
    let started = Instant::now();
    let second = std::thread::spawn(move || run_expecting(&mut second, 0));
    std::thread::sleep(Duration::from_millis(1500));
    std::fs::rename(finished.path().join("mge/runtime"), home.path().join("mge/runtime")).unwrap();
    drop(first);
    let (stdout, stderr) = second.join().unwrap();
    assert!(started.elapsed() >= Duration::from_millis(1500));
    assert!(stderr.contains("waiting for another `mge runtime install`"), "{stderr}");
    assert!(stderr.contains("already installed"), "{stderr}");
    assert_eq!(
        stdout.trim(),
        install_dir(home.path()).join(LITE_IN_WHEEL).display().to_string()
    );
}

/// An intact install needs no lock: a cache folder the user cannot write
/// (read-only, shared) still answers `runtime install`.
#[test]
fn an_intact_runtime_needs_no_lock() {
    let (home, wheels) = (tempfile::tempdir().unwrap(), wheel_folder());
    run_expecting(
        &mut mge_in(home.path(), wheels.path(), &["runtime", "install", "-q"]),
        0,
    );
    let lock = home.path().join("mge/install.lock");
    std::fs::remove_file(&lock).unwrap();
    // The lock's place taken by a folder: creating the lock file fails, as on a read-only folder.
    std::fs::create_dir(&lock).unwrap();
    let (stdout, _) = run_expecting(
        &mut mge_in(home.path(), wheels.path(), &["runtime", "install", "-q"]),
        0,
    );
    assert!(stdout.trim_end().ends_with(LITE_IN_WHEEL), "{stdout}");
}

/// A `python3` that starts a download, leaves files in its TMPDIR and its
/// download folder, and never finishes: a slow pip to interrupt. Asked for
/// its MegEngine first (`-I -c`), it has none.
fn slow_pip() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("python3");
    std::fs::write(
        &script,
        "#!/bin/sh\n[ \"$2\" = -c ] && exit 1\nwhile [ $# -gt 0 ]; do [ \"$1\" = -d ] && out=$2; shift; done\n\
         echo partial > \"$TMPDIR/pip-unpack-1\"\necho partial > \"$out/MegEngine.whl.part\"\nexec sleep 60\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    dir
}

#[test]
fn an_interrupted_install_leaves_nothing_behind() {
    for signal in ["INT", "TERM", "HUP"] {
        let (home, tmp, pip) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), slow_pip());
        let path = format!("{}:{}", pip.path().display(), std::env::var("PATH").unwrap());
        let mut install = std::process::Command::new(assert_cmd::cargo::cargo_bin("mge"))
            .args(["runtime", "install"])
            .env("MGE_HOME", home.path())
            .env("TMPDIR", tmp.path())
            .env("PATH", path)
            .env_remove("MGE_LITE_LIB")
            .stderr(Stdio::piped())
            .spawn()
            .expect("mge starts");
        let runtime = home.path().join("mge/runtime");
        let started = Instant::now();
        let downloading = || {
            std::fs::read_dir(&runtime)
                .map(|entries| {
                    entries
                        .flatten()
                        .any(|entry| entry.path().join("MegEngine.whl.part").exists())
                })
                .unwrap_or(false)
        };
        while !downloading() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the download did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        crate::common::interrupt(&mut install, signal, Duration::from_secs(30));
        let left = crate::common::left_in(&runtime);
        assert!(left.is_empty(), "SIG{signal}: left in the cache folder: {left:?}");
        let left = crate::common::left_in(tmp.path());
        assert!(left.is_empty(), "SIG{signal}: left in TMPDIR: {left:?}");
    }
}

/// A `python3` that is a wrapper script, as pyenv's shims are: the real pip
/// (here `sleep`) is its child, whose pid it writes beside itself. It holds
/// none of `mge`'s streams, which would keep the test reading until it ends.
fn wrapped_pip() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pip.pid");
    let script = dir.path().join("python3");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$2\" = -c ] && exit 1\nsleep 60 </dev/null >/dev/null 2>&1 &\necho $! > '{}'\nwait\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    (dir, pid_file)
}

/// Is process `pid` still running (a zombie has ended: only its parent's wait is left)?
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

/// An install interrupted (SIGINT), or killed outright
/// (SIGKILL, when nothing of `mge`'s own runs any more), leaves no pip behind,
/// though `python3` is a wrapper whose child the real pip is.
#[test]
fn an_interrupted_or_killed_install_leaves_no_pip_running() {
    for signal in ["INT", "KILL"] {
        let (home, (pip, pid_file)) = (tempfile::tempdir().unwrap(), wrapped_pip());
        let path = format!("{}:{}", pip.path().display(), std::env::var("PATH").unwrap());
        let mut install = std::process::Command::new(assert_cmd::cargo::cargo_bin("mge"))
            .args(["runtime", "install"])
            .env("MGE_HOME", home.path())
            .env("PATH", path)
            .env_remove("MGE_LITE_LIB")
            .stderr(Stdio::piped())
            .spawn()
            .expect("mge starts");
        let started = Instant::now();
        let real_pip = loop {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok())
            {
                break pid;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "pip did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        match signal {
            "INT" => drop(crate::common::interrupt(&mut install, signal, Duration::from_secs(30))),
            _ => {
                install.kill().unwrap();
                install.wait().unwrap();
            }
        }
        let ended = Instant::now();
        while running(real_pip) {
            if ended.elapsed() > Duration::from_secs(10) {
                let _ = std::process::Command::new("kill").arg(real_pip.to_string()).status();
                panic!("SIG{signal}: pip ({real_pip}) still runs after mge ended");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn runtime_info_warns_of_another_mge_first_on_path() {
    let other = tempfile::tempdir().unwrap();
    let launcher = other.path().join("mge");
    std::fs::write(
        &launcher,
        "#! /usr/bin/env python3\nimport argparse\nimport megengine\n",
    )
    .unwrap();
    std::fs::set_permissions(&launcher, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", other.path().display(), std::env::var("PATH").unwrap());
    let (_, stderr) = run_expecting(mge().args(["runtime", "info", "-q"]).env("PATH", &path), 0);
    assert!(
        stderr.contains(&format!(
            "warning: another mge comes first on PATH: {} (MegEngine's Python tool launcher, from its wheel)",
            launcher.canonicalize().unwrap().display()
        )),
        "{stderr}"
    );
    let (_, stderr) = run_expecting(mge().args(["runtime", "info", "-q"]), 0);
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// `--find-links` is pip's: a build of a release (`1.13.0+cu118`) found
/// there is installed under its own version, asked for by it or by its
/// release, with `--version` or as the runtime to use (`MGE_RUNTIME_VERSION`).
#[test]
fn a_build_found_through_find_links_installs_under_its_own_version() {
    let wheels = tempfile::tempdir().unwrap();
    let lite = std::fs::read(fault_library()).unwrap();
    crate::common::write_wheel(
        wheels.path(),
        "1.13.0+cu118",
        "cp310",
        &[
            (LITE_IN_WHEEL, WheelFile::Bytes(&lite)),
            (ENGINE_IN_WHEEL, WheelFile::Copy(gencode_engine_library())),
            ("megengine/core/lib/libcudnn.so.8", WheelFile::Bytes(b"cudnn")),
        ],
    );
    for (asked, by_env) in [("1.13.0+cu118", false), ("1.13.0", false), ("1.13.0+cu118", true)] {
        let home = tempfile::tempdir().unwrap();
        let mut install = crate::common::mge_home(home.path());
        install.env("PIP_NO_INDEX", "1").args(["runtime", "install", "-q"]);
        match by_env {
            true => {
                // The default release installed already: the one named is installed all the same.
                let plain = tempfile::tempdir().unwrap();
                let engine = WheelFile::Bytes(b"engine");
                let wheel = crate::common::stand_in_wheel(plain.path(), "1.13.0", engine);
                let mut first = crate::common::mge_home(home.path());
                run_expecting(first.args(["runtime", "install", "-q", "--wheel"]).arg(wheel), 0);
                install.env("MGE_RUNTIME_VERSION", asked)
            }
            false => install.args(["--version", asked]),
        };
        install.arg("--find-links").arg(wheels.path());
        let (stdout, _) = run_expecting(&mut install, 0);
        let dir = home.path().join("mge/runtime/1.13.0+cu118");
        assert_eq!(stdout.trim(), dir.join(LITE_IN_WHEEL).display().to_string(), "{asked}");
        assert!(dir.join("megengine/core/lib/libcudnn.so.8").is_file(), "{asked}");
        let mut left = crate::common::left_in(&home.path().join("mge/runtime"));
        left.retain(|path| !path.ends_with("1.13.0"));
        assert_eq!(left, [dir], "{asked}: only the installs are left");
    }
}

/// The engine is loaded only in a supervised child: a runtime that aborts
/// as it loads, or crashes as it counts its devices, ended `runtime info`
/// with its signal and no word (134, 139); a variable the engine cannot read
/// aborted it ("Rust cannot catch foreign exceptions"); a wheel whose
/// library crashes as the install checks it ended the install with SIGSEGV
/// and left `runtime/.install-*`. Each is one line and exit 2, nothing left.
#[test]
fn runtime_info_and_install_load_the_engine_supervised() {
    for (fault, at, said) in [
        (
            "abort",
            "open",
            "the engine crashed (SIGABRT) while the engine's library loaded",
        ),
        (
            "segv",
            "count",
            "the engine crashed (SIGSEGV) while the engine's library loaded",
        ),
    ] {
        let (stdout, stderr) = run_expecting(
            mge()
                .env("MGE_LITE_LIB", fault_library())
                .env("MGE_FAULT", fault)
                .env("MGE_FAULT_AT", at)
                .args(["runtime", "info"]),
            2,
        );
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(stderr.lines().count(), 1, "{fault}: {stderr}");
        assert!(stderr.starts_with(&format!("mge: error: {said}")), "{fault}: {stderr}");
    }
    let (_, stderr) = run_expecting(
        mge().env("MGB_CONV_PROFILING_TIMEOUT", "abc").args(["runtime", "info"]),
        2,
    );
    assert_eq!(
        stderr,
        "mge: error: MGB_CONV_PROFILING_TIMEOUT=abc is not a number the engine reads, and it fails on it: \
         set it to a number of seconds, or unset it\n"
    );
    let home = tempfile::tempdir().unwrap();
    let wheels = wheel_folder();
    let (_, stderr) = run_expecting(
        mge_in(home.path(), wheels.path(), &["runtime", "install", "-q"])
            .env("MGE_FAULT", "segv")
            .env("MGE_FAULT_AT", "open"),
        2,
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("mge: error: the extracted runtime does not load: the engine crashed (SIGSEGV)"),
        "{stderr}"
    );
    let runtimes: Vec<_> = std::fs::read_dir(home.path().join("mge/runtime")).unwrap().collect();
    assert!(runtimes.is_empty(), "{runtimes:?}");
}

/// Versions are equal as PEP 440 says: `1.13`, `01.13.0` and `1.13.0.0` are
/// the installed 1.13.0. `--runtime-version 1.13` said "not installed" and
/// suggested `runtime install --version 1.13`, which downloaded 936 MB and
/// then found 1.13.0 installed: an installed release is looked for first.
#[test]
fn a_version_is_one_release_however_it_is_spelled() {
    let model = "fixtures/conv_float.mge";
    for spelled in ["1.13", "01.13.0", "1.13.0.0"] {
        run_expecting(
            mge()
                .env_remove("MGE_LITE_LIB")
                .args(["run", model, "-q", "--iter", "1", "--runtime-version", spelled]),
            0,
        );
        run_expecting(
            mge()
                .env_remove("MGE_LITE_LIB")
                .args(["compare", model, model, "--no-timing", "--a-runtime", spelled]),
            0,
        );
    }
    let (installed, wheels) = (tempfile::tempdir().unwrap(), wheel_folder());
    run_expecting(
        &mut mge_in(installed.path(), wheels.path(), &["runtime", "install", "-q"]),
        0,
    );
    // pip has no wheel to give: only the install already there can answer.
    let no_pip = tempfile::tempdir().unwrap();
    for spelled in ["1.13", "01.13.0", "1.13.0.0"] {
        let (stdout, stderr) = run_expecting(
            &mut mge_in(
                installed.path(),
                no_pip.path(),
                &["runtime", "install", "--version", spelled],
            ),
            0,
        );
        assert!(
            stderr.contains("MegEngine 1.13.0 is already installed"),
            "{spelled}: {stderr}"
        );
        assert!(stdout.trim_end().ends_with(LITE_IN_WHEEL), "{stdout}");
    }
    let runtimes: Vec<String> = std::fs::read_dir(installed.path().join("mge/runtime"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(runtimes, ["1.13.0"]);
}
