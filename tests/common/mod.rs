//! Shared by the integration tests: the binary, the fixtures and their manifest.
//! Expected values come from `fixtures/`, written by MegEngine's Python API
//! (`fixtures/make_fixtures.py`), never from `mge` itself.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use assert_cmd::Command;
use ndarray::ArrayD;
use ndarray_npy::ReadNpyExt;
use serde_json::Value;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The longest any one `mge` command of the tests may take: a hang in the
/// engine fails its test instead of stalling the suite.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// `mge` run from the repository root, so manifest paths resolve, with a
/// deadline. Fast-run neither reads nor keeps the cache folder's algorithm
/// cache (`MGE_NO_ALGO_CACHE`): what one test profiled never changes what
/// another measures, and the shared cache folder is not written
/// (`mge_with_algo_cache` gives a test one of its own).
pub fn mge() -> Command {
    let mut command = Command::cargo_bin("mge").expect("the mge binary is built");
    command
        .current_dir(root())
        .timeout(COMMAND_TIMEOUT)
        .env("MGE_NO_ALGO_CACHE", "1")
        // The suite may itself run on GitHub Actions: its own step summary
        // and annotations stay out of what the tests read.
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY");
    command
}

/// The Lite library of the runtime the tests run on, as `runtime info` finds it.
pub fn installed_lite_library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let (stdout, _) = run_expecting(mge().args(["runtime", "info", "--json"]), 0);
        PathBuf::from(
            json_of(&stdout)["path"]
                .as_str()
                .expect("runtime info names the library"),
        )
    })
}

/// `mge` with the algorithm cache of the cache folder `home` (the runtime
/// named by `MGE_LITE_LIB`, the one the tests run on).
pub fn mge_with_algo_cache(home: &Path) -> Command {
    let mut command = mge();
    command
        .env("MGE_HOME", home)
        .env("MGE_LITE_LIB", installed_lite_library())
        .env_remove("MGE_NO_ALGO_CACHE")
        .env_remove("MGE_RUNTIME_VERSION");
    command
}

pub fn manifest() -> Value {
    read_manifest("fixtures/manifest.json")
}

/// `fixtures/deploy_manifest.json`, of `fixtures/make_deploy_fixtures.py`.
pub fn deploy_manifest() -> Value {
    read_manifest("fixtures/deploy_manifest.json")
}

/// The entry of `deploy_manifest.json` for megenginelite's io dump of model `name`.
pub fn engine_io_dump(name: &str) -> Value {
    deploy_manifest()["io_dumps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no io dump of {name} in the deploy manifest"))
        .clone()
}

/// The values megenginelite's io dump of `fixtures/deploy/iodump` wrote
/// for var `var` of model `dump` (`deploy_manifest.json`), with its entry.
pub fn engine_dumped_var(dump: &Value, var: &str) -> (Vec<f32>, Value) {
    let entry = dump["files_sorted"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["var_name"] == var)
        .unwrap_or_else(|| panic!("no var {var} in the dump"))
        .clone();
    let raw = std::fs::read(
        root()
            .join(dump["folder"].as_str().unwrap())
            .join(entry["file"].as_str().unwrap()),
    )
    .unwrap();
    let values = raw[entry["data_offset"].as_u64().unwrap() as usize..]
        .chunks_exact(4)
        .map(|bytes| f32::from_le_bytes(bytes.try_into().unwrap()))
        .collect();
    (values, entry)
}

/// `fixtures/algo_manifest.json`, of `fixtures/make_algo_fixtures.py`: a model fast-run fails on.
pub fn algo_manifest() -> Value {
    read_manifest("fixtures/algo_manifest.json")
}

/// `fixtures/named_manifest.json`, of `fixtures/make_named_fixtures.py`: models with hostile var names.
pub fn named_manifest() -> Value {
    read_manifest("fixtures/named_manifest.json")
}

/// `sh -c SCRIPT` from the repository root with a deadline, the script's `$0`
/// the binary `mge()` starts: for what needs a shell (`ulimit`, `cd`, `>&-`).
pub fn mge_in_shell(script: &str) -> Command {
    let mut command = Command::new("sh");
    command
        .current_dir(root())
        .timeout(COMMAND_TIMEOUT)
        .arg("-c")
        .arg(script)
        .arg(mge().get_program());
    command
}

pub fn read_manifest(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).unwrap_or_else(|err| panic!("{path}: {err}"));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{path} is not JSON: {err}"))
}

pub fn entries<'a>(manifest: &'a Value, key: &str) -> &'a Vec<Value> {
    manifest[key]
        .as_array()
        .unwrap_or_else(|| panic!("manifest has no {key}"))
}

pub fn model<'a>(manifest: &'a Value, name: &str) -> &'a Value {
    entries(manifest, "models")
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("manifest has no model {name}"))
}

pub fn read_f32(path: &Path) -> ArrayD<f32> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ArrayD::<f32>::read_npy(file).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `mge` and returns stdout, failing the test with stderr unless the
/// exit code is `code`.
pub fn run_expecting(command: &mut Command, code: i32) -> (String, String) {
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("{command:?} did not finish: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        output.status.code(),
        Some(code),
        "expected exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}\n(engine tests need the runtime: run `cargo run --release -- runtime install`)"
    );
    (stdout, stderr)
}

pub fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{stdout}"))
}

/// Outputs agree with the reference to rounding, not to the bit: the engine
/// picks other kernels on other CPUs (AVX2, AVX-512) than where the fixtures were made.
pub fn assert_close(written: &ArrayD<f32>, reference: &ArrayD<f32>, what: &str) {
    assert_eq!(written.shape(), reference.shape(), "{what}: shape");
    for (a, b) in written.iter().zip(reference.iter()) {
        assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{what}: {a} vs {b}");
    }
}

/// The one way MegEngine's bundled oneDNN may end a run that reaches its
/// kernels (`--layout-transform`, `--layout nchw88`): on AMD CPUs with
/// AVX-512 it calls exit(1) from an engine thread. Asserts that `stderr`
/// (of a `-q` run) is exactly that error and its hint, besides the warning
/// of more `--threads` than this machine has cores.
pub fn assert_onednn_exit(stderr: &str) {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| !line.starts_with("warning: --threads "))
        .collect();
    assert_eq!(lines.len(), 2, "the error and its hint, nothing else:\n{stderr}");
    assert!(
        lines[0].starts_with("mge: error: the engine ended the process with exit(1) from its thread '")
            && lines[0].ends_with("it said last: 'bad err=45 in Xbyak::Error'"),
        "{stderr}"
    );
    assert!(lines[1].starts_with("hint: "), "{stderr}");
}

/// Runs a `-q` command that reaches oneDNN's kernels. It may end in exactly
/// two ways on any CPU: exit 0 (its stdout is returned), or the oneDNN exit
/// (`None`).
pub fn run_or_onednn_exit(command: &mut Command) -> Option<String> {
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("{command:?} did not finish: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => Some(stdout),
        Some(2) => {
            assert_onednn_exit(&stderr);
            None
        }
        code => panic!("{command:?}: exit {code:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"),
    }
}

/// A stand-in for the Lite library that fails as `MGE_FAULT` says
/// (`tests/faults/fault_lite.c`), built once per test binary with the C compiler.
pub fn fault_library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| c_library("fault_lite", "tests/faults/fault_lite.c", 0))
}

/// The extern operator `mge_test_scale_bias` (`tests/extern_opr/scale_bias_opr.c`,
/// MegEngine's `extern_c_opr.h` ABI), built once per test binary.
pub fn extern_operator_library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| c_library("scale_bias_opr", "tests/extern_opr/scale_bias_opr.c", 2))
}

/// A library whose constructor writes the file `MGE_TEST_PLANTED` names
/// (`tests/runtime/planted_lite.c`): planted where no runtime may come from.
pub fn planted_library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| c_library("planted_lite", "tests/runtime/planted_lite.c", 0))
}

/// A folder holding a stand-in for the NVIDIA driver's `libcuda.so.1`
/// (`tests/faults/fake_libcuda.c`: the GPUs `MGE_FAKE_GPUS` lists), for
/// `LD_LIBRARY_PATH`, where the loader looks before the system's driver.
pub fn fake_cuda_driver() -> &'static Path {
    static FOLDER: OnceLock<PathBuf> = OnceLock::new();
    FOLDER.get_or_init(|| {
        let folder = out_dir().join("fake_cuda");
        build_c("tests/faults/fake_libcuda.c", &folder.join("libcuda.so.1"), 2, &[]);
        folder
    })
}

/// A folder whose `libcuda.so.1` cannot be loaded (it needs a library that is
/// not there): no NVIDIA driver for `LD_LIBRARY_PATH`, on any machine.
pub fn unloadable_cuda_driver() -> &'static Path {
    static FOLDER: OnceLock<PathBuf> = OnceLock::new();
    FOLDER.get_or_init(|| {
        let folder = out_dir().join("unloadable_cuda");
        let needed = tempfile::tempdir().unwrap();
        build_c(
            "tests/faults/gencode_engine.c",
            &needed.path().join("libmge_absent_dependency.so"),
            0,
            &[],
        );
        let link = format!("-L{}", needed.path().display());
        build_c(
            "tests/faults/fake_libcuda.c",
            &folder.join("libcuda.so.1"),
            0,
            &[&link, "-Wl,--no-as-needed", "-lmge_absent_dependency"],
        );
        folder
    })
}

/// A stand-in for the engine library of MegEngine's CUDA 11.8 build
/// (`tests/faults/gencode_engine.c`: only its `-gencode` string).
pub fn gencode_engine_library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| c_library("gencode_engine", "tests/faults/gencode_engine.c", 0))
}

fn out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// `lib<name>.so` built from `source` with the C compiler.
fn c_library(name: &str, source: &str, opt_level: u32) -> PathBuf {
    let library = out_dir().join(format!("lib{name}.so"));
    build_c(source, &library, opt_level, &[]);
    library
}

/// The shared library `output` built from `source` with the C compiler (the
/// `cc` crate), `extra` arguments after the source.
fn build_c(source: &str, output: &Path, opt_level: u32, extra: &[&str]) {
    // The MegEngine runtime exists for Linux only.
    let target = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .opt_level(opt_level)
        .target(&target)
        .host(&target)
        .get_compiler();
    std::fs::create_dir_all(output.parent().unwrap()).unwrap();
    // Built under a name of this process's, then renamed: test binaries
    // run side by side must not load a half-written library.
    let mut building = output.as_os_str().to_owned();
    building.push(format!(".{}", std::process::id()));
    let building = PathBuf::from(building);
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-pthread", "-o"])
        .arg(&building)
        .arg(root().join(source))
        .args(extra)
        .status()
        .expect("the C compiler runs");
    assert!(status.success(), "building {source} failed");
    std::fs::rename(&building, output).expect("the library moves into place");
}

/// Sends `SIG<signal>` (`INT`, `TERM`, `HUP`) to `child`, which must then end
/// within `within` with exit code 128 + the signal, saying it was interrupted;
/// returns what it printed on stderr (piped).
pub fn interrupt(child: &mut std::process::Child, signal: &str, within: Duration) -> String {
    let sent = std::process::Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > within {
            let _ = child.kill();
            panic!("mge did not stop within {within:?} of SIG{signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let code = match signal {
        "INT" => 130,
        "TERM" => 143,
        "HUP" => 129,
        other => panic!("no exit code known for SIG{other}"),
    };
    assert_eq!(status.code(), Some(code), "SIG{signal}:\n{stderr}");
    assert!(stderr.contains(&format!("mge: interrupted (SIG{signal})")), "{stderr}");
    stderr
}

/// The paths in `dir`, which should be none.
pub fn left_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .collect()
}

/// One file of a wheel the tests write: its bytes, or a file copied in.
pub enum WheelFile<'a> {
    Bytes(&'a [u8]),
    Copy(&'a Path),
}

/// Writes `dir/MegEngine-VERSION-PY-PY-manylinux2014_x86_64.whl` as pip
/// builds one (a zip with the package's `.dist-info`), its files stored
/// uncompressed; returns its path.
pub fn write_wheel(dir: &Path, version: &str, python: &str, files: &[(&str, WheelFile)]) -> PathBuf {
    use std::io::Write;
    let path = dir.join(format!(
        "MegEngine-{version}-{python}-{python}-manylinux2014_x86_64.whl"
    ));
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let info = format!("megengine-{version}.dist-info");
    let metadata = format!("Metadata-Version: 2.1\nName: MegEngine\nVersion: {version}\n\nMegEngine's description.\n");
    let wheel = format!("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {python}-{python}-manylinux2014_x86_64\n");
    let dist_info: [(String, WheelFile); 3] = [
        (format!("{info}/METADATA"), WheelFile::Bytes(metadata.as_bytes())),
        (format!("{info}/WHEEL"), WheelFile::Bytes(wheel.as_bytes())),
        (format!("{info}/RECORD"), WheelFile::Bytes(b"")),
    ];
    let all = files
        .iter()
        .map(|(name, file)| (*name, file))
        .chain(dist_info.iter().map(|(name, file)| (name.as_str(), file)));
    for (name, file) in all {
        zip.start_file(name, stored).unwrap();
        match file {
            WheelFile::Bytes(bytes) => zip.write_all(bytes).unwrap(),
            WheelFile::Copy(source) => {
                std::io::copy(&mut std::fs::File::open(source).unwrap(), &mut zip).unwrap();
            }
        }
    }
    zip.finish().unwrap();
    path
}

/// The Lite library of MegEngine's wheel for CPython 3.10, the registry's.
pub const LITE_IN_WHEEL: &str = "megenginelite/libs/liblite_shared_whl.cpython-310-x86_64-linux-gnu.so";

/// The string of `-gencode` flags the registry's MegEngine 1.13.0 carries
/// (its CUDA 10.1 build), as `strings` shows it in the library.
pub const CU101_GENCODE: &str = " -gencode arch=compute_52,code=sm_52 -gencode arch=compute_60,code=sm_60 -gencode arch=compute_61,code=sm_61 -gencode arch=compute_70,code=sm_70 -gencode arch=compute_75,code=sm_75 -gencode arch=compute_75,code=compute_75";

/// A wheel of MegEngine `version` laid out as a CUDA 11 build is (cuDNN,
/// cuBLAS and nvrtc beside the engine, a Lite library named for CPython 3.8),
/// with files that are not the runtime's beside them. Its Lite library is the
/// fault library, its engine `engine`.
pub fn stand_in_wheel(dir: &Path, version: &str, engine: WheelFile) -> PathBuf {
    let lite = std::fs::read(fault_library()).unwrap();
    write_wheel(
        dir,
        version,
        "cp38",
        &[
            (STAND_IN_LITE, WheelFile::Bytes(&lite)),
            ("megengine/core/lib/libmegengine_shared.so", engine),
            ("megengine/core/lib/libcudnn.so.8", WheelFile::Bytes(b"cudnn")),
            ("megengine/core/lib/libcublasLt.so.11", WheelFile::Bytes(b"cublasLt")),
            (
                "megengine/core/lib/libnvrtc-builtins.so.11.1",
                WheelFile::Bytes(b"nvrtc-builtins"),
            ),
            ("megenginelite/libs/libextra_plugin.so", WheelFile::Bytes(b"plugin")),
            // Not the runtime's: Python, headers, a subfolder's library.
            ("megengine/__init__.py", WheelFile::Bytes(b"import sys\n")),
            (
                "megengine/core/include/megbrain/custom.h",
                WheelFile::Bytes(b"#pragma once\n"),
            ),
            ("megengine/core/lib/ucx/libucm.so.0", WheelFile::Bytes(b"ucm")),
            ("megenginelite/network.py", WheelFile::Bytes(b"# Lite's Python\n")),
        ],
    )
}

/// The Lite library of `stand_in_wheel`, and the runtime files it holds.
pub const STAND_IN_LITE: &str = "megenginelite/libs/liblite_shared_whl.cpython-38-x86_64-linux-gnu.so";
pub const STAND_IN_RUNTIME: [&str; 6] = [
    STAND_IN_LITE,
    "megengine/core/lib/libmegengine_shared.so",
    "megengine/core/lib/libcudnn.so.8",
    "megengine/core/lib/libcublasLt.so.11",
    "megengine/core/lib/libnvrtc-builtins.so.11.1",
    "megenginelite/libs/libextra_plugin.so",
];

/// `mge` with `home` as its cache folder and no runtime given by the environment.
pub fn mge_home(home: &Path) -> Command {
    let mut command = mge();
    command
        .env("MGE_HOME", home)
        .env_remove("MGE_LITE_LIB")
        .env_remove("MGE_RUNTIME_VERSION");
    command
}

/// `model` (a graph, or a `mgbtest0` container) with every name of its model
/// graph that holds `needle` holding `long` in its place. Each such
/// flatbuffer string is written anew at the end of the graph and the offsets
/// that pointed to it point there (a flatbuffer's offsets point forward);
/// the graph's size prefix follows. Names of any length from a fixture of
/// MegEngine's, which the engine loads as it loads the fixture.
pub fn with_long_names(model: &[u8], needle: &[u8], long: &[u8]) -> Vec<u8> {
    let u32_at = |bytes: &[u8], at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let start = if model.starts_with(b"mgbtest0") { 12 } else { 0 };
    let end = start + 4 + u32_at(model, start);
    let mut graph = model[start + 4..end].to_vec();
    let mut strings = Vec::new();
    let mut from = 0;
    while let Some(found) = graph[from..].windows(needle.len()).position(|w| w == needle) {
        let at = from + found;
        // The string holding it: the 4-aligned length before it that ends past it, at a NUL.
        let string = (0..=at.saturating_sub(4) / 4).rev().map(|word| word * 4).find(|&s| {
            let length = u32_at(&graph, s);
            s + 4 + length >= at + needle.len() && s + 4 + length < graph.len() && graph[s + 4 + length] == 0
        });
        strings.extend(string.map(|s| (s, u32_at(&graph, s))));
        from = at + needle.len();
    }
    strings.sort_unstable();
    strings.dedup();
    assert!(
        !strings.is_empty(),
        "no name holds {:?}",
        String::from_utf8_lossy(needle)
    );
    for (string, length) in strings {
        let text = &graph[string + 4..string + 4 + length];
        let mut renamed = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.windows(needle.len()).position(|w| w == needle) {
            renamed.extend_from_slice(&rest[..at]);
            renamed.extend_from_slice(long);
            rest = &rest[at + needle.len()..];
        }
        renamed.extend_from_slice(rest);
        graph.resize(graph.len().next_multiple_of(4), 0);
        let moved = graph.len();
        graph.extend_from_slice(&(renamed.len() as u32).to_le_bytes());
        graph.extend_from_slice(&renamed);
        graph.push(0);
        for field in (0..string).step_by(4) {
            if field + u32_at(&graph, field) == string {
                graph[field..field + 4].copy_from_slice(&((moved - field) as u32).to_le_bytes());
            }
        }
    }
    graph.resize(graph.len().next_multiple_of(8), 0);
    let mut edited = model[..start].to_vec();
    edited.extend_from_slice(&(graph.len() as u32).to_le_bytes());
    edited.extend_from_slice(&graph);
    edited.extend_from_slice(&model[end..]);
    edited
}
