//! How `mge run` and `mge profile` measure: the cold start, the median's
//! confidence interval, the noise figures, several instances at once and
//! pinned threads. Nothing here asserts a duration: only that the figures are
//! there, fit together, and that outputs stay MegEngine's reference.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::Value;

const MODEL: &str = "fixtures/conv_float.mge";
const FEED: &str = "fixtures/feeds/conv_data.npy";
const REFERENCE: &str = "feat:fixtures/ref/conv_float__conv_data/feat.npy";

/// `mge run MODEL -i FEED --expect REFERENCE -q --json` with `extra`, expecting `code`.
fn run_json(extra: &[&str], code: i32) -> Value {
    let mut command = mge();
    command.args(["run", MODEL, "-i", FEED, "--expect", REFERENCE, "-q", "--json"]);
    let (stdout, _) = run_expecting(command.args(extra), code);
    json_of(&stdout)
}

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn the_cold_start_is_reported_run_by_run() {
    let report = run_json(&["--warmup", "3", "--iter", "4", "--all-times"], 0);
    let timing = &report["timing_ms"];
    assert!(timing["load"].as_f64().unwrap() > 0.0, "{timing}");
    let warmup = numbers(&timing["warmup"]);
    assert_eq!(warmup.len(), 3);
    // The first run is the first warm-up; fast-run did not run, so no profiling.
    assert_eq!(timing["first_run"].as_f64(), Some(warmup[0]));
    assert!(timing.get("profiling").is_none(), "{timing}");

    // Without warm-up, the first run is the first timed one.
    let report = run_json(&["--warmup", "0", "--iter", "3", "--all-times"], 0);
    let timing = &report["timing_ms"];
    assert!(numbers(&timing["warmup"]).is_empty());
    assert_eq!(timing["first_run"].as_f64(), Some(numbers(&timing["iterations_ms"])[0]));

    // --fake-first: the first run is the one that only allocates, before the warm-ups.
    let report = run_json(&["--warmup", "2", "--fake-first"], 0);
    assert_eq!(numbers(&report["timing_ms"]["warmup"]).len(), 2);
    assert!(report["timing_ms"]["first_run"].as_f64().is_some());
}

#[test]
fn fast_run_profiling_is_reported_apart_from_the_first_run() {
    let report = run_json(&["--fast-run", "--warmup", "1", "--iter", "2"], 0);
    let timing = &report["timing_ms"];
    assert!(timing["profiling"].as_f64().unwrap() >= 0.0, "{timing}");
    assert_eq!(timing["first_run"].as_f64(), Some(numbers(&timing["warmup"])[0]));
    assert_eq!(report["expect"][0]["passed"], true);
    // Recording the sequence, the engine runs (and profiles) while loading: no profiling apart.
    let report = run_json(&["--fast-run", "--record-comp-seq", "2", "--iter", "2"], 0);
    assert!(report["timing_ms"].get("profiling").is_none(), "{report}");
    assert_eq!(report["expect"][0]["passed"], true);
}

#[test]
fn profile_reports_the_cold_start_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = mge();
    command.args([
        "profile", MODEL, "-i", FEED, "-q", "--json", "--warmup", "2", "--iter", "2", "-o",
    ]);
    let (stdout, _) = run_expecting(command.arg(dir.path().join("t.json")), 0);
    let timing = &json_of(&stdout)["timing_ms"];
    assert!(timing["load"].as_f64().unwrap() > 0.0);
    assert_eq!(numbers(&timing["warmup"]).len(), 2);
    assert_eq!(timing["first_run"].as_f64(), Some(numbers(&timing["warmup"])[0]));
}

/// The interval's bounds are two of the runs: the 6th and 15th fastest of 20,
/// as the binomial distribution gives for 95% (checked against Python in the
/// unit tests of `runner::timing`).
#[test]
fn the_medians_confidence_interval_is_two_order_statistics() {
    let report = run_json(&["--iter", "20", "--all-times"], 0);
    let timing = &report["timing_ms"];
    let mut runs = numbers(&timing["iterations_ms"]);
    runs.sort_by(f64::total_cmp);
    assert_eq!(numbers(&timing["median_ci95"]), [runs[5], runs[14]]);
    let report = run_json(&["--iter", "5"], 0);
    assert!(report["timing_ms"]["median_ci95"].is_null());
}

/// Each timed run's CPU time beside its wall time: a forward of the stand-in
/// library that sleeps 100 ms takes them of the wall clock and next to none
/// of the CPU; several instances' runs share one process's CPU time, which
/// is no one instance's, and have none. The least of them beside their median.
#[test]
fn the_cpu_time_of_the_timed_runs_is_reported() {
    let on_stand_in = |extra: &[&str]| {
        let mut command = mge();
        command
            .env("MGE_FAULT", "slow")
            .env("MGE_FAULT_MS", "100")
            .arg("--lite-lib")
            .arg(fault_library())
            .args(["run", MODEL, "--warmup", "0", "--iter", "3", "--json", "-q"]);
        json_of(&run_expecting(command.args(extra), 0).0)["timing_ms"].clone()
    };
    let timing = on_stand_in(&[]);
    let (wall, cpu) = (
        timing["median"].as_f64().unwrap(),
        timing["cpu_median"].as_f64().unwrap(),
    );
    assert!(wall >= 100.0 && cpu >= 0.0 && cpu < wall / 2.0, "{timing}");
    let shared = on_stand_in(&["--instances", "2"]);
    assert!(
        shared.get("cpu_median").is_none() && shared.get("cpu_min").is_none(),
        "{shared}"
    );
    let report = run_json(&["--iter", "3"], 0);
    let (median, least) = (
        report["timing_ms"]["cpu_median"].as_f64().unwrap(),
        report["timing_ms"]["cpu_min"].as_f64().unwrap(),
    );
    assert!(least > 0.0 && least <= median, "{report}");
}

#[test]
fn the_noise_figures_are_in_the_json() {
    let report = run_json(&["--iter", "20"], 0);
    let noise = &report["noise"];
    assert!(noise["window_s"].as_f64().unwrap() > 0.0);
    assert!(noise["cores"].as_u64().unwrap() >= 1);
    assert!(noise["spread_percent"].as_f64().unwrap() >= 0.0);
    assert!(noise["drift_percent"].as_f64().is_some());
    // Where /sys has no cpufreq (this kind of VM) the frequency is null, never made up.
    let cpufreq = Path::new("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq").exists();
    assert_eq!(noise["cpu_mhz"].is_array(), cpufreq, "{noise}");
    for key in ["other_load_cores", "steal_percent"] {
        assert!(noise.get(key).is_some(), "{key} in {noise}");
    }
}

#[test]
fn instances_run_at_once_with_the_single_instances_outputs() {
    for share in [false, true] {
        let mut extra = vec!["--instances", "3", "--warmup", "2", "--iter", "4", "--all-times"];
        if share {
            extra.push("--share-runtime-memory");
        }
        let report = run_json(&extra, 0);
        let instances = &report["instances"];
        assert_eq!(instances["count"], 3);
        assert_eq!(instances["share_runtime_memory"], share);
        assert_eq!(instances["outputs_equal"], true, "{instances}");
        let each = instances["each"].as_array().unwrap();
        assert_eq!(each.len(), 3);
        for (index, instance) in each.iter().enumerate() {
            assert_eq!(instance["instance"], index);
            assert_eq!(instance["outputs_equal"], true);
            let timing = &instance["timing_ms"];
            assert_eq!(numbers(&timing["iterations_ms"]).len(), 4);
            assert_eq!(numbers(&timing["warmup"]).len(), 2);
            assert!(timing["load"].as_f64().unwrap() > 0.0);
            assert!(instance["throughput_per_s"].as_f64().unwrap() > 0.0);
        }
        // The run's own statistics pool every instance's runs.
        assert_eq!(report["timing_ms"]["iterations"], 12);
        assert!(report["throughput_per_s"].as_f64().unwrap() > 0.0);
        assert_eq!(report["expect"][0]["passed"], true, "{report}");
    }
}

#[test]
fn instance_options_that_cannot_work_are_refused() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["run", MODEL, "--share-runtime-memory"],
            "--share-runtime-memory shares memory between instances",
        ),
        (
            &["run", "fixtures/conv_float_tc1.mge", "--instances", "2"],
            "--instances runs copies of a network on feeds, not embedded testcases",
        ),
        (&["run", MODEL, "--instances", "65"], "65 is not in 1..=64"),
    ];
    for (args, message) in cases {
        let (_, stderr) = run_expecting(mge().args(args), 2);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

/// The first core this test may run on, as `/proc` lists it.
fn first_allowed_core() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    list.trim().split([',', '-']).next().unwrap().parse().unwrap()
}

#[test]
fn pinned_threads_are_reported_as_proc_sees_them() {
    let core = first_allowed_core().to_string();
    for extra in [&["--threads", "2"][..], &["--cpu-inplace"], &["--instances", "2"]] {
        let mut args = vec!["--cpu-cores", core.as_str(), "--iter", "2"];
        args.extend(extra);
        let report = run_json(&args, 0);
        let pinned = report["pinned_threads"].as_array().expect("pinned_threads");
        assert!(!pinned.is_empty(), "{extra:?}: {report}");
        for thread in pinned {
            assert_eq!(thread["core"].as_u64().unwrap().to_string(), core, "{thread}");
            assert!(thread.get("error").is_none(), "{thread}");
            // Read by mge from /proc/self/task/TID/status after the runs.
            assert_eq!(thread["allowed_cores"].as_str(), Some(core.as_str()), "{thread}");
        }
    }
}

/// While `mge run --cpu-cores C` runs, one of its engine threads may run on C only.
#[test]
fn a_pinned_runs_affinity_is_visible_in_proc_while_it_runs() {
    let core = first_allowed_core().to_string();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mge"))
        .current_dir(root())
        .args(["run", MODEL, "-q", "--cpu-cores", &core, "--duration", "5"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut seen = None;
    while seen.is_none() && started.elapsed() < COMMAND_TIMEOUT && child.try_wait().unwrap().is_none() {
        seen = descendants(child.id())
            .into_iter()
            .find_map(|pid| pinned_thread(pid, &core));
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let name = seen.expect("an engine thread allowed on the pinned core only");
    assert!(name.starts_with("cpu"), "{name}");
}

/// `pid`'s children, grandchildren, ...: those each of its threads started.
fn descendants(pid: u32) -> Vec<u32> {
    let threads = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten();
    let children: Vec<u32> = threads
        .map(|thread| std::fs::read_to_string(thread.path().join("children")).unwrap_or_default())
        .collect::<Vec<String>>()
        .iter()
        .flat_map(|listed| listed.split_whitespace())
        .filter_map(|child| child.parse().ok())
        .collect();
    children
        .into_iter()
        .flat_map(|child| std::iter::once(child).chain(descendants(child)))
        .collect()
}

/// The name of a thread of `pid` that may run on `core` only, if there is one.
fn pinned_thread(pid: u32, core: &str) -> Option<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    tasks.flatten().find_map(|task| {
        let status = std::fs::read_to_string(task.path().join("status")).ok()?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .map(|value| value.trim().to_string())
        };
        (field("Cpus_allowed_list:")? == core).then(|| field("Name:")).flatten()
    })
}

#[test]
fn cores_that_are_not_there_are_refused_in_one_line() {
    let (_, stderr) = run_expecting(mge().args(["run", MODEL, "--cpu-cores", "0,4095"]), 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("mge: error: --cpu-cores 0,4095: core 4095 is not one this process may run on (cores "),
        "{stderr}"
    );
    let (_, stderr) = run_expecting(mge().args(["run", MODEL, "--cpu-cores", "2-1"]), 2);
    assert!(stderr.contains("is not a list of cores"), "{stderr}");
}

/// An output of NaN alone has no min and no max: `NaN` in the table and
/// null in JSON, never `inf` and `-inf` (f64::min passes over NaN). The
/// fixture computes log(x - 2), NaN for every x of #rand(0,1).
#[test]
fn an_output_of_nan_alone_has_no_min_or_max() {
    let run = |json: bool| {
        let mut command = mge();
        command.args(["run", "fixtures/reduce_nan.mge", "-i", "data:#rand(0,1)", "--iter", "1"]);
        if json {
            command.args(["--json", "-q"]);
        }
        run_expecting(&mut command, 0).0
    };
    let output = &json_of(&run(true))["outputs"][0];
    assert_eq!(
        (output["nan"].as_u64(), output["min"].is_null(), output["max"].is_null()),
        (Some(4), true, true),
        "{output}"
    );
    let text = run(false);
    let row = text
        .lines()
        .find(|line| line.starts_with("out "))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        row.split_whitespace().skip(4).collect::<Vec<_>>(),
        ["NaN", "NaN", "NaN"],
        "{text}"
    );
}
