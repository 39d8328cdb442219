//! The child's messages to its parent travel on a pipe of
//! their own, which the engine is never told of: var names that the engine
//! prints (its debug log under `RUNTIME_OVERRIDE_LOG_LEVEL=0`, its AssertEqual
//! lines under `-v`) are text, never events; a child that writes garbage there
//! is bounded and cannot name a path for the parent to delete; the pipe takes
//! none of the user's descriptor numbers.

use std::path::Path;

use crate::common::*;

fn named(key: &str, field: &str) -> String {
    let manifest = named_manifest();
    let value = &manifest["models"][key][field];
    value.as_str().unwrap_or_else(|| panic!("{key}.{field}")).to_string()
}

/// An input named as the old staging event: with the engine's debug log on,
/// its name reached the parent, which deleted `.mge-data` beside it.
#[test]
fn a_var_name_cannot_make_the_parent_delete_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join(".mge-data");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("keep"), b"kept").unwrap();
    let outputs = dir.path().join("out");
    let (stdout, stderr) = run_expecting(
        mge()
            .current_dir(dir.path())
            .env("RUNTIME_OVERRIDE_LOG_LEVEL", "0")
            .args(["run", "-q", "--iter", "2"])
            .arg(root().join(named("forged_staging", "model")))
            .arg("-i")
            .arg(root().join(named_manifest()["feed"].as_str().unwrap()))
            .arg("--outputs")
            .arg(&outputs),
        0,
    );
    assert_eq!(std::fs::read(victim.join("keep")).unwrap(), b"kept", "{stderr}");
    assert!(stdout.contains("y"), "{stdout}");
    let written = read_f32(&outputs.join("y.npy"));
    assert_close(
        &written,
        &read_f32(&root().join(named("forged_staging", "reference"))),
        "y",
    );
}

/// Outputs named as the engine's exit and as an error: their containers'
/// AssertEqual lines (`-v`) turned a passing model into a crash (exit 2) or
/// printed a false error line.
#[test]
fn var_names_cannot_fake_an_exit_or_an_error() {
    for key in ["forged_exit", "forged_error"] {
        let container = named(key, "container");
        let (stdout, stderr) = run_expecting(mge().args(["run", "-v", "--iter", "2", &container]), 0);
        assert!(stdout.contains("testcase 0: passed"), "{key}: {stdout}");
        assert!(!stderr.contains("mge: error"), "{key}: {stderr}");
        // The name is the engine's text, shown with its control characters escaped.
        assert!(stderr.contains("\\x01mge-event:{\"event\":"), "{key}: {stderr}");
        let (stdout, stderr) = run_expecting(mge().args(["check", "-v", &container]), 0);
        assert!(stdout.contains("1 passed, 0 failed"), "{key}: {stdout}");
        assert!(!stderr.contains("mge: error"), "{key}: {stderr}");
    }
}

/// A child that writes a 2 MiB line, garbage and a staging event naming a
/// folder it did not make onto the channel: the parent reads on, deletes
/// nothing, and the run ends as it would have.
#[test]
fn garbage_on_the_channel_is_bounded_and_names_nothing_to_delete() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join(".mge-victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("keep"), b"kept").unwrap();
    for (fault, outputs) in [("scribble", "scribbled"), ("close", "closed")] {
        let outputs = dir.path().join(outputs);
        let (stdout, _) = run_expecting(
            mge()
                .env("MGE_LITE_LIB", fault_library())
                .env("MGE_FAULT", fault)
                .env("MGE_FAULT_AT", "load")
                .env("MGE_FAULT_PATH", &victim)
                .args(["run", "fixtures/conv_float.mge", "-q", "--outputs"])
                .arg(&outputs),
            0,
        );
        assert!(stdout.contains("feat"), "{fault}: {stdout}");
        assert_eq!(read_f32(&outputs.join("feat.npy")).len(), 8, "{fault}");
        assert_eq!(std::fs::read(victim.join("keep")).unwrap(), b"kept", "{fault}");
    }
}

/// The number the child keeps its channel at: the top of its descriptor
/// table, at most 1023 (`engine::take_inherited_pipe`).
fn channel_number() -> usize {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let soft = limits
        .lines()
        .find_map(|line| line.strip_prefix("Max open files"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|soft| soft.parse::<usize>().ok())
        .unwrap();
    soft.min(1024) - 1
}

/// The user's descriptors reach the engine's process as they are (`3>FILE`
/// as `/dev/fd/3`); numbers the user did not open are no file there, and the
/// channel's own number is refused as an output, not written into unseen.
#[test]
fn the_channel_takes_none_of_the_users_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.json");
    let script = format!(
        "exec \"$0\" run fixtures/conv_float.mge -q --iter 1 --profile /dev/fd/3 3>'{}'",
        trace.display()
    );
    run_expecting(&mut mge_in_shell(&script), 0);
    let written = std::fs::read_to_string(&trace).unwrap();
    assert!(written.starts_with('{') && written.contains("traceEvents"), "{written}");
    let profile = |target: &str| {
        let args = [
            "run",
            "fixtures/conv_float.mge",
            "-q",
            "--iter",
            "1",
            "--profile",
            target,
        ];
        run_expecting(mge().args(args), 2).1
    };
    // Numbers this test's own process holds may reach mge: those are not checked.
    for fd in (3..12).filter(|fd| !Path::new(&format!("/proc/self/fd/{fd}")).exists()) {
        let target = format!("/dev/fd/{fd}");
        let stderr = profile(&target);
        assert!(stderr.contains(&format!("{target} names no open file")), "{stderr}");
    }
    let target = format!("/dev/fd/{}", channel_number());
    let stderr = profile(&target);
    assert!(
        stderr.contains(&format!("{target} is also where mge's channel to its parent goes")),
        "{stderr}"
    );
}

/// Names longer than a line of the channel: a container whose output's
/// name is 1.1 MB answered `check` in a reply that the parent dropped, and
/// both then waited forever (with `--timeout`, blamed on "the timed runs");
/// an input named in 1.2 MB made `run`'s error an "exit code 2". A name in a
/// message or a reply is cut to its ends, and a line the parent cannot read
/// would stop the child in one line: nothing waits.
#[test]
fn names_longer_than_a_line_neither_hang_nor_hide_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let long_output = "o".repeat(1_100_000);
    let container = std::fs::read(root().join(named("control", "container"))).unwrap();
    let container_path = dir.path().join("long_output_tc1.mge");
    std::fs::write(
        &container_path,
        with_long_names(&container, b"line1\nline2", long_output.as_bytes()),
    )
    .unwrap();
    for timeout in [None, Some("60")] {
        let mut command = mge();
        command.arg("check").arg(&container_path);
        if let Some(seconds) = timeout {
            command.args(["--timeout", seconds]);
        }
        let (stdout, stderr) = run_expecting(&mut command, 0);
        assert!(
            stdout.contains("#0: passed") && stdout.contains("bytes left out"),
            "{stdout}{stderr}"
        );
        assert!(stdout.len() < 100_000, "{} bytes", stdout.len());
    }
    let model = std::fs::read(root().join(named("odd", "model"))).unwrap();
    let input = named("odd", "input");
    let model_path = dir.path().join("long_input.mge");
    let long_input = "i".repeat(1_200_000);
    std::fs::write(
        &model_path,
        with_long_names(&model, input.as_bytes(), long_input.as_bytes()),
    )
    .unwrap();
    let (_, stderr) = run_expecting(mge().arg("run").arg(&model_path).args(["-i", "nope:1"]), 2);
    assert_eq!(stderr.lines().count(), 1, "{}", &stderr[..stderr.len().min(500)]);
    assert!(
        stderr.starts_with("mge: error: unknown input 'nope'") && stderr.contains("bytes left out"),
        "{}",
        &stderr[..stderr.len().min(500)]
    );
    assert!(stderr.len() < 100_000, "{} bytes", stderr.len());
}
