//! Input made to break the tool: crafted and mutated models,
//! feeds whose headers lie, files that never end, output targets that are not
//! plain files or are the command's own inputs, numbers out of all measure,
//! outputs that go NaN. Each ends in a clear error (exit 2, one line) or a
//! normal result, never a crash, and nothing is overwritten or left
//! half-written.

mod channel;
mod process;

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::common::*;

mod aliases;
mod names;
mod packs;
mod shared_tables;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(root().join("fixtures").join(name)).unwrap()
}

fn u32_at(bytes: &[u8], pos: usize) -> usize {
    u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize
}

/// The model with its root table's vtable offset set to `soffset`: the edit
/// that made the engine segfault. `graph` is where the graph starts (after
/// a container's header).
fn with_root_vtable_offset(mut bytes: Vec<u8>, graph: usize, soffset: u32) -> Vec<u8> {
    let flatbuffer = graph + 4;
    let root = flatbuffer + u32_at(&bytes, flatbuffer);
    bytes[root..root + 4].copy_from_slice(&soffset.to_le_bytes());
    bytes
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Exit 2, one `mge: error:` line naming `needle`, nothing on stdout.
fn refused(command: &mut assert_cmd::Command, needle: &str) -> String {
    let (stdout, stderr) = run_expecting(command, 2);
    assert!(stdout.is_empty(), "{stdout}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("note:")).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(
        lines[0].starts_with("mge: error:") && lines[0].contains(needle),
        "{needle:?}: {stderr}"
    );
    stderr
}

#[test]
fn a_crafted_root_vtable_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    for soffset in [0, 4] {
        let model = write(
            dir.path(),
            "bad.mge",
            &with_root_vtable_offset(fixture("conv_float.mge"), 0, soffset),
        );
        for command in [vec!["info"], vec!["run", "--iter", "1", "-q"]] {
            refused(
                mge().args(&command).arg(&model),
                "the model graph at offset 0 is malformed",
            );
        }
        let container = write(
            dir.path(),
            "bad_tc.mge",
            &with_root_vtable_offset(fixture("conv_float_tc1.mge"), 12, soffset),
        );
        refused(mge().arg("info").arg(&container), "malformed");
        // The good model is still checked and reported, the JUnit written.
        let junit = dir.path().join("r.xml");
        let (stdout, _) = run_expecting(
            mge()
                .args(["check", "-j", "1", "fixtures/conv_float_tc1.mge"])
                .arg(&container)
                .arg("--junit")
                .arg(&junit),
            1,
        );
        assert!(stdout.contains("conv_float_tc1.mge #0: passed"), "{stdout}");
        assert!(stdout.contains("malformed"), "{stdout}");
        let xml = std::fs::read_to_string(&junit).unwrap();
        assert_eq!(xml.matches("<testsuite ").count(), 2, "{xml}");
    }
}

/// A handful of deterministic mutants of each graph format (a sweep of
/// thousands is `scripts/hostile_sweep.py`): every one is a result or an error.
#[test]
fn mutated_models_never_crash() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    for name in ["conv_float.mge", "conv_float_fbs1.mge", "conv_float_tc1.mge"] {
        let original = fixture(name);
        for index in 0..4 {
            let mut bytes = original.clone();
            let at = (next() % (bytes.len() - 4)) & !3;
            let value = [0u32, 4, 0xffff_fff0, next() as u32][index];
            bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
            let model = write(dir.path(), &format!("{index}_{name}"), &bytes);
            for command in [vec!["info"], vec!["run", "--iter", "1", "--warmup", "0", "-q"]] {
                let output = mge().args(&command).arg(&model).output().unwrap();
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert!(
                    matches!(output.status.code(), Some(0..=2)) && !stderr.contains("panicked"),
                    "{command:?} on {name} with {value:#x} at {at}: {:?}\n{stderr}",
                    output.status
                );
            }
        }
    }
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// A FIFO as the JUnit target is written to and stays a FIFO; a symlink
/// stays a link and the file it names gets the report.
#[test]
fn special_and_linked_targets_are_written_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    run_expecting(
        mge()
            .args(["check", "-q", "fixtures/conv_float_tc1.mge", "--junit"])
            .arg(&fifo),
        0,
    );
    assert!(reader.join().unwrap().contains("<testsuite "));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

    let (real, link) = (dir.path().join("real.xml"), dir.path().join("link.xml"));
    std::fs::write(&real, "old").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    run_expecting(
        mge()
            .args(["check", "-q", "fixtures/conv_float_tc1.mge", "--junit"])
            .arg(&link),
        0,
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("<testsuite "));
}

/// `--outputs` is checked before the engine is even looked for.
#[test]
fn outputs_are_checked_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, "a file").unwrap();
    for (target, needle) in [
        (file.clone(), "is not a folder"),
        (file.join("b"), "taken is not a folder"),
    ] {
        refused(
            mge()
                .args([
                    "run",
                    "fixtures/conv_float.mge",
                    "--lite-lib",
                    "/no/such/lite.so",
                    "--outputs",
                ])
                .arg(&target),
            needle,
        );
    }
}

/// `--outputs` in folders not made yet makes them, as `mkdir -p` does, once
/// the outputs are written: a run that fails leaves no folder, and no folder
/// is made in place of an input (a file on the way is refused).
#[test]
fn an_output_set_makes_the_folders_above_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("new/deeper/out");
    run_expecting(
        mge()
            .args(["run", "-q", "fixtures/conv_float.mge", "--iter", "1"])
            .args([
                "-i",
                "data:fixtures/ref/conv_float__conv_data/input_data.npy",
                "--outputs",
            ])
            .arg(&out),
        0,
    );
    let reference = read_f32(&root().join("fixtures/ref/conv_float__conv_data/feat.npy"));
    assert_close(&read_f32(&out.join("feat.npy")), &reference, "feat");
    let failed = dir.path().join("failed/out");
    refused(
        mge()
            .args([
                "run",
                "fixtures/conv_float.mge",
                "--lite-lib",
                "/no/such/lite.so",
                "--outputs",
            ])
            .arg(&failed),
        "/no/such/lite.so",
    );
    assert!(!dir.path().join("failed").exists(), "a failed set makes no folder");
    let model = root().join("fixtures/conv_float.mge");
    let before = std::fs::read(&model).unwrap();
    refused(
        mge().args([
            "run",
            "fixtures/conv_float.mge",
            "--outputs",
            "fixtures/conv_float.mge/out",
        ]),
        "fixtures/conv_float.mge is not a folder",
    );
    assert_eq!(std::fs::read(&model).unwrap(), before, "the input is untouched");
}

/// The second output's name taken by a folder: no file of the set is written.
#[test]
fn an_output_set_is_written_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("pooled.npy")).unwrap();
    let (_, stderr) = run_expecting(
        mge()
            .args(["run", "-q", "fixtures/image_uint8.mge", "--iter", "1", "--outputs"])
            .arg(&out),
        2,
    );
    assert!(stderr.contains("pooled.npy"), "{stderr}");
    assert!(!out.join("logits.npy").exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no staging folder left"
    );
    std::fs::remove_dir(out.join("pooled.npy")).unwrap();
    run_expecting(
        mge()
            .args(["run", "-q", "fixtures/image_uint8.mge", "--iter", "1", "--outputs"])
            .arg(&out),
        0,
    );
    assert!(out.join("logits.npy").is_file() && out.join("pooled.npy").is_file());
}

/// A lowered testcase count or bytes appended: testcases would be silently
/// dropped, so the file is refused.
#[test]
fn a_container_whose_count_disagrees_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut lowered = fixture("conv_float_tc3.mge");
    lowered[8..12].copy_from_slice(&2u32.to_le_bytes());
    let lowered = write(dir.path(), "lowered.mge", &lowered);
    let (stdout, _) = run_expecting(mge().arg("check").arg(&lowered), 2);
    assert!(stdout.contains("after the 2 testcases"), "{stdout}");
    let mut appended = fixture("conv_float.mge");
    appended.extend(b"trailing");
    let appended = write(dir.path(), "appended.mge", &appended);
    refused(
        mge().arg("info").arg(&appended),
        "unexpected data at offset 2728 after the model graph",
    );
}

/// What `mge ARGS` (started from `dir`) ended with: its exit code, its stderr,
/// and its peak resident memory in KiB, its own or its child's, whichever is
/// larger (`wait4` reports a process with the children it waited for, as
/// `/usr/bin/time -v` does).
fn measured(dir: &Path, args: &[&str]) -> (Option<i32>, String, u64) {
    let stderr = tempfile::tempfile().unwrap();
    // Reaped by `wait4` below, which `Child::wait` would not report the usage of.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(mge().get_program())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(stderr.try_clone().unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let started = std::time::Instant::now();
    // SAFETY: wait4 with valid out-pointers on our own child.
    let (mut status, mut usage): (libc::c_int, libc::rusage) = (0, unsafe { std::mem::zeroed() });
    while unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) } == 0 {
        if started.elapsed() > COMMAND_TIMEOUT {
            // SAFETY: kill of our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("mge {args:?} did not finish within {COMMAND_TIMEOUT:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let mut text = String::new();
    let mut stderr = stderr;
    std::io::Seek::rewind(&mut stderr).unwrap();
    std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
    (code, text, usage.ru_maxrss as u64)
}

/// Peak resident memory of a finished `mge ARGS` that ended with `code`, in KiB.
fn peak_rss_kib(args: &[&str], code: i32) -> u64 {
    let (ended, stderr, kib) = measured(&root(), args);
    assert_eq!(ended, Some(code), "{args:?}: {stderr}");
    kib
}

/// Models and feeds that announce gigabytes are refused from their headers,
/// in well under a second and without the memory.
#[test]
fn oversized_models_and_feeds_are_refused_without_the_memory() {
    let dir = tempfile::tempdir().unwrap();
    // A 2 GiB sparse file with a plain model's header that claims all of it, and one
    // that claims more than it holds.
    let sparse = dir.path().join("sparse.mge");
    let mut header = fixture("conv_float.mge")[..12].to_vec();
    header[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&sparse, &header).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&sparse)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let started = std::time::Instant::now();
    for (model, needle) in [
        (sparse.as_path(), "truncated"),
        (Path::new("/dev/zero"), "is not a regular file"),
    ] {
        refused(mge().arg("info").arg(model), needle);
    }
    let kib = peak_rss_kib(
        &["run", "-q", "fixtures/conv_float.mge", "-i", "#rand(0,1,1073741824)"],
        2,
    );
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    assert!(kib < 1 << 20, "peak RSS {kib} KiB");
}

/// Only a reader that went away (EPIPE) is quiet: a closed stdout, or one
/// that cannot take the report, is an error.
#[test]
fn a_stdout_that_fails_is_an_error() {
    // `>&-` needs a shell; the program is the one `mge()` starts.
    let program = mge().get_program().to_owned();
    for redirect in [">&-", ">/dev/full"] {
        let output = assert_cmd::Command::new("sh")
            .timeout(COMMAND_TIMEOUT)
            .arg("-c")
            .arg(format!(
                "exec \"$0\" run -q fixtures/conv_float.mge --iter 1 {redirect}"
            ))
            .arg(&program)
            .current_dir(root())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{redirect}: {stderr}");
        assert!(stderr.contains("stdout"), "{redirect}: {stderr}");
    }
}

/// `1<>/dev/null` is how Python's `subprocess.DEVNULL` hands a program its
/// stdout, and it looks as the /dev/null that Rust's runtime puts in place of
/// a closed stdout: it was taken for `>&-` ("cannot write the result: stdout
/// is closed", exit 2). Both through a supervised child (`run`, `info`) and
/// without one (`compare`), `>&-` is one error line and `1<>/dev/null` none.
#[test]
fn a_closed_stdout_is_told_from_dev_null_opened_read_write() {
    for command in [
        "run -q fixtures/conv_float.mge --iter 1",
        "info fixtures/conv_float.mge",
        "compare fixtures/feeds/conv_data.npy fixtures/feeds/conv_data.npy",
    ] {
        let (_, stderr) = run_expecting(&mut mge_in_shell(&format!("exec \"$0\" {command} 1<>/dev/null")), 0);
        assert_eq!(stderr, "", "{command} 1<>/dev/null");
        let (_, stderr) = run_expecting(&mut mge_in_shell(&format!("exec \"$0\" {command} >&-")), 2);
        assert_eq!(
            stderr, "mge: error: cannot write the result: stdout is closed\n",
            "{command} >&-"
        );
    }
}

/// A mutant from the sweep that crashed the engine: an operator's vtable
/// offset moved onto a 4-byte vtable, so the operator has no fields and the
/// loader reads its missing type.
#[test]
fn an_operator_without_its_type_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = fixture("conv_float_tc1.mge");
    assert_eq!(
        bytes[3988], 30,
        "the fixture changed: find the operator's vtable offset anew"
    );
    bytes[3988] = 4;
    let model = write(dir.path(), "no_type.mge", &bytes);
    refused(mge().arg("info").arg(&model), "required field 0 is missing");
}

/// The most memory a refusal may take: the engine is never loaded for one.
const REFUSAL_KIB: u64 = 200 << 10;

/// Exit 2 with one `mge: error:` line holding `needle` (and its hint, if
/// any), in little memory.
fn refused_lean(dir: &Path, args: &[&str], needle: &str) {
    let (code, stderr, kib) = measured(dir, args);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    let hinted = lines.len() == 2 && lines[1].starts_with("hint: ");
    assert!(
        (lines.len() == 1 || hinted) && lines[0].starts_with("mge: error: ") && lines[0].contains(needle),
        "{args:?}, {needle:?}: {stderr}"
    );
    assert!(kib < REFUSAL_KIB, "{args:?}: peak RSS {kib} KiB");
}

fn path_arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A file that never ends, a FIFO, or one larger than its
/// kind may be is refused before it is read, in one line and little memory.
#[test]
fn reads_are_bounded_and_of_regular_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("x.npy");
    mkfifo(&fifo);
    let big = dir.path().join("big.json");
    std::fs::File::create(&big).unwrap().set_len(2 << 20).unwrap();
    let model = root().join("fixtures/conv_float.mge");
    let feed = format!("data:{}", path_arg(&fifo));
    let cases: [(&[&str], &str); 5] = [
        (
            &["-i", "@/dev/zero"],
            "spec file /dev/zero is not a regular file but a character device",
        ),
        (
            &["--options", "/dev/zero"],
            "options file /dev/zero is not a regular file",
        ),
        (
            &["--options", path_arg(&big)],
            "holds 2097152 bytes, over the limit of 1 MiB",
        ),
        (&["-i", &feed], "is not a regular file but a FIFO"),
        (
            &["--fast-run", "--fast-run-cache", "/dev/zero"],
            "fast-run cache /dev/zero is not a regular file",
        ),
    ];
    for (args, needle) in cases {
        let mut command = vec!["run", "-q", path_arg(&model)];
        command.extend(args);
        refused_lean(dir.path(), &command, needle);
    }
    refused_lean(dir.path(), &["compare", path_arg(&fifo), path_arg(&fifo)], "a FIFO");
    refused_lean(
        dir.path(),
        &["run", "-q", path_arg(&model), "--model-key", "@/dev/zero"],
        "key file /dev/zero is not a regular file",
    );
}

fn copy_fixture(dir: &Path, name: &str, as_name: &str) -> PathBuf {
    let path = dir.join(as_name);
    std::fs::copy(root().join("fixtures").join(name), &path).unwrap();
    path
}

/// No output replaces an input of its command, whatever
/// the command, whatever the name (a hard link too); refused before any work.
#[test]
fn no_output_replaces_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let model = copy_fixture(dir.path(), "conv_float.mge", "m.mge");
    let container = copy_fixture(dir.path(), "conv_float_tc1.mge", "m_tc.mge");
    let hard = dir.path().join("hard.mge");
    std::fs::hard_link(&model, &hard).unwrap();
    let feeds = dir.path().join("feeds");
    std::fs::create_dir(&feeds).unwrap();
    let feed = copy_fixture(&feeds, "feeds/conv_data.npy", "data.npy");
    let originals: Vec<(PathBuf, Vec<u8>)> = [&model, &container, &feed]
        .map(|path| (path.clone(), std::fs::read(path).unwrap()))
        .to_vec();
    let (m, tc, h, d, f) = (
        path_arg(&model),
        path_arg(&container),
        path_arg(&hard),
        path_arg(dir.path()),
        path_arg(&feeds),
    );
    let data = format!("data:{}", path_arg(&feed));
    let cases: [&[&str]; 7] = [
        &["run", "-q", m, "--iter", "1", "--profile", m],
        &["profile", "-q", m, "--iter", "1", "-o", h],
        &["check", "-q", tc, "--junit", tc],
        &["tune", "-q", m, "--budget", "5", "--save", m],
        &["dump", "-q", m, "--layout-transform-model", m],
        &["run", "-q", m, "-i", &data, "--iter", "1", "--outputs", f],
        &["dump", "-q", m, "--io", d],
    ];
    for args in cases {
        refused_lean(dir.path(), args, "this command reads");
    }
    refused_lean(
        dir.path(),
        &["run", "-q", m, "--profile", m],
        "m.mge is a file this command reads",
    );
    for (path, bytes) in originals {
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{} was changed", path.display());
    }
    assert_eq!(left_in(&feeds).len(), 1, "nothing written beside the feed");
}

/// Runs `mge ARGS > FILE` in a shell; returns what FILE holds.
fn into_redirected_stdout(args: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.txt");
    let output = assert_cmd::Command::new("sh")
        .timeout(COMMAND_TIMEOUT)
        .arg("-c")
        .arg(format!("exec \"$0\" {args} > \"$1\""))
        .arg(mge().get_program())
        .arg(&file)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(&file).unwrap()
}

/// `/dev/stdout` redirected to a file is written through
/// stdout: the file keeps the report and gets the trace or JUnit too.
#[test]
fn reports_to_dev_stdout_keep_the_redirected_file() {
    let profiled = into_redirected_stdout("profile -q fixtures/conv_float.mge --iter 1 -o /dev/stdout");
    assert!(
        profiled.starts_with("{\"displayTimeUnit\"") && profiled.contains("trace    /dev/stdout"),
        "{profiled}"
    );
    let checked = into_redirected_stdout("check -q fixtures/conv_float_tc1.mge --junit /dev/stdout");
    assert!(
        checked.contains("#0: passed") && checked.contains("<testsuites") && checked.ends_with("1 passed, 0 failed\n"),
        "{checked}"
    );
    let run = into_redirected_stdout("run -q fixtures/conv_float.mge --iter 1 --json --profile /dev/stdout");
    assert!(
        run.contains("\"traceEvents\"") && run.contains("\"timing_ms\""),
        "{run}"
    );
}

/// `dump --io` stopped while it writes leaves no partial
/// folder and no staging; one that fails leaves none either.
#[test]
fn an_interrupted_or_failed_io_dump_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let io = dir.path().join("io");
    // A large batch: the dump takes seconds to convert, and the signal lands in the middle.
    let mut dump = std::process::Command::new(mge().get_program())
        .args([
            "dump",
            "-q",
            "fixtures/conv_float.mge",
            "-i",
            "data:#rand(0,1,4096,3,16,16)",
            "--io",
        ])
        .arg(&io)
        .current_dir(root())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while left_in(dir.path()).is_empty() {
        assert!(dump.try_wait().unwrap().is_none(), "the dump ended before it wrote");
        assert!(started.elapsed() < COMMAND_TIMEOUT, "the dump wrote nothing");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    interrupt(&mut dump, "TERM", std::time::Duration::from_secs(30));
    let left = left_in(dir.path());
    assert!(
        left.is_empty() || (left == [io.clone()] && io.join("index.json").is_file()),
        "left: {left:?}"
    );

    // A name of the set taken by a folder: nothing of the set moves in.
    std::fs::create_dir_all(io.join("index.json")).unwrap();
    let (_, stderr) = run_expecting(
        mge().args(["dump", "-q", "fixtures/conv_float.mge", "--io"]).arg(&io),
        2,
    );
    assert!(stderr.contains("index.json: it is a folder"), "{stderr}");
    assert_eq!(left_in(&io), [io.join("index.json")]);
    assert_eq!(left_in(dir.path()), std::slice::from_ref(&io), "no staging left");
}

/// Numbers beyond any use are one-line usage errors, in
/// little memory (they were a panic, an abort blamed on the engine, runs
/// without end); a timeout under `--duration` says how many runs were done.
#[test]
fn numbers_out_of_range_are_one_line_usage_errors() {
    let cases: [(&[&str], &str); 7] = [
        (&["--iter", "18446744073709551615"], "is not in 1..=1000000"),
        (&["--iter", "1000000000000"], "is not in 1..=1000000"),
        (&["--warmup", "18446744073709551615"], "is not in 0..=1000000"),
        (&["--threads", "100000"], "is not in 1..=1024"),
        (&["--duration", "1e30"], "1e30 seconds is more than 30 days"),
        (&["--timeout", "1e30"], "1e30 seconds is more than 30 days"),
        (&["--graph-opt-level", "99"], "99 is not in 0..=3"),
    ];
    for (args, needle) in cases {
        let mut command = vec!["run", "-q", "fixtures/conv_float.mge"];
        command.extend(args);
        refused_lean(&root(), &command, &format!("invalid value '{}'", args[1]));
        refused_lean(&root(), &command, needle);
    }
    // --duration stops at 1,000,000 runs, which a batch of one finishes in under
    // 10 s on a quiet machine; a batch of 64 (~0.4 ms a run) outlasts the timeout.
    let (_, stderr) = run_expecting(
        mge().args([
            "run",
            "-q",
            "fixtures/conv_float.mge",
            "-i",
            "data:#rand(0,1,64,3,16,16)",
            "--warmup",
            "0",
            "--duration",
            "1000",
            "--timeout",
            "10",
        ]),
        2,
    );
    assert!(
        stderr.contains("stopped after --timeout 10s during the timed runs of --duration 1000s (at least ")
            && stderr.contains(" runs done)"),
        "{stderr}"
    );
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let (_, stderr) = run_expecting(
        mge().args([
            "run",
            "-q",
            "fixtures/conv_float.mge",
            "--iter",
            "1",
            "--warmup",
            "0",
            "--threads",
            "64",
        ]),
        0,
    );
    let warned = format!("warning: --threads 64 is more than the {cores} cores here");
    assert_eq!(stderr.contains(&warned), cores < 64, "{stderr}");
}

/// Against what MegEngine computes on the fixture
/// (`fixtures/nonfinite_manifest.json`): NaN and infinities are said on
/// stderr, counted in JSON, and fail the run under `--check-finite`.
#[test]
fn non_finite_outputs_are_said_and_fail_under_check_finite() {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root().join("fixtures/nonfinite_manifest.json")).unwrap()).unwrap();
    let (model, container, feed) = (
        manifest["model"].as_str().unwrap(),
        manifest["container"].as_str().unwrap(),
        manifest["input"].as_str().unwrap(),
    );
    let logged = &manifest["outputs"]["logged"];
    let (nan, inf, size) = (
        logged["nan"].as_u64().unwrap(),
        logged["inf"].as_u64().unwrap(),
        logged["size"].as_u64().unwrap(),
    );
    assert_eq!((nan, inf), (1, 1), "the warning below is worded for these counts");
    let said = format!("output 'logged' holds 1 NaN and 1 infinity among {size} values");
    let run = ["run", "-q", model, "-i", feed, "--iter", "1", "--json"];
    let (stdout, stderr) = run_expecting(mge().args(run), 0);
    assert!(stderr.contains(&format!("warning: {said}")), "{stderr}");
    let outputs = json_of(&stdout)["outputs"].as_array().unwrap().clone();
    for output in outputs {
        let expected = &manifest["outputs"][output["name"].as_str().unwrap()];
        assert_eq!(
            (&output["nan"], &output["inf"]),
            (&expected["nan"], &expected["inf"]),
            "{output}"
        );
    }
    let (_, stderr) = run_expecting(mge().args(run).arg("--check-finite"), 1);
    assert!(
        stderr.contains(&format!("check failed: {said} (--check-finite)")),
        "{stderr}"
    );

    let (stdout, _) = run_expecting(mge().args(["check", "-q", container]), 0);
    assert!(stdout.contains("#0: skipped"), "{stdout}");
    let (stdout, stderr) = run_expecting(mge().args(["check", "-q", container, "--check-finite"]), 1);
    assert!(
        stdout.contains(&format!("#0: FAILED: {said} (--check-finite)")),
        "{stdout}"
    );
    assert!(stderr.contains(&format!("#0: {said}")), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let io = dir.path().join("io");
    let (_, stderr) = run_expecting(
        mge()
            .args(["dump", "-q", model, "-i", feed, "--check-finite", "--io"])
            .arg(&io),
        1,
    );
    let first = format!(
        "var '{}' of operator ",
        manifest["first_non_finite_var"].as_str().unwrap()
    );
    assert!(
        stderr.contains(&format!("check failed: {first}")) && stderr.contains("is the first, in execution order"),
        "{stderr}"
    );
    assert!(io.join("index.json").is_file(), "the dump is written all the same");
    let (_, stderr) = run_expecting(
        mge().args(["run", "-q", "fixtures/conv_float.mge", "--iter", "1", "--check-finite"]),
        0,
    );
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// A garbled fast-run cache, `--outputs -`, `#rand` ranges
/// the dtype cannot hold, and model folders with dangling links or one file
/// under two names.
#[test]
fn smaller_hostile_inputs_are_refused_or_reported() {
    let dir = tempfile::tempdir().unwrap();
    let cache = write(dir.path(), "garbled.cache", b"\x01\0\0\0\xff\xff\xff\x7fnot a cache");
    let model = root().join("fixtures/conv_float.mge");
    refused_lean(
        dir.path(),
        &["run", "-q", path_arg(&model), "--fast-run-cache", path_arg(&cache)],
        "garbled.cache is not a fast-run cache the engine wrote",
    );
    assert_eq!(std::fs::read(&cache).unwrap(), b"\x01\0\0\0\xff\xff\xff\x7fnot a cache");
    refused_lean(
        dir.path(),
        &["run", "-q", path_arg(&model), "--outputs", "-"],
        "'-' is no folder name",
    );
    for (model, spec, needle) in [
        (
            "fixtures/image_uint8.mge",
            "#rand(0,1000)",
            "do not fit uint8, which holds 0 to 255",
        ),
        ("fixtures/conv_float.mge", "#rand(-1e39,0)", "do not fit float32"),
    ] {
        refused(mge().args(["run", "-q", model, "-i", spec]), needle);
    }
    assert_eq!(left_in(dir.path()), [cache]);

    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let original = copy_fixture(&models, "conv_float_tc1.mge", "a.mge");
    std::os::unix::fs::symlink(&original, models.join("b.mge")).unwrap();
    std::os::unix::fs::symlink(models.join("gone.mge"), models.join("c.mge")).unwrap();
    let (stdout, stderr) = run_expecting(mge().args(["check", "--json"]).arg(&models), 1);
    let report = json_of(&stdout);
    let checked: Vec<&str> = report["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|model| model["model"].as_str().unwrap())
        .collect();
    assert_eq!(checked, [path_arg(&original), path_arg(&models.join("c.mge"))]);
    assert!(
        report["models"][1]["error"].as_str().unwrap().contains("c.mge"),
        "{stdout}"
    );
    assert!(stderr.contains("b.mge is the file"), "{stderr}");
}

/// A truncated shared library given to load (`--lite-lib`, `--c-opr-lib`) is
/// refused before the loader maps it: touching its missing pages ended
/// `runtime info` with SIGBUS and no word. Found by scripts/hostile_sweep.sh.
#[test]
fn a_truncated_library_is_refused_before_it_is_loaded() {
    let (stdout, _) = run_expecting(mge().args(["runtime", "info", "--json"]), 0);
    let lite = std::fs::read(json_of(&stdout)["path"].as_str().unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = write(dir.path(), "liblite_cut.so", &lite[..lite.len() / 2]);
    refused(mge().args(["runtime", "info", "--lite-lib"]).arg(&cut), "is cut short");
    refused(
        mge()
            .args(["run", "-q", "fixtures/conv_float.mge", "--lite-lib"])
            .arg(&cut),
        "is cut short",
    );
    refused(
        mge()
            .args(["run", "-q", "fixtures/conv_float.mge", "--c-opr-lib"])
            .arg(&cut),
        "--c-opr-lib",
    );
}
