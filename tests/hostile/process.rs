//! What the tool's process is given: limits
//! (`ulimit -f`, `-v`, `-s`), a stderr whose reader is gone, a current folder
//! that no longer exists, the temporary folders of processes that were
//! killed, and a library search path that names the current folder. Each
//! ends in the exit code the command would have had, or in one error line
//! (exit 2) that names the cause; nothing is left behind or loaded from there.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// The `mge: error:` lines of `stderr`, which must be one, with a hint at most.
fn error_line(stderr: &str) -> &str {
    let errors: Vec<&str> = stderr.lines().filter(|line| line.starts_with("mge: error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{stderr}");
    let others = stderr
        .lines()
        .filter(|line| !line.starts_with("mge: error:") && !line.starts_with("hint: "));
    assert!(
        others
            .clone()
            .all(|line| line.starts_with("warning:") || line.starts_with("note:")),
        "{stderr}"
    );
    errors[0]
}

/// Past `ulimit -f`, the tool's own writes fail with "File too large" instead
/// of the process dying by SIGXFSZ (check: exit 153, a staging file left;
/// run: "the engine crashed (signal 25)").
#[test]
fn a_file_size_limit_is_an_error_about_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("j.xml");
    let (_, stderr) = run_expecting(
        mge_in_shell("ulimit -f 0 && exec \"$0\" check -q fixtures/conv_float_tc1.mge --junit \"$1\"").arg(&junit),
        2,
    );
    let line = error_line(&stderr);
    assert!(
        line.contains(&format!("cannot write {}: File too large", junit.display())) && !line.contains(".mge-"),
        "{stderr}"
    );
    let outputs = dir.path().join("out");
    let (_, stderr) = run_expecting(
        mge_in_shell("ulimit -f 0 && exec \"$0\" run -q fixtures/conv_float.mge --outputs \"$1\"").arg(&outputs),
        2,
    );
    let feat = outputs.join("feat.npy");
    assert!(
        error_line(&stderr).contains(&format!("cannot write {}: File too large", feat.display())),
        "{stderr}"
    );
    assert!(left_in(dir.path()).is_empty(), "{:?}", left_in(dir.path()));
}

/// `mge ARGS` in the environment `env`, with stdout on /dev/null and stderr
/// a pipe no one reads any more; its exit code, within the tests' deadline.
fn exit_code_with_stderr_closed(args: &[&str], env: &[(&str, &Path)]) -> Option<i32> {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(mge().get_program())
        .current_dir(root())
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(writer)
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if started.elapsed() > COMMAND_TIMEOUT {
            let _ = child.kill();
            panic!("mge {args:?} did not end within {COMMAND_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A stderr whose reader is gone (`2>&1 | true`) loses the tool's words, not
/// its exit code (it panicked: exit 101).
#[test]
fn a_closed_stderr_keeps_the_exit_code() {
    for (args, code) in [
        (&["check", "fixtures/conv_float_tc3_wrong.mge"][..], 1),
        (&["compare", "/nope/a.npy", "/nope/b.npy"], 2),
        (&["run", "--iter", "0", "fixtures/conv_float.mge"], 2),
        (&["run", "--iter", "1", "fixtures/conv_float.mge"], 0),
    ] {
        assert_eq!(exit_code_with_stderr_closed(args, &[]), Some(code), "{args:?}");
    }
    // An install that says it downloads, into a cache of its own, from no wheel at all.
    let (home, wheels) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let offline = [
        ("MGE_HOME", home.path()),
        ("PIP_FIND_LINKS", wheels.path()),
        ("PIP_NO_INDEX", Path::new("1")),
    ];
    assert_eq!(exit_code_with_stderr_closed(&["runtime", "install"], &offline), Some(2));
}

/// In a folder deleted under it, the engine's MKL cannot load and calls
/// exit(2) while the library loads: one line says so, with what it said and
/// the likely cause (run and info said nothing; check blamed its worker).
#[test]
fn a_deleted_current_folder_is_named_as_the_likely_cause() {
    let model = root().join("fixtures/conv_float_tc1.mge");
    for (command, code) in [("run -q", 2), ("info", 2), ("check", 1)] {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let script = format!("cd \"$1\" && rmdir \"$1\" && exec \"$0\" {command} \"$2\"");
        let (stdout, stderr) = run_expecting(mge_in_shell(&script).arg(&gone).arg(&model), code);
        let said = match code {
            1 => stdout
                .lines()
                .find(|line| line.contains("ERROR:"))
                .unwrap_or_default()
                .to_string(),
            _ => format!("{}\n{}", error_line(&stderr), stderr),
        };
        for expected in [
            "the engine ended the process with exit(2)",
            "while the engine's library loaded",
            "it said last: 'Intel MKL FATAL ERROR: Cannot load",
            "hint: the current folder was deleted or its path is too long",
        ] {
            assert!(said.contains(expected), "{command}: {expected:?}:\n{stdout}\n{stderr}");
        }
    }
}

/// `runtime info` loaded the engine itself, its output silenced: in a
/// deleted folder the engine's exit(2) while its library loaded took the
/// trap's line with it, and the tool ended with exit 2 and not a word. It
/// loads it in a supervised child now, and says what `run` says.
#[test]
fn the_engines_exit_while_runtime_info_loads_it_is_one_line_and_its_hint() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let script = "cd \"$1\" && rmdir \"$1\" && exec \"$0\" runtime info";
    let (_, stderr) = run_expecting(mge_in_shell(script).arg(&gone), 2);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with(
            "mge: error: the engine ended the process with exit(2) from its thread 'mge' while the engine's library loaded"
        ),
        "{stderr}"
    );
    assert!(lines[1].starts_with("hint: the current folder was deleted"), "{stderr}");
}

/// `LD_LIBRARY_PATH=:` (`$LD_LIBRARY_PATH:/opt/lib` of an unset variable)
/// names the current folder, where the loader looked up what the engine
/// opens by name: `runtime info`'s CUDA probe ran a planted `libcuda.so.1`,
/// and a run loaded a planted `libstdc++.so.6` (exit 2, "undefined symbol").
/// Relative entries and folders every user can write into are left out; a
/// folder the user names is the user's.
#[test]
fn ld_library_path_names_no_folder_others_or_the_current_one_control() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let planted = dir.path().join("planted");
    let shared = dir.path().join("shared");
    for folder in [&planted, &shared] {
        std::fs::create_dir(folder).unwrap();
        for name in ["libcuda.so.1", "libstdc++.so.6"] {
            std::fs::copy(planted_library(), folder.join(name)).unwrap();
        }
    }
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let shared = shared.to_str().unwrap();
    for list in [
        ":",
        ".",
        "./",
        "../planted",
        &format!("{shared}:"),
        &format!("/nowhere:{shared}"),
    ] {
        let in_planted = |args: &[&str]| {
            let mut command = mge();
            command
                .current_dir(&planted)
                .env("LD_LIBRARY_PATH", list)
                .env("MGE_TEST_PLANTED", &marker)
                .args(args);
            command
        };
        let (stdout, _) = run_expecting(&mut in_planted(&["runtime", "info"]), 0);
        assert!(stdout.contains("1.13.0"), "{list}: {stdout}");
        assert!(!marker.exists(), "{list}: a planted library was loaded");
        let model = root().join("fixtures/conv_float.mge");
        let (stdout, _) = run_expecting(in_planted(&["run", "-q", "--iter", "1"]).arg(&model), 0);
        assert!(stdout.contains("feat"), "{list}: {stdout}");
    }
}

/// A small `ulimit -s` is the main thread's: the tool's work and the
/// engine's threads get stacks of their own size (the tool overflowed its
/// stack at 64 KiB, SIGABRT).
#[test]
fn a_small_stack_limit_does_not_end_the_tool() {
    let script = "ulimit -s 64 && exec \"$0\" run -q fixtures/conv_float.mge --iter 2 --threads 2";
    let (stdout, _) = run_expecting(&mut mge_in_shell(script), 0);
    assert!(stdout.contains("feat"), "{stdout}");
}

/// `--instances` whose threads cannot start under `ulimit -v` is an error
/// line (a panic in the scoped threads, then a hang at their barrier).
/// Where the address space runs out first varies from run to run: at an
/// instance's thread, or in the engine as it loads (a crash the supervisor
/// names, with the hint about the limit); either is one line and exit 2.
#[test]
fn instances_whose_threads_cannot_start_are_an_error() {
    let mut command =
        mge_in_shell("ulimit -v 150000 && exec \"$0\" run -q fixtures/conv_float.mge --iter 1 --instances 64");
    command
        .env("MGE_LITE_LIB", fault_library())
        .timeout(Duration::from_secs(60));
    let (_, stderr) = run_expecting(&mut command, 2);
    assert!(
        error_line(&stderr).contains("cannot start a thread for instance")
            || stderr.contains("hint: the address space is limited (ulimit -v)"),
        "{stderr}"
    );
}

/// `mge run` on the fault library, hanging in the engine, with its own TMPDIR.
fn hanging(tmp: &Path) -> std::process::Child {
    Command::new(mge().get_program())
        .current_dir(root())
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", "hang")
        .env("TMPDIR", tmp)
        .args(["run", "fixtures/conv_float.mge", "-q"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A quick run on the fault library with `tmp` as TMPDIR.
fn quick_run(tmp: &Path) {
    run_expecting(
        mge().env("MGE_LITE_LIB", fault_library()).env("TMPDIR", tmp).args([
            "run",
            "fixtures/conv_float.mge",
            "-q",
            "--iter",
            "1",
        ]),
        0,
    );
}

/// The scratch folders `mge-*` of processes killed (SIGKILL) stayed in
/// TMPDIR for good; the next run removes them, and keeps those of the living.
#[test]
fn scratch_folders_of_killed_processes_are_removed_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let mut killed = hanging(tmp.path());
    let started = Instant::now();
    while left_in(tmp.path()).is_empty() && started.elapsed() < COMMAND_TIMEOUT {
        std::thread::sleep(Duration::from_millis(50));
    }
    let its_scratch = left_in(tmp.path());
    assert_eq!(its_scratch.len(), 1, "{its_scratch:?}");
    // Alive: its folder stays while another run comes and goes.
    quick_run(tmp.path());
    assert_eq!(left_in(tmp.path()), its_scratch);
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(left_in(tmp.path()), its_scratch, "a killed process removes nothing");
    quick_run(tmp.path());
    assert!(left_in(tmp.path()).is_empty(), "{:?}", left_in(tmp.path()));
}

/// tune's folder for its candidates' outputs (`mge-tune-*`) stayed in TMPDIR
/// for good when tune was killed; it is a scratch folder as the supervisor's,
/// removed by the next run.
#[test]
fn a_killed_tunes_folder_is_removed_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let mut tune = Command::new(mge().get_program())
        .current_dir(root())
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", "hang")
        .env("TMPDIR", tmp.path())
        .args(["tune", "fixtures/conv_float.mge", "-q", "--budget", "60"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // tune's own folder and its first candidate's scratch.
    let started = Instant::now();
    while left_in(tmp.path()).len() < 2 && started.elapsed() < COMMAND_TIMEOUT {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(left_in(tmp.path()).len(), 2, "{:?}", left_in(tmp.path()));
    tune.kill().unwrap();
    tune.wait().unwrap();
    quick_run(tmp.path());
    assert!(left_in(tmp.path()).is_empty(), "{:?}", left_in(tmp.path()));
}

/// The engine reads `RUNTIME_OVERRIDE_LOG_LEVEL` with `std::stoi` as its
/// library loads and aborts on what that cannot read: `runtime info` ended
/// with SIGABRT ("Rust cannot catch foreign exceptions"), a run with "the
/// engine crashed". Those are one line before the engine loads; what the
/// engine reads still reaches it.
#[test]
fn a_log_level_override_the_engine_cannot_read_is_one_line() {
    let model = root().join("fixtures/conv_float.mge");
    for value in ["", "abc", " ", "-", "2147483648", "-2147483649", "99999999999999999999"] {
        for args in [&["runtime", "info"][..], &["run", "-q", "--iter", "1"][..]] {
            let mut command = mge();
            command.env("RUNTIME_OVERRIDE_LOG_LEVEL", value).args(args);
            if args[0] == "run" {
                command.arg(&model);
            }
            let (_, stderr) = run_expecting(&mut command, 2);
            assert!(
                stderr.starts_with("mge: error: RUNTIME_OVERRIDE_LOG_LEVEL=") && stderr.lines().count() == 1,
                "{value:?} {args:?}: {stderr}"
            );
        }
    }
    for value in ["4", " +4", "4abc", "2147483647", "-2147483648"] {
        let (stdout, _) = run_expecting(
            mge().env("RUNTIME_OVERRIDE_LOG_LEVEL", value).args(["runtime", "info"]),
            0,
        );
        assert!(stdout.contains("1.13.0"), "{value:?}: {stdout}");
    }
}

/// With every descriptor but one taken (`ulimit -n`), the supervisor's
/// error left its scratch folder behind: removing it needed the descriptor
/// the folder's lock held; under tune and compare, whose own scratch folder
/// holds one more, the supervisor's folder could not even be locked, and
/// stayed for good.
#[test]
fn a_scratch_folder_is_removed_with_descriptors_at_the_limit() {
    for command in ["run -q --iter 1", "tune -q --budget 3", "compare --b-naive"] {
        let tmp = tempfile::tempdir().unwrap();
        let script = format!("exec 3</dev/null; ulimit -n 5; exec \"$0\" {command} fixtures/conv_float.mge");
        let (_, stderr) = run_expecting(mge_in_shell(&script).env("TMPDIR", tmp.path()), 2);
        assert!(stderr.contains("Too many open files"), "{command}: {stderr}");
        assert!(left_in(tmp.path()).is_empty(), "{command}: {:?}", left_in(tmp.path()));
    }
}

/// The engine's process of a run killed (SIGKILL) as it started that process
/// ran on for good: it asked to end with its parent only once its program
/// had started, after the parent was gone. Killed the moment the child
/// appears, the parent takes the child with it.
#[test]
fn a_run_killed_as_it_starts_the_engines_process_leaves_none() {
    for _ in 0..5 {
        let mut run = Command::new(mge().get_program())
            .current_dir(root())
            .env("MGE_LITE_LIB", fault_library())
            .env("MGE_FAULT", "hang")
            .args(["run", "fixtures/conv_float.mge", "-q"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let child = loop {
            if let Some(child) = children_of(run.id()).into_iter().next() {
                break child;
            }
            assert!(started.elapsed() < COMMAND_TIMEOUT, "no engine's process started");
        };
        run.kill().unwrap();
        run.wait().unwrap();
        let gone = Instant::now();
        while running(child) && gone.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left = running(child);
        if left {
            // Not left for the rest of the suite.
            let _ = Command::new("kill").args(["-9", &child.to_string()]).status();
        }
        assert!(!left, "the engine's process {child} outlived its killed parent");
    }
}

/// The processes `pid` started, from every one of its threads.
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|id| id.parse().ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether `pid` is running (a zombie is not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

/// `--repro DIR` stages its folders in `DIR/.mge-*`: a run killed (SIGKILL)
/// left that for good. A staging folder's owner holds a lock in it, as a
/// scratch folder's does; the next set staged there removes one whose owner
/// is gone, and keeps a living one's.
#[test]
fn a_killed_runs_staged_reproducer_is_removed_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    std::fs::create_dir(&repro).unwrap();
    let staged = || -> Vec<PathBuf> {
        std::fs::read_dir(&repro)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with(".mge-"))
            .collect()
    };
    let mut run = Command::new(mge().get_program())
        .current_dir(root())
        .env("MGE_LITE_LIB", fault_library())
        .env("MGE_FAULT", "hang")
        .args(["run", "fixtures/conv_float.mge", "-q", "--repro"])
        .arg(&repro)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while staged().is_empty() && started.elapsed() < COMMAND_TIMEOUT {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(staged().len(), 1);
    run.kill().unwrap();
    run.wait().unwrap();
    // The engine's process goes with it (its process group ends whole).
    assert_eq!(staged().len(), 1, "left by the killed run");
    run_expecting(
        mge()
            .env("MGE_LITE_LIB", fault_library())
            .args(["run", "fixtures/conv_float.mge", "-q", "--iter", "1", "--repro"])
            .arg(&repro),
        0,
    );
    assert!(staged().is_empty(), "{:?}", staged());
}

/// A sparse file of `len` bytes at `path` that begins with `head`: gigabytes
/// that take no disk.
fn sparse_file(path: &Path, head: &[u8], len: u64) {
    let file = std::fs::File::create(path).unwrap();
    std::io::Write::write_all(&mut &file, head).unwrap();
    file.set_len(len).unwrap();
}

/// `mge ARGS` under `ulimit -v KIB`, on the fault library, with `tmp` as TMPDIR.
fn under_memory_limit(kib: u64, tmp: &Path, args: &[&Path]) -> assert_cmd::Command {
    let mut command = mge_in_shell(&format!("ulimit -v {kib} && exec \"$0\" \"$@\""));
    command
        .args(args)
        .env("MGE_LITE_LIB", fault_library())
        .env("TMPDIR", tmp);
    command
}

/// Memory that runs out in mge's own work, for what a file or an argument
/// sizes, is one line and exit 2, nothing left behind: `info`'s read of a
/// model whose graph claims 512 MiB ended with "the engine crashed (SIGABRT)"
/// (the read is in the supervised child, before the engine loads);
/// `--sweep` laying an image out at 16000x16000 aborted and left its
/// `mge-sweep-*` folder in TMPDIR.
#[test]
fn memory_that_runs_out_in_mges_own_work_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let model = dir.path().join("big.mge");
    // An FBS v2 graph's size prefix, then its identifier: 512 MiB to read.
    let size = 512u32 << 20;
    sparse_file(
        &model,
        &[&size.to_le_bytes()[..], b"\0\0\0\0mgv2"].concat(),
        4 + u64::from(size),
    );
    let (_, stderr) = run_expecting(&mut under_memory_limit(300_000, &tmp, &[Path::new("info"), &model]), 2);
    assert!(
        error_line(&stderr).starts_with(&format!(
            "mge: error: cannot read {}: not enough memory for the model: 536870904 bytes could not be allocated under the address space limit (ulimit -v)",
            model.display()
        )),
        "{stderr}"
    );
    let args = [
        "run",
        "fixtures/conv_float.mge",
        "-q",
        "--sweep",
        "data:1x3x16000x16000",
        "-i",
        "data:fixtures/feeds/cat.png",
    ];
    let args: Vec<&Path> = args.iter().map(Path::new).collect();
    let (stdout, stderr) = run_expecting(&mut under_memory_limit(1_000_000, &tmp, &args), 2);
    let line = error_line(&stderr);
    assert!(
        line.starts_with("mge: error: input 'data' from 'fixtures/feeds/cat.png': not enough memory for ")
            && line.contains(" bytes could not be allocated under the address space limit (ulimit -v)"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "{stdout}");
    assert!(left_in(&tmp).is_empty(), "{:?}", left_in(&tmp));
}

/// A model decrypted for `compare --structure` takes the memory of its file
/// and no more: RC4 needed 4 times it (the words, what the outer stream
/// revealed, the plain words, their bytes) and aborted under a limit that
/// holds the file twice over. Here a 64 MiB file of zeros, which is no
/// model under any method's key: each says so in one line.
#[test]
fn a_decrypted_model_takes_the_memory_of_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // Whole RC4 words, and a 16-byte IV, whole AES blocks and a length of 0.
    let encrypted = dir.path().join("zeros.emod");
    sparse_file(&encrypted, &[], (64 << 20) + 24);
    for method in ["RC4_default", "SIMPLE_FAST_RC4_default", "AES_default"] {
        let args = [
            Path::new("compare"),
            &encrypted,
            Path::new("fixtures/conv_float.mge"),
            Path::new("--structure"),
            Path::new("--model-decryption"),
            Path::new(method),
        ];
        let (_, stderr) = run_expecting(&mut under_memory_limit(250_000, &tmp, &args), 2);
        assert!(
            error_line(&stderr).contains(&format!(
                "the model does not decrypt with {method} and its built-in key: "
            )),
            "{method}: {stderr}"
        );
    }
}
