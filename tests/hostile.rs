//! Input made to break the tool (issue 9): crafted and mutated models, feeds
//! whose headers lie, output targets that are not plain files. Each ends in a
//! clear error (exit 2, one line) or a normal result, never a crash, and
//! nothing is left half-written.

mod common;

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use common::*;

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
/// thousands is in the note): every one is a result or an error.
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
        (dir.path().join("a/b"), "does not exist"),
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

/// Peak resident memory of a finished child, in KiB (`/usr/bin/time -v` reads the same).
fn peak_rss_kib(command: &mut assert_cmd::Command, code: i32) -> u64 {
    run_expecting(command, code);
    // SAFETY: getrusage with a valid out-pointer.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) }, 0);
    usage.ru_maxrss as u64
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
        mge().args(["run", "-q", "fixtures/conv_float.mge", "-i", "#rand(0,1,1073741824)"]),
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
