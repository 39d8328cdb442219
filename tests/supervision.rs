//! The engine's ways of taking a process down, on any CPU: a stand-in Lite
//! library (`tests/faults/fault_lite.c`, built here with the C compiler) exits
//! from an engine thread into a deadlocking exit handler, aborts, crashes or
//! hangs, where MegEngine 1.13 does so only on some CPUs. Each must end `mge`
//! with exit 2 and one line within seconds, and leave no files behind.

use std::time::{Duration, Instant};

use crate::common::{fault_library, mge, root, run_expecting};

/// Every fault must be reported well within this.
const PROMPTLY: Duration = Duration::from_secs(10);

/// `mge ARGS` on the fault library, failing with `fault` at `at` (`load` or `forward`).
fn mge_failing(fault: &str, at: &str, args: &[&str]) -> assert_cmd::Command {
    let mut command = mge();
    command
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", fault)
        .env("MGE_FAULT_AT", at)
        .args(args);
    command
}

/// Runs `command`, which must exit 2 promptly with one error line holding each of `expected`.
fn fails_promptly(command: &mut assert_cmd::Command, expected: &[&str]) -> String {
    let started = Instant::now();
    let (stdout, stderr) = run_expecting(command, 2);
    let took = started.elapsed();
    assert!(took < PROMPTLY, "{command:?} took {took:?}\nstderr:\n{stderr}");
    for text in expected {
        assert!(stderr.contains(text), "{command:?}: stderr lacks {text:?}:\n{stderr}");
    }
    assert_eq!(stderr.matches("mge: error").count(), 1, "one error line:\n{stderr}");
    stdout
}

const ENGINE_EXIT: &[&str] = &[
    "the engine ended the process with exit(1) from its thread",
    "it said last: 'bad err=45 in Xbyak::Error'",
    "hint: the engine's bundled oneDNN kernels fail on this CPU",
    "run without them (--layout nchw44 and --fast-run work here)",
];

/// The engine's worker threads at each `--threads`: the exit comes from the
/// first, after every handler the tool could have registered (see the library).
const THREADS: [(&str, &str); 3] = [("1", "'cpu0:0'"), ("2", "'multithread2:0'"), ("4", "'multithread4:0'")];

#[test]
fn an_exit_from_an_engine_thread_is_reported_not_a_hang_at_any_thread_count() {
    for (threads, thread) in THREADS {
        let dir = tempfile::tempdir().unwrap();
        let outputs = dir.path().join("out");
        let mut command = mge_failing("exit", "forward", &["run", "fixtures/conv_float.mge", "-q"]);
        command.args(["--threads", threads]).arg("--outputs").arg(&outputs);
        fails_promptly(&mut command, &[ENGINE_EXIT, &["during the warm-up", thread]].concat());
        assert!(!outputs.exists(), "no output folder after a failed run");

        let mut loading = mge_failing("exit", "load", &["run", "fixtures/conv_float.mge", "-q"]);
        loading.args(["--threads", threads]);
        let expected = [ENGINE_EXIT, &["while the engine loaded the model", thread]].concat();
        fails_promptly(&mut loading, &expected);
    }
}

#[test]
fn the_engines_last_words_appear_only_in_the_error_line_without_verbose() {
    let mut command = mge_failing(
        "exit",
        "load",
        &["run", "fixtures/conv_float.mge", "-q", "--threads", "2"],
    );
    let started = Instant::now();
    let (_, stderr) = run_expecting(&mut command, 2);
    assert!(started.elapsed() < PROMPTLY);
    crate::common::assert_onednn_exit(&stderr);

    let mut verbose = mge_failing(
        "exit",
        "load",
        &["run", "fixtures/conv_float.mge", "-v", "--threads", "2"],
    );
    let (_, stderr) = run_expecting(&mut verbose, 2);
    assert!(
        stderr.lines().any(|line| line == "bad err=45 in Xbyak::Error"),
        "-v shows the engine's own line:\n{stderr}"
    );
}

#[test]
fn the_hint_fits_the_command_that_failed() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("transformed.mge");
    let mut command = mge_failing("exit", "load", &["dump", "fixtures/conv_float.mge", "-q"]);
    command.arg("--layout-transform-model").arg(&model);
    let (_, stderr) = run_expecting(&mut command, 2);
    assert!(
        stderr.contains("hint: the engine's global layout transform runs oneDNN kernels that fail on this CPU")
            && stderr.contains("make the layout-transformed model on another CPU"),
        "{stderr}"
    );
    assert!(!stderr.contains("--fast-run"), "{stderr}");
    assert!(!model.exists());
}

#[test]
fn crashes_in_the_engine_are_reported_with_their_signal_and_phase() {
    for (fault, signal) in [("segv", "SIGSEGV"), ("abort", "SIGABRT")] {
        let crashed = format!("the engine crashed ({signal}) during the timed runs");
        let mut command = mge_failing(fault, "forward", &["run", "fixtures/conv_float.mge", "--warmup", "0"]);
        fails_promptly(&mut command, &[&crashed, "it said last: 'fault: "]);
    }
}

#[test]
fn info_survives_an_engine_that_crashes_on_the_model() {
    let mut command = mge_failing("segv", "load", &["info", "fixtures/conv_float.mge"]);
    fails_promptly(
        &mut command,
        &["the engine crashed (SIGSEGV) while the engine loaded the model"],
    );
}

#[test]
fn a_hang_ends_at_the_timeout() {
    let mut command = mge_failing("hang", "load", &["run", "fixtures/conv_float.mge", "--timeout", "1"]);
    fails_promptly(
        &mut command,
        &["stopped after --timeout 1s while the engine loaded the model"],
    );
}

#[test]
fn profile_reports_the_fault_and_writes_no_trace() {
    for (threads, thread) in THREADS {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("run.trace.json");
        let mut command = mge_failing("exit", "forward", &["profile", "fixtures/conv_float.mge", "-q", "-o"]);
        command.arg(&trace).args(["--threads", threads]);
        fails_promptly(&mut command, &[ENGINE_EXIT, &[thread]].concat());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
    }
}

#[test]
fn dump_reports_the_fault_and_writes_nothing() {
    for (threads, thread) in THREADS {
        let dir = tempfile::tempdir().unwrap();
        let mut command = mge_failing("exit", "forward", &["dump", "fixtures/conv_float.mge", "-q", "--io"]);
        command
            .arg(dir.path().join("io"))
            .arg("--outputs")
            .arg(dir.path().join("out"))
            .args(["--threads", threads]);
        fails_promptly(&mut command, &[ENGINE_EXIT, &[thread]].concat());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
    }
}

/// Runs `command` (a `check`), which must fail its check (exit 1) promptly.
fn check_fails_promptly(command: &mut assert_cmd::Command) -> String {
    let started = Instant::now();
    let (stdout, stderr) = run_expecting(command, 1);
    let took = started.elapsed();
    assert!(took < PROMPTLY, "{command:?} took {took:?}\nstderr:\n{stderr}");
    stdout
}

#[test]
fn check_reports_each_model_the_engine_took_down_and_writes_its_junit() {
    for (jobs, (threads, thread)) in [("1", THREADS[1]), ("2", THREADS[1]), ("2", THREADS[2])] {
        let dir = tempfile::tempdir().unwrap();
        let junit = dir.path().join("report.xml");
        let mut command = mge_failing(
            "exit",
            "forward",
            &[
                "check",
                "fixtures/conv_float_tc1.mge",
                "fixtures/two_inputs_tc2.mge",
                "-j",
                jobs,
                "--threads",
                threads,
            ],
        );
        command.arg("--junit").arg(&junit);
        let stdout = check_fails_promptly(&mut command);
        for model in ["fixtures/conv_float_tc1.mge", "fixtures/two_inputs_tc2.mge"] {
            let line = stdout
                .lines()
                .find(|line| line.starts_with(model))
                .unwrap_or_else(|| panic!("-j {jobs}: no line for {model}:\n{stdout}"));
            assert!(
                line.contains("ERROR: the engine ended the process with exit(1)") && line.contains(thread),
                "{line}"
            );
            assert!(line.contains("in testcase #0"), "{line}");
        }
        assert!(stdout.contains("0 passed, 2 failed"), "{stdout}");
        let xml = std::fs::read_to_string(&junit).expect("the JUnit report is written");
        assert_eq!(xml.matches("<error").count(), 2, "{xml}");
    }
}

#[test]
fn check_times_out_per_model_and_goes_on() {
    let mut command = mge_failing(
        "hang",
        "forward",
        &[
            "check",
            "fixtures/conv_float_tc1.mge",
            "fixtures/two_inputs_tc2.mge",
            "-j",
            "2",
            "--timeout",
            "1",
        ],
    );
    let stdout = check_fails_promptly(&mut command);
    assert_eq!(
        stdout
            .matches("ERROR: stopped after --timeout 1s in testcase #0")
            .count(),
        2,
        "{stdout}"
    );
}

/// Ctrl-C, `kill`, and a closed terminal (SIGHUP) all stop the engine's
/// process and remove its temporary files.
#[test]
fn an_interrupt_stops_the_engine_and_leaves_no_temporary_files() {
    for signal in ["INT", "TERM", "HUP"] {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mge"))
            .current_dir(root())
            .env("MGE_LITE_LIB", fault_library())
            .env("MGE_FAULT", "hang")
            .env("TMPDIR", tmp.path())
            .args(["profile", "fixtures/conv_float.mge", "-q", "-o"])
            .arg(tmp.path().join("run.trace.json"))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("mge starts");
        // Hanging in the engine by now, with the profiler's file in the child's temporary folder.
        std::thread::sleep(Duration::from_secs(1));
        crate::common::interrupt(&mut child, signal, PROMPTLY);
        let left = crate::common::left_in(tmp.path());
        assert!(left.is_empty(), "SIG{signal}: left behind: {left:?}");
    }
}

/// `mge tune --json` on the fault library; returns the rows by their options.
/// Every forward sleeps 2 ms (conv_float.mge lists the var `data`): steady
/// trials that cost no CPU. On a forward that does nothing a trial was half a
/// second of clock reads, and a candidate that won the search by their noise
/// cost some 30 confirming rounds of them.
fn tune_rows(fault: &str, only_with: &str, args: &[&str]) -> (serde_json::Value, Duration) {
    let mut command = mge();
    command
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", fault)
        .env("MGE_FAULT_ONLY_WITH", only_with)
        .env("MGE_FAULT_SLOW_VAR", "data")
        .env("MGE_FAULT_MS", "2")
        .args(["tune", "fixtures/conv_float.mge", "--json"])
        .args(args);
    let started = Instant::now();
    let (stdout, _) = run_expecting(&mut command, 0);
    (crate::common::json_of(&stdout), started.elapsed())
}

fn row<'a>(report: &'a serde_json::Value, options: &str) -> &'a serde_json::Value {
    report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["options"] == options)
        .unwrap_or_else(|| panic!("no candidate {options}: {report:#}"))
}

/// The engine's exit is seen as the candidate's crash, with the engine's
/// words, not waited out to the candidate's deadline (which would make it
/// `timed_out`), whatever the machine's speed. At 4 threads, more than a CI
/// runner's cores, the exit comes from a pool whose workers spin; the exit
/// from each thread count's first worker is the `run` test's above.
#[test]
fn tune_lists_a_candidate_that_takes_the_engine_down_and_goes_on() {
    let (report, _) = tune_rows("exit", "layout-transform", &["--budget", "60", "--threads", "4"]);
    let crashed = row(&report, "--layout-transform");
    assert_eq!(crashed["status"], "crashed", "{crashed}");
    assert_eq!(crashed["reason"], "bad err=45 in Xbyak::Error", "{crashed}");
    assert_eq!(row(&report, "--weight-preprocess")["status"], "ok");
    assert!(!report["best"]["options"]
        .as_str()
        .unwrap()
        .contains("--layout-transform"));
}

#[test]
fn tune_rejects_a_candidate_that_changes_the_outputs() {
    let (report, _) = tune_rows("wrong", "cpu-inplace", &["--budget", "60"]);
    let rejected = row(&report, "--cpu-inplace");
    assert_eq!(rejected["status"], "rejected", "{rejected}");
    assert_eq!(rejected["err"], 1.0, "{rejected}");
    assert!(!report["best"]["command"].as_str().unwrap().contains("--cpu-inplace"));
}

#[test]
fn tune_stops_at_its_budget_when_a_candidate_hangs() {
    // The candidates with --record-comp-seq hang, the first or the second that tune tries
    // (--layout-transform, tried sixth, went untried under load): the budget runs out in one.
    let (report, took) = tune_rows("hang", "--record-comp-seq", &["--budget", "12"]);
    assert!(took < Duration::from_secs(12) + PROMPTLY, "took {took:?}");
    let rows = report["candidates"].as_array().unwrap();
    let hung = rows
        .iter()
        .find(|row| row["options"].as_str().unwrap().starts_with("--record-comp-seq"))
        .unwrap_or_else(|| panic!("no candidate with --record-comp-seq: {report:#}"));
    assert_eq!(hung["status"], "timed_out");
    assert!(
        hung["reason"].as_str().unwrap().ends_with("when the --budget ran out"),
        "{hung}"
    );
    assert!(!report["untried"].as_array().unwrap().is_empty(), "{report:#}");
}

/// A hung candidate costs its own deadline (from the baseline's time, at
/// least 20 s), not the rest of the budget: the search goes on after it.
#[test]
fn tune_gives_each_candidate_its_own_deadline() {
    let (report, _) = tune_rows("hang", "cpu-inplace", &["--budget", "300"]);
    let hung = row(&report, "--cpu-inplace");
    assert_eq!(hung["status"], "timed_out", "{hung}");
    let reason = hung["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("stopped at its deadline, 20.0 s: 10x the baseline's"),
        "{reason}"
    );
    assert!(!reason.contains("--timeout"), "{reason}");
    assert_eq!(
        row(&report, "--graph-opt-level 0")["status"],
        "ok",
        "tried after the hung one"
    );
    let no_time = |untried: &serde_json::Value| untried["why"] == "budget";
    // The rest of the budget was not spent on it, whatever the machine's speed.
    assert!(!report["untried"].as_array().unwrap().iter().any(no_time), "{report:#}");
}

#[test]
fn the_engines_log_lines_are_shown_with_verbose_only() {
    let mut command = mge_failing("error", "load", &["run", "fixtures/conv_float.mge"]);
    let (_, stderr) = run_expecting(&mut command, 2);
    assert!(
        stderr.contains("mge: error: the engine cannot load the model: fault library error"),
        "{stderr}"
    );
    for chatter in ["[ERR]", "backtrace:", "[0x7fb86344686a]", "LITE[ERR]"] {
        assert!(!stderr.contains(chatter), "{chatter} without -v:\n{stderr}");
    }
    let mut verbose = mge_failing("error", "load", &["run", "fixtures/conv_float.mge", "-v"]);
    let (_, stderr) = run_expecting(&mut verbose, 2);
    assert!(
        stderr.contains("[ERR] fault: the pass failed") && stderr.contains("LITE[ERR]"),
        "{stderr}"
    );
}

/// A baseline that the engine's process ends with an exit code of its own
/// (no error of the tool's, no trapped exit) fails the search with the
/// child's reason, not with the budget's.
#[test]
fn tune_says_why_the_baseline_failed() {
    for at in ["load", "forward"] {
        let mut command = mge_failing("quit", at, &["tune", "fixtures/conv_float.mge", "--budget", "30"]);
        let stderr = run_expecting(&mut command, 2).1;
        assert!(
            stderr.starts_with("mge: error: the baseline does not run, so there is nothing to compare with: ")
                && stderr.contains("cannot allocate memory for thread-local data: ABORT"),
            "{at}: {stderr}"
        );
        assert!(!stderr.contains("--budget"), "{at}: {stderr}");
    }
}

/// A child that ends with an exit code the tool never ends with, as glibc
/// ends a process whose thread cannot get its thread-local data (`_exit(127)`,
/// which no exit handler sees), or with 2 without its error: one line, exit 2
/// (the tool exited 127, or 2, without a word).
#[test]
fn an_exit_code_the_tool_never_ends_with_is_one_line() {
    for status in ["127", "2"] {
        let mut command = mge_failing("quit", "forward", &["run", "fixtures/conv_float.mge", "-q"]);
        command.env("MGE_FAULT_STATUS", status);
        fails_promptly(
            &mut command,
            &[
                &format!("the engine's process ended with exit code {status} during the warm-up"),
                "it said last: 'cannot allocate memory for thread-local data: ABORT'",
            ],
        );
    }
    let mut command = mge_failing("quit", "load", &["check", "fixtures/conv_float_tc1.mge"]);
    let stdout = check_fails_promptly(&mut command);
    assert!(
        stdout.contains("ERROR: the engine's process ended with exit code 127 while the engine loaded the model"),
        "{stdout}"
    );
}

/// Signals are named, and only those a process sends itself when its code
/// fails are the engine's crash (SIGXFSZ was "the engine crashed (signal 25)").
#[test]
fn a_signal_from_outside_is_named_and_no_crash() {
    for (signal, expected) in [
        (
            "25",
            "the engine's process was ended by SIGXFSZ (its file size limit, ulimit -f) during the warm-up",
        ),
        ("10", "the engine's process was ended by SIGUSR1 during the warm-up"),
        ("5", "the engine crashed (SIGTRAP) during the warm-up"),
    ] {
        let mut command = mge_failing("signal", "forward", &["run", "fixtures/conv_float.mge", "-q"]);
        command.env("MGE_FAULT_SIGNAL", signal);
        fails_promptly(&mut command, &[expected]);
    }
}

/// How long a stuck engine is given, and then how long its report may take.
const STALL: Duration = Duration::from_secs(10);

/// Runs `command`, which must exit 2 with one error line holding `expected`
/// soon after `STALL` (it hung until killed).
fn stalls(command: &mut assert_cmd::Command, expected: &str) {
    command.timeout(STALL + PROMPTLY * 2);
    let started = Instant::now();
    let (_, stderr) = run_expecting(command, 2);
    let took = started.elapsed();
    assert!(
        took >= STALL && took < STALL + PROMPTLY,
        "{command:?} took {took:?}\n{stderr}"
    );
    assert!(stderr.contains(expected), "{stderr}");
    assert_eq!(stderr.matches("mge: error").count(), 1, "one error line:\n{stderr}");
}

/// An engine that deadlocks while it loads (as under `ulimit -v`, where one
/// of its threads did not start) hung until killed; it is stopped and said.
#[test]
fn a_load_that_makes_no_progress_says_so() {
    stalls(
        &mut mge_failing("deadlock", "load", &["run", "fixtures/conv_float.mge", "-q"]),
        "mge: error: the engine made no progress for 10s while the engine loaded the model: \
         its threads all wait, using no CPU time (a deadlock)",
    );
}

/// An engine that goes on without a thread it could not start, and waits for
/// it forever (as under `ulimit -v` with `--instances 16`), is stopped and said.
#[test]
fn an_engine_waiting_for_a_thread_that_never_started_is_stopped() {
    stalls(
        &mut mge_failing("nothread", "forward", &["run", "fixtures/conv_float.mge", "-q"]),
        "mge: error: the engine made no progress for 10s during the warm-up (1 run), \
         since one of its threads could not start (Resource temporarily unavailable)",
    );
}

/// A crashed candidate's reason is the engine's message, not its log line:
/// tune's table gave `[23 08:29:00 apply@framework.cpp:580][ERR] fault:
/// aborting`, the time and the place in the engine's sources with it.
#[test]
fn tune_gives_a_crashed_candidates_reason_as_the_engines_message() {
    let (report, _) = tune_rows("abort", "layout-transform", &["--budget", "60"]);
    let crashed = row(&report, "--layout-transform");
    assert_eq!(crashed["status"], "crashed", "{crashed}");
    assert_eq!(crashed["reason"], "fault: aborting", "{crashed}");
}
