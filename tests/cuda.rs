//! `--device cuda[:ID]`'s pre-flight in every command that loads a model:
//! the GPU's capability from the NVIDIA driver against the runtime's CUDA
//! architectures, before the engine loads. No GPU is needed: the driver is a
//! stand-in (`tests/faults/fake_libcuda.c`) found through `LD_LIBRARY_PATH`,
//! reporting the GPUs `MGE_FAKE_GPUS` names.

use std::path::Path;

use serde_json::json;

use crate::common::*;

const H100: &str = "NVIDIA H100 80GB HBM3,9.0,85520809984";
const T4: &str = "Tesla T4,7.5,15843721216";
const A10: &str = "NVIDIA A10,8.6,23836033024";

/// Every command that loads a model, on `device`, writing under `out`.
fn every_command(device: &str, out: &Path) -> Vec<Vec<String>> {
    let model = "fixtures/conv_float.mge";
    let at = |name: &str| out.join(name).display().to_string();
    let lines: [&[&str]; 7] = [
        &["run", model, "--iter", "1"],
        &["check", "fixtures/conv_float_tc1.mge"],
        &["profile", model, "--iter", "1", "-o", &at("trace.json")],
        &["dump", model, "--outputs", &at("outputs")],
        &["compare", model, "fixtures/scale2.mge"],
        &["tune", model, "--budget", "5"],
        &["pack-testcases", model, "-o", &at("packed.mge")],
    ];
    lines
        .iter()
        .map(|line| {
            let mut words: Vec<String> = line.iter().map(|word| word.to_string()).collect();
            words.extend(["--device".to_string(), device.to_string()]);
            words
        })
        .collect()
}

/// `mge ARGS` with the stand-in driver reporting `gpus` ("" for none).
fn with_gpus(mut command: assert_cmd::Command, gpus: &str) -> assert_cmd::Command {
    command
        .env("LD_LIBRARY_PATH", fake_cuda_driver())
        .env("MGE_FAKE_GPUS", gpus)
        .env_remove("CUDA_VISIBLE_DEVICES");
    command
}

/// A cache folder holding the stand-in of MegEngine's CUDA 11.8 build: the
/// fault library with the -gencode string of sm_61 to sm_89.
fn cu118_home() -> tempfile::TempDir {
    let (home, wheels) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let wheel = stand_in_wheel(wheels.path(), "1.13.0+cu118", WheelFile::Copy(gencode_engine_library()));
    run_expecting(
        mge_home(home.path())
            .args(["runtime", "install", "-q", "--wheel"])
            .arg(&wheel),
        0,
    );
    home
}

/// Runs `args` expecting exit 2 and one line of stderr; returns that line.
fn one_line(command: &mut assert_cmd::Command) -> String {
    let (_, stderr) = run_expecting(command, 2);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{command:?}: one line, not:\n{stderr}");
    lines[0].to_string()
}

/// Nothing was written where the commands write.
fn assert_empty(out: &Path) {
    assert!(left_in(out).is_empty(), "{:?}", left_in(out));
}

#[test]
fn a_gpu_the_runtime_has_no_kernels_for_is_refused_in_one_line_before_the_engine_loads() {
    let home = cu118_home();
    let out = tempfile::tempdir().unwrap();
    // Were the Lite library loaded, it would abort at once.
    let fault = |command: assert_cmd::Command, gpus: &str| {
        let mut command = with_gpus(command, gpus);
        command.env("MGE_FAULT", "abort").env("MGE_FAULT_AT", "open");
        command
    };
    for (line, on_t4) in every_command("cuda", out.path())
        .into_iter()
        .zip(every_command("cuda:1", out.path()))
    {
        assert_eq!(
            one_line(fault(mge_home(home.path()), H100).args(&line)),
            "mge: error: --device cuda:0: NVIDIA H100 80GB HBM3 is sm_90, and MegEngine 1.13.0+cu118 has kernels for \
             sm_61 sm_70 sm_75 sm_80 sm_86 sm_89 only; no MegEngine release has kernels for sm_90: build it from \
             source with -DMGE_CUDA_GENCODE=\"-gencode arch=compute_90,code=sm_90\" and give its Lite library with \
             --lite-lib (docs/runtime.md: GPUs and MegEngine builds), or use --device cpu",
            "{line:?}"
        );
        assert_empty(out.path());
        // A GPU it has kernels for passes, and then the library loads (and aborts).
        let output = fault(mge_home(home.path()), &format!("{H100};{T4}"))
            .args(&on_t4)
            .output()
            .unwrap();
        // check says so of the model, on stdout; its worker, which loads the
        // library as it starts, may die before or after it took the model.
        let said = String::from_utf8_lossy(&output.stderr) + String::from_utf8_lossy(&output.stdout);
        assert_ne!(output.status.code(), Some(0), "{on_t4:?}: {said}");
        assert!(!said.contains("kernels for"), "{on_t4:?}: {said}");
        assert!(
            said.contains("fault: aborting")
                || said.contains("ERROR: the worker process ended before it took the model"),
            "{on_t4:?}: {said}"
        );
    }
}

#[test]
fn the_registrys_runtime_is_refused_on_a_newer_gpu_and_loads_on_a_turing_one() {
    let run = ["run", "fixtures/conv_float.mge", "--iter", "1", "--device", "cuda"];
    let refused = one_line(with_gpus(mge(), H100).args(run));
    assert!(
        refused.starts_with("mge: error: --device cuda:0: NVIDIA H100 80GB HBM3 is sm_90, and ")
            && refused.contains(
                " has kernels for sm_52 sm_60 sm_61 sm_70 sm_75 only; no MegEngine release has kernels for sm_90"
            ),
        "{refused}"
    );
    // On sm_75 the engine loads, and meets a driver that is no driver.
    let (_, stderr) = run_expecting(with_gpus(mge(), T4).args(run), 2);
    assert!(!stderr.contains("kernels for") && stderr.contains("engine"), "{stderr}");
}

/// An installed runtime that runs on the GPU is the way out; else MegEngine's build that does.
#[test]
fn the_way_out_names_an_installed_runtime_or_the_build_to_install() {
    let home = cu118_home();
    let engine = format!("{CU101_GENCODE}\0");
    let wheels = tempfile::tempdir().unwrap();
    let cu101 = stand_in_wheel(wheels.path(), "1.13.0", WheelFile::Bytes(engine.as_bytes()));
    let run = ["run", "fixtures/conv_float.mge", "--iter", "1", "--device", "cuda"];
    run_expecting(
        mge_home(home.path())
            .args(["runtime", "install", "-q", "--wheel"])
            .arg(&cu101),
        0,
    );
    let line = one_line(
        with_gpus(mge_home(home.path()), A10)
            .env("MGE_RUNTIME_VERSION", "1.13.0")
            .args(run),
    );
    assert_eq!(
        line,
        "mge: error: --device cuda:0: NVIDIA A10 is sm_86, and MegEngine 1.13.0 has kernels for sm_52 sm_60 sm_61 \
         sm_70 sm_75 only; MegEngine 1.13.0+cu118 is installed and runs on it: add --runtime-version 1.13.0+cu118 \
         (or set MGE_RUNTIME_VERSION)"
    );
    let lite = home.path().join("mge/runtime/1.13.0").join(STAND_IN_LITE);
    let line = one_line(
        with_gpus(mge_home(home.path()), A10)
            .arg("--lite-lib")
            .arg(&lite)
            .args(run),
    );
    assert!(
        line.contains("drop --lite-lib and add --runtime-version 1.13.0+cu118"),
        "{line}"
    );
    std::fs::remove_dir_all(home.path().join("mge/runtime/1.13.0+cu118")).unwrap();
    let line = one_line(with_gpus(mge_home(home.path()), A10).args(run));
    assert!(
        line.ends_with(
            "MegEngine's cu118 builds run on it: `mge runtime install --find-links https://megengine.org.cn/whl/mge.html \
             --version 1.13.0+cu118` (docs/runtime.md: GPUs and MegEngine builds)"
        ),
        "{line}"
    );
}

#[test]
fn no_driver_no_gpu_and_no_such_gpu_are_the_same_line_from_every_command() {
    let home = cu118_home();
    let out = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, Option<&str>, &str); 4] = [
        (
            "cuda",
            "",
            None,
            "mge: error: --device cuda:0: the NVIDIA driver sees no GPU; use --device cpu",
        ),
        (
            "cuda:2",
            &format!("{T4};{A10}"),
            None,
            "mge: error: --device cuda:2: there are 2 GPUs, cuda:0 to cuda:1",
        ),
        (
            "cuda:1",
            T4,
            None,
            "mge: error: --device cuda:1: there is one GPU, cuda:0",
        ),
        (
            "cuda",
            T4,
            Some("999"),
            "mge: error: --device cuda:0: the NVIDIA driver failed: cuInit returned 999 (CUDA_ERROR_UNKNOWN); \
             nvidia-smi may tell why, or use --device cpu",
        ),
    ];
    for (device, gpus, cuinit, expected) in cases {
        for line in every_command(device, out.path()) {
            let mut command = with_gpus(mge_home(home.path()), gpus);
            if let Some(code) = cuinit {
                command.env("MGE_FAKE_CUINIT", code);
            }
            assert_eq!(one_line(command.args(&line)), expected, "{line:?}");
            assert_empty(out.path());
        }
    }
    for line in every_command("cuda", out.path()) {
        let mut command = mge_home(home.path());
        command.env("LD_LIBRARY_PATH", unloadable_cuda_driver());
        assert_eq!(
            one_line(command.args(&line)),
            "mge: error: --device cuda:0: no NVIDIA driver here (libcuda.so.1 cannot be loaded); use --device cpu",
            "{line:?}"
        );
        assert_empty(out.path());
    }
}

/// The CPU never asks the driver; a GPU asks it once, in the process that
/// loads the engine (which then finds it initialised).
#[test]
fn the_pre_flight_costs_the_cpu_nothing_and_a_gpu_one_cuinit() {
    let home = cu118_home();
    let log = tempfile::tempdir().unwrap();
    let calls = log.path().join("cuinit.log");
    let run = ["run", "fixtures/conv_float.mge", "--iter", "1", "-q"];
    run_expecting(
        with_gpus(mge_home(home.path()), T4)
            .env("MGE_FAKE_CUINIT_LOG", &calls)
            .args(run),
        0,
    );
    assert!(!calls.exists(), "a CPU run asked the driver");
    // The stand-in engine sees no GPU of its own: the run ends there, after the pre-flight.
    let (_, stderr) = run_expecting(
        with_gpus(mge_home(home.path()), T4)
            .env("MGE_FAKE_CUINIT_LOG", &calls)
            .args(run)
            .args(["--device", "cuda"]),
        2,
    );
    assert!(stderr.contains("no CUDA device is visible to MegEngine"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), "cuInit\n");
}

#[test]
fn runtime_info_lists_each_gpu_and_whether_the_runtime_runs_on_it() {
    let (stdout, _) = run_expecting(
        with_gpus(mge(), &format!("{H100};{T4}")).args(["runtime", "info", "--json"]),
        0,
    );
    let info = json_of(&stdout);
    assert_eq!(
        info["cuda_architectures"],
        json!({"sass": ["sm_52", "sm_60", "sm_61", "sm_70", "sm_75"], "ptx": ["compute_75"]})
    );
    assert_eq!(info["cuda_driver"], json!({"state": "ready", "cuda_version": "12.2"}));
    assert_eq!(
        info["gpus"],
        json!([
            {"index": 0, "name": "NVIDIA H100 80GB HBM3", "sm": "sm_90", "compute_capability": "9.0",
             "memory_bytes": 85520809984u64, "usable": false},
            {"index": 1, "name": "Tesla T4", "sm": "sm_75", "compute_capability": "7.5",
             "memory_bytes": 15843721216u64, "usable": true},
        ])
    );
    let (stdout, _) = run_expecting(with_gpus(mge(), &format!("{H100};{T4}")).args(["runtime", "info"]), 0);
    for line in [
        "cuda kernels  sm_52 sm_60 sm_61 sm_70 sm_75 (PTX compute_75)\n",
        "cuda driver   CUDA 12.2\n",
        "gpu 0         NVIDIA H100 80GB HBM3, sm_90, 79.6 GiB: this runtime cannot run on it (no sm_90 kernels)\n",
        "gpu 1         Tesla T4, sm_75, 14.8 GiB: this runtime runs on it\n",
    ] {
        assert!(stdout.contains(line), "{line}in:\n{stdout}");
    }
    let (stdout, _) = run_expecting(with_gpus(mge(), "").args(["runtime", "info"]), 0);
    assert!(stdout.contains("cuda driver   CUDA 12.2, no GPU visible\n"), "{stdout}");
    let mut command = mge();
    command.env("LD_LIBRARY_PATH", unloadable_cuda_driver());
    let info = json_of(&run_expecting(command.args(["runtime", "info", "--json"]), 0).0);
    assert_eq!(info["cuda_driver"]["state"], "absent", "{info}");
    assert_eq!(info["gpus"], json!([]));
}
