//! No output lands on an input under any
//! name (a descriptor, stdout), no two outputs take one file, outputs land on
//! a mounted volume, and a machine out of descriptors is the tool's error,
//! not a model's.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::{copy_fixture, path_arg, refused_lean};
use crate::common::*;

/// A runtime that does not exist: a command that says so got past its checks of outputs.
const NO_RUNTIME: [&str; 2] = ["--lite-lib", "/no/such/lite.so"];

/// `sh -c SCRIPT` from the repository root with `$MGE` the binary and `$D`
/// the folder `dir`, under the tests' deadline: for descriptors and limits
/// that a command line alone cannot set.
fn shell(script: &str, dir: &Path) -> Output {
    assert_cmd::Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("MGE", mge().get_program())
        .env("D", dir)
        .current_dir(root())
        .timeout(COMMAND_TIMEOUT)
        .output()
        .unwrap_or_else(|err| panic!("{script}: {err}"))
}

/// Exit 2 with one `mge: error:` line that holds `needle`, and nothing else on stderr.
fn refused_with(output: &Output, what: &str, needle: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(output.status.code(), Some(2), "{what}: {stderr}");
    assert!(
        lines.len() == 1 && lines[0].starts_with("mge: error: ") && lines[0].contains(needle),
        "{what}, {needle:?}: {stderr}"
    );
}

/// Each file with what it holds now, to tell that it is left as it was.
fn contents(files: &[&Path]) -> Vec<(PathBuf, Vec<u8>)> {
    files
        .iter()
        .map(|file| (file.to_path_buf(), std::fs::read(file).unwrap()))
        .collect()
}

fn assert_unchanged(originals: &[(PathBuf, Vec<u8>)]) {
    for (file, bytes) in originals {
        assert_eq!(&std::fs::read(file).unwrap(), bytes, "{} was changed", file.display());
    }
}

/// An output that reaches an input through a descriptor
/// (`/dev/fd/3`, `/dev/stdin`), or a stdout that is an input's file
/// (`1<>`, `>>`), is refused before any work; the input is left as it was.
#[test]
fn no_output_reaches_an_input_through_a_descriptor() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture(dir.path(), "conv_float.mge", "m.mge");
    copy_fixture(dir.path(), "conv_float_tc1.mge", "m_tc.mge");
    copy_fixture(dir.path(), "feeds/conv_data.npy", "data.npy");
    let [model, container, feed] = ["m.mge", "m_tc.mge", "data.npy"].map(|name| dir.path().join(name));
    let originals = contents(&[&model, &container, &feed]);
    let through_fd = format!("/dev/fd/3 is {}", model.display());
    let cases = [
        (
            r#"exec "$MGE" run -q "$D/m.mge" --iter 1 --profile /dev/fd/3 3<"$D/m.mge""#,
            through_fd.as_str(),
        ),
        (
            r#"exec "$MGE" check -q "$D/m_tc.mge" --junit /dev/fd/3 3<"$D/m_tc.mge""#,
            "m_tc.mge, a file this command reads",
        ),
        (
            r#"exec "$MGE" pack-testcases -q "$D/m.mge" -o /dev/fd/3 3<"$D/m.mge""#,
            through_fd.as_str(),
        ),
        (
            r#"exec "$MGE" run -q "$D/m.mge" --iter 1 --profile /dev/stdin 0<>"$D/m.mge""#,
            "/dev/stdin is",
        ),
        (
            r#"exec "$MGE" run -q "$D/m.mge" --iter 1 --json 1<>"$D/m.mge""#,
            "stdout goes to",
        ),
        (r#"exec "$MGE" info "$D/m.mge" >>"$D/m.mge""#, "stdout goes to"),
        (
            r#"exec "$MGE" run -q fixtures/conv_float.mge -i "data:$D/data.npy" --iter 1 >>"$D/data.npy""#,
            "data.npy, a file this command reads",
        ),
        (
            r#"exec "$MGE" compare -q "$D/m.mge" --b-naive >>"$D/m.mge""#,
            "stdout goes to",
        ),
    ];
    for (script, needle) in cases {
        refused_with(&shell(script, dir.path()), script, needle);
    }
    assert_unchanged(&originals);
    assert_eq!(left_in(dir.path()).len(), 3, "nothing written beside the inputs");
}

/// Two outputs of one command never take one file or folder, under
/// any name (a hard link, a path through a symlinked folder); refused
/// before any work.
#[test]
fn two_outputs_never_take_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let model = copy_fixture(dir.path(), "conv_float.mge", "m.mge");
    let container = copy_fixture(dir.path(), "conv_float_tc1.mge", "m_tc.mge");
    let (cache, taken, hard) = (
        dir.path().join("x.cache"),
        dir.path().join("taken"),
        dir.path().join("hard"),
    );
    std::fs::write(&taken, "an earlier cache").unwrap();
    std::fs::hard_link(&taken, &hard).unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
    std::fs::create_dir(dir.path().join("s.cache")).unwrap();
    let (m, tc, x, t, h) = (
        path_arg(&model),
        path_arg(&container),
        path_arg(&cache),
        path_arg(&taken),
        path_arg(&hard),
    );
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (linked, real_o, d) = (path("link/o"), path("real/o"), path("d"));
    let (u, u_cache, s) = (path("u"), path("u.cache"), path("s"));
    let fast_run = ["--fast-run", "--fast-run-cache"];
    let cases: [(Vec<&str>, &str); 8] = [
        (
            [&["run", "-q", m, "--iter", "1"][..], &fast_run, &[x, "--profile", x]].concat(),
            "is also where --fast-run-cache goes",
        ),
        (
            [&["run", "-q", m, "--iter", "1"][..], &fast_run, &[t, "--profile", h]].concat(),
            "hard is also where --fast-run-cache goes",
        ),
        (
            [&["check", "-q", tc][..], &fast_run, &[x, "--junit", x]].concat(),
            "is also where --fast-run-cache goes",
        ),
        (
            vec![
                "run",
                "-q",
                m,
                "--iter",
                "1",
                "--outputs",
                &linked,
                "--profile",
                &real_o,
            ],
            "real/o is also where --outputs goes",
        ),
        (
            vec!["dump", "-q", m, "--io", &d, "--outputs", &d],
            "is also where --outputs goes",
        ),
        (
            vec!["tune", "-q", m, "--budget", "5", "--save", t, "--save-model", h],
            "hard is also where --save goes",
        ),
        // `--save FILE` writes `FILE.cache` too when fast-run wins: checked before the search.
        (
            vec!["tune", "-q", m, "--budget", "5", "--save", &u, "--save-model", &u_cache],
            "u.cache is also where --save's fast-run cache goes",
        ),
        (
            vec!["tune", "-q", m, "--budget", "5", "--save", &s],
            "s.cache is a folder",
        ),
    ];
    for (args, needle) in cases {
        refused_lean(dir.path(), &[&args[..], &NO_RUNTIME].concat(), needle);
    }
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "an earlier cache");
    assert!(!cache.exists() && left_in(&real).is_empty() && !dir.path().join("d").exists());
}

/// Stdout is an output too: no other takes its file, but outputs written
/// through a device may share it.
#[test]
fn no_output_takes_stdouts_file_but_devices_may_share() {
    let dir = tempfile::tempdir().unwrap();
    // The trace would replace the file the report goes to.
    refused_with(
        &shell(
            r#"exec "$MGE" run -q fixtures/conv_float.mge --iter 1 --profile "$D/t.json" > "$D/t.json""#,
            dir.path(),
        ),
        "--profile FILE > FILE",
        "t.json is also where stdout (the report) goes",
    );
    // Written through, both: nothing is replaced.
    let shared = shell(
        r#"exec "$MGE" run -q fixtures/conv_float.mge --iter 1 --profile /dev/null > /dev/null"#,
        dir.path(),
    );
    assert_eq!(
        shared.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&shared.stderr)
    );
}

/// A file inside a set's folder is fine unless the set takes its name.
#[test]
fn a_trace_may_lie_among_the_outputs_but_not_under_an_outputs_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let traced = |trace: &str| {
        let mut command = mge();
        command
            .args(["run", "-q", "fixtures/conv_float.mge", "--iter", "1", "--outputs"])
            .arg(&out)
            .arg("--profile")
            .arg(out.join(trace));
        command
    };
    run_expecting(&mut traced("trace.json"), 0);
    assert!(out.join("trace.json").is_file() && out.join("feat.npy").is_file());
    let (_, stderr) = run_expecting(&mut traced("feat.npy"), 2);
    assert!(
        stderr.ends_with("feat.npy: --profile goes there\n") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// Runs `script` (as `shell` does) in a mount namespace of its own, after
/// bind-mounting each source folder or file over its target. The tests run
/// as root, and so does CI; where mounting is not allowed this fails, saying
/// why, rather than skip.
fn with_bind_mounts(mounts: &[(&Path, &Path)], script: &str, dir: &Path) -> Output {
    const CANNOT_MOUNT: i32 = 97;
    let binds =
        format!(r#"while [ $# -gt 0 ]; do mount --bind "$1" "$2" || exit {CANNOT_MOUNT}; shift 2; done; {script}"#);
    let output = assert_cmd::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &binds, "sh"])
        .args(mounts.iter().flat_map(|(source, target)| [source, target]))
        .env("MGE", mge().get_program())
        .env("D", dir)
        .current_dir(root())
        .timeout(COMMAND_TIMEOUT)
        .output()
        .unwrap_or_else(|err| {
            panic!("this test needs `unshare` (util-linux) to mount in a namespace of its own: {err}")
        });
    assert_ne!(
        output.status.code(),
        Some(CANNOT_MOUNT),
        "this test needs to bind-mount (root, or a user namespace that may): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Sets of outputs land in a folder that is a mount of its own (a
/// container's volume: a rename into it from outside fails with EXDEV); a
/// file mounted on its own (EBUSY for a rename over it) is refused before any
/// work and written through a descriptor instead; a bind mount of an input's
/// folder is that folder.
#[test]
fn outputs_land_on_mounts() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["volume", "vol", "io_volume", "io", "feeds", "feeds_bound"];
    let [volume, vol, io_volume, io, feeds, feeds_bound] = names.map(|name| dir.path().join(name));
    for folder in names.map(|name| dir.path().join(name)) {
        std::fs::create_dir(folder).unwrap();
    }
    let feed = copy_fixture(&feeds, "feeds/conv_data.npy", "data.npy");
    let (report, report_source) = (dir.path().join("r.xml"), dir.path().join("r_source.xml"));
    std::fs::write(&report, "").unwrap();
    std::fs::write(&report_source, "kept").unwrap();
    let mounts = [
        (volume.as_path(), vol.as_path()),
        (&io_volume, &io),
        (&feeds, &feeds_bound),
        (&report_source, &report),
    ];
    let output = with_bind_mounts(
        &mounts,
        r#""$MGE" run -q fixtures/conv_float.mge -i "data:$D/feeds/data.npy" --iter 1 --outputs "$D/vol" > /dev/null || exit 11
"$MGE" dump -q fixtures/conv_float.mge --io "$D/io" > /dev/null || exit 12
"$MGE" check -q fixtures/conv_float_tc1.mge --junit /dev/fd/3 3>"$D/r.xml" > /dev/null || exit 13"#,
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_close(
        &read_f32(&volume.join("feat.npy")),
        &read_f32(&root().join("fixtures/ref/conv_float__conv_data/feat.npy")),
        "--outputs on a mount",
    );
    assert!(io_volume.join("index.json").is_file(), "{:?}", left_in(&io_volume));
    assert_eq!(left_in(&volume).len(), 1, "no staging left: {:?}", left_in(&volume));
    assert!(
        std::fs::read_to_string(&report_source).unwrap().contains("<testsuites"),
        "written through the descriptor"
    );

    std::fs::write(&report_source, "kept").unwrap();
    let refusals = [
        (
            r#"exec "$MGE" check -q fixtures/conv_float_tc1.mge --lite-lib /no/such/lite.so --junit "$D/r.xml""#,
            "r.xml is mounted on its own",
        ),
        (
            r#"exec "$MGE" run -q fixtures/conv_float.mge -i "data:$D/feeds/data.npy" --lite-lib /no/such/lite.so --outputs "$D/feeds_bound""#,
            "feeds/data.npy, which this command reads",
        ),
    ];
    for (script, needle) in refusals {
        refused_with(&with_bind_mounts(&mounts, script, dir.path()), script, needle);
    }
    assert_eq!(std::fs::read_to_string(&report_source).unwrap(), "kept");
    assert_eq!(left_in(&feeds), [feed]);
}

/// With too few descriptors for a second worker (`ulimit -n 10`,
/// `-j 2`), the check ends as the tool's error (exit 2), not as a model
/// that failed (exit 1).
#[test]
fn a_worker_that_cannot_start_is_the_tools_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = shell(
        r#"ulimit -n 10 && exec "$MGE" check -q fixtures/conv_float_tc1.mge fixtures/conv_float_tc3.mge -j 2"#,
        dir.path(),
    );
    refused_with(
        &output,
        "check -j 2 under ulimit -n 10",
        "cannot start a worker process: ",
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("Too many open files"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
