//! Input made to break the tool (issue 9): crafted and mutated models, feeds
//! whose headers lie, output targets that are not plain files. Each ends in a
//! clear error (exit 2, one line) or a normal result, never a crash, and
//! nothing is left half-written.

mod common;

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
