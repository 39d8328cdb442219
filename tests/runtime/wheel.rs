//! `mge runtime install --wheel FILE`: every library a wheel's runtime has,
//! kept, recorded and verified; runtimes of several versions side by side,
//! chosen with `--runtime-version` / `MGE_RUNTIME_VERSION`; the CUDA
//! architectures read once at install. Without the network: the wheels are
//! written by the tests.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};

use crate::common::*;

const CU118_SASS: [&str; 6] = ["sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89"];
const CU101_SASS: [&str; 5] = ["sm_52", "sm_60", "sm_61", "sm_70", "sm_75"];
/// A run that loads the runtime's libraries.
const RUN: [&str; 5] = ["run", "fixtures/conv_float.mge", "-q", "--iter", "1"];

fn record(install: &Path) -> Value {
    json_of(&std::fs::read_to_string(install.join("files.json")).unwrap())
}

fn runtime_info(command: &mut assert_cmd::Command, code: i32) -> Value {
    json_of(&run_expecting(command.args(["runtime", "info", "--json"]), code).0)
}

#[test]
fn a_wheel_file_installs_every_library_of_its_runtime_beside_other_versions() {
    let (home, wheels) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let home = home.path();
    let cu118 = stand_in_wheel(wheels.path(), "1.13.0+cu118", WheelFile::Copy(gencode_engine_library()));
    let install = installs_its_libraries_to_the_byte_and_records_them(home, &cu118);
    a_second_version_installs_beside_it_and_the_newest_is_used(home, wheels.path());
    a_version_is_chosen_by_the_environment_or_the_command_line(home);
    each_library_is_verified_and_a_damaged_one_repaired(home, &install, &cu118);

    // The wheel's version is the install's: another asked for is refused.
    let (_, stderr) = run_expecting(
        mge_home(home)
            .args(["runtime", "install", "--version", "1.13.1", "--wheel"])
            .arg(&cu118),
        2,
    );
    assert!(
        stderr.contains("holds MegEngine 1.13.0+cu118, not the --version 1.13.1 asked for"),
        "{stderr}"
    );
}

/// Installs `wheel` into `home`, and returns the install.
fn installs_its_libraries_to_the_byte_and_records_them(home: &Path, wheel: &Path) -> PathBuf {
    let (stdout, _) = run_expecting(
        mge_home(home).args(["runtime", "install", "-q", "--wheel"]).arg(wheel),
        0,
    );
    let install = home.join("mge/runtime/1.13.0+cu118");
    assert_eq!(stdout.trim(), install.join(STAND_IN_LITE).display().to_string());

    // Every shared library of the runtime's folders, to the byte; nothing else.
    let archive = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    let mut archive = archive;
    for name in STAND_IN_RUNTIME {
        let mut expected = Vec::new();
        std::io::Read::read_to_end(&mut archive.by_name(name).unwrap(), &mut expected).unwrap();
        assert_eq!(std::fs::read(install.join(name)).unwrap(), expected, "{name}");
    }
    for left in [
        "megengine/__init__.py",
        "megengine/core/include",
        "megengine/core/lib/ucx",
        "megenginelite/network.py",
    ] {
        assert!(!install.join(left).exists(), "{left} is not the runtime's");
    }
    let recorded = record(&install);
    let mut files: Vec<&str> = recorded["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap())
        .collect();
    files.sort();
    let mut expected = STAND_IN_RUNTIME.to_vec();
    expected.sort();
    assert_eq!(files, expected);
    assert_eq!(recorded["version"], "1.13.0+cu118");
    assert_eq!(recorded["lite_library"], STAND_IN_LITE);
    // Read from the engine's .rodata once, at install.
    assert_eq!(
        recorded["cuda_architectures"],
        json!({"sass": CU118_SASS, "ptx": ["compute_89"]})
    );
    install
}

/// A second version beside the first: its engine a bare file holding the
/// string (no ELF sections).
fn a_second_version_installs_beside_it_and_the_newest_is_used(home: &Path, wheels: &Path) {
    let engine = format!("not an ELF file\0{CU101_GENCODE}\0and more");
    let plain = stand_in_wheel(wheels, "1.13.0", WheelFile::Bytes(engine.as_bytes()));
    run_expecting(
        mge_home(home).args(["runtime", "install", "-q", "--wheel"]).arg(&plain),
        0,
    );
    let info = runtime_info(&mut mge_home(home), 0);
    let installed: Vec<(&str, bool)> = info["installed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|install| (install["version"].as_str().unwrap(), install["used"].as_bool().unwrap()))
        .collect();
    // The newest is used: a build of a release ranks above the bare release (PEP 440).
    assert_eq!(installed, [("1.13.0", false), ("1.13.0+cu118", true)], "{info}");
    assert_eq!(info["cuda_architectures"]["sass"], json!(CU118_SASS), "{info}");
    assert_eq!(
        info["installed"][0]["cuda_architectures"]["sass"],
        json!(CU101_SASS),
        "{info}"
    );
}

/// With 1.13.0 and 1.13.0+cu118 installed.
fn a_version_is_chosen_by_the_environment_or_the_command_line(home: &Path) {
    let info = runtime_info(mge_home(home).env("MGE_RUNTIME_VERSION", "1.13.0"), 0);
    assert_eq!(info["found_by"], "--runtime-version / MGE_RUNTIME_VERSION", "{info}");
    assert_eq!(
        info["path"],
        home.join("mge/runtime/1.13.0")
            .join(STAND_IN_LITE)
            .display()
            .to_string()
    );
    assert_eq!(info["cuda_architectures"]["ptx"], json!(["compute_75"]), "{info}");
    run_expecting(mge_home(home).args(RUN).args(["--runtime-version", "1.13.0"]), 0);
    // check's workers are handed the library the parent found: it wins over the version they inherit.
    let check = ["check", "fixtures/conv_float_tc1.mge", "-q"];
    run_expecting(mge_home(home).args(check).env("MGE_RUNTIME_VERSION", "1.13.0"), 0);
    for (asked, said) in [
        (
            "1.13.1",
            "MegEngine 1.13.1 is not installed (installed: 1.13.0, 1.13.0+cu118); install it with `mge runtime install --version 1.13.1`",
        ),
        ("../1.13.0", "expected a version such as 1.13.0 or 1.13.2+cu118"),
    ] {
        let (_, stderr) = run_expecting(mge_home(home).args(RUN).env("MGE_RUNTIME_VERSION", asked), 2);
        assert!(stderr.contains(said), "{asked}: {stderr}");
    }
}

/// Each library verified: one changed (same size) is named by info, one cut
/// short refused before loading; installing the wheel again repairs it.
fn each_library_is_verified_and_a_damaged_one_repaired(home: &Path, install: &Path, wheel: &Path) {
    let cudnn = install.join("megengine/core/lib/libcudnn.so.8");
    std::fs::write(&cudnn, b"CUDNN").unwrap();
    let (stdout, _) = run_expecting(mge_home(home).args(["runtime", "info"]), 2);
    assert!(
        stdout.contains("DAMAGED: megengine/core/lib/libcudnn.so.8 differs from what was installed"),
        "{stdout}"
    );
    std::fs::write(&cudnn, b"cu").unwrap();
    let (_, stderr) = run_expecting(mge_home(home).args(RUN), 2);
    assert!(
        stderr.contains("megengine/core/lib/libcudnn.so.8 holds 2 bytes, 5 expected"),
        "{stderr}"
    );
    let (_, stderr) = run_expecting(mge_home(home).args(["runtime", "install", "--wheel"]).arg(wheel), 0);
    assert!(stderr.contains("repairing MegEngine 1.13.0+cu118"), "{stderr}");
    run_expecting(mge_home(home).args(RUN), 0);
}

#[test]
fn what_is_not_a_megengine_wheel_is_refused_in_one_line_and_leaves_nothing() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let not_zip = dir.path().join("MegEngine-1.13.0-cp310-cp310-manylinux2014_x86_64.whl");
    std::fs::write(&not_zip, b"not a zip").unwrap();
    let other = tempfile::tempdir().unwrap();
    let no_lite = write_wheel(
        other.path(),
        "1.13.0",
        "cp310",
        &[("megengine/core/lib/libmegengine_shared.so", WheelFile::Bytes(b"x"))],
    );
    // A wheel whose METADATA claims a version that would climb out of the cache folder.
    let climbing = dir.path().join("climbing.whl");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&climbing).unwrap());
    zip.start_file(
        "megengine-1.dist-info/METADATA",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    std::io::Write::write_all(&mut zip, b"Metadata-Version: 2.1\nName: MegEngine\nVersion: ../../x\n").unwrap();
    zip.finish().unwrap();
    let fifo = dir.path().join("fifo.whl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (wheel, said) in [
        (&not_zip, "is not MegEngine's wheel: not a zip archive".to_string()),
        (
            &no_lite,
            "is not MegEngine's wheel: it has no megenginelite/libs/liblite_shared*.so".to_string(),
        ),
        (
            &climbing,
            "version \"../../x\" is not a release number with an optional local tag".to_string(),
        ),
        (&fifo, "is not a regular file but a FIFO".to_string()),
        (&dir.path().join("missing.whl"), "cannot read wheel".to_string()),
    ] {
        let (_, stderr) = run_expecting(
            mge_home(home.path()).args(["runtime", "install", "--wheel"]).arg(wheel),
            2,
        );
        assert!(stderr.contains(&said), "{}: {stderr}", wheel.display());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        let left: Vec<PathBuf> = std::fs::read_dir(home.path().join("mge/runtime"))
            .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{left:?}");
    }
}

/// The registry's wheel, as the test set-up can have it without the network:
/// the runtime files of the installed 1.13.0 (the registry's, to the byte, as
/// its record says) in a zip named and laid out as MegEngine's wheel.
#[test]
fn the_registrys_wheel_installs_from_a_file_with_its_cuda_architectures() {
    let info = json_of(&run_expecting(mge().args(["runtime", "info", "--json"]), 0).0);
    let lite = PathBuf::from(info["path"].as_str().unwrap());
    let root = lite.ancestors().nth(3).unwrap().to_path_buf();
    assert_eq!(
        root.join(LITE_IN_WHEEL),
        lite,
        "the runtime in use is laid out as the wheel"
    );
    let core = root.join("megengine/core/lib");
    let mut libraries: Vec<(String, PathBuf)> = std::fs::read_dir(&core)
        .unwrap()
        .flatten()
        .map(|entry| {
            let name = entry.file_name().into_string().unwrap();
            (format!("megengine/core/lib/{name}"), entry.path())
        })
        .collect();
    libraries.push((LITE_IN_WHEEL.to_string(), lite.clone()));
    let (home, wheels) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let files: Vec<(&str, WheelFile)> = libraries
        .iter()
        .map(|(name, path)| (name.as_str(), WheelFile::Copy(path)))
        .collect();
    let writing = Instant::now();
    let wheel = write_wheel(wheels.path(), "1.13.0", "cp310", &files);
    let written = writing.elapsed();

    let installing = Instant::now();
    run_expecting(
        mge_home(home.path())
            .args(["runtime", "install", "-q", "--wheel"])
            .arg(&wheel),
        0,
    );
    eprintln!(
        "wrote the registry's wheel in {written:.1?}, installed it in {:.1?}",
        installing.elapsed()
    );
    drop(wheels);
    let install = home.path().join("mge/runtime/1.13.0");
    let recorded = record(&install);
    let expected = json!({"sass": CU101_SASS, "ptx": ["compute_75"]});
    assert_eq!(recorded["cuda_architectures"], expected);
    assert_eq!(
        recorded["files"].as_array().unwrap().len(),
        libraries.len(),
        "{recorded}"
    );
    let info = runtime_info(&mut mge_home(home.path()), 0);
    assert_eq!(info["version"], "1.13.0", "{info}");
    assert_eq!(info["files"]["state"], "verified", "{info}");
    assert_eq!(info["cuda_architectures"], expected, "{info}");
    run_expecting(mge_home(home.path()).args(RUN), 0);
}
