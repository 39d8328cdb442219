//! Runs a page's sessions and holds what each command printed against what
//! the page shows, through snapbox: `...` on a line of its own stands for any
//! lines, `[..]` for any text within a line, `[CWD]` for the session's folder.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, OnceLock};

use assert_cmd::prelude::CommandCargoExt;
use snapbox::{Assert, Data};

use super::page::{Block, Page, Step};
use crate::common::{root, COMMAND_TIMEOUT};

/// Set to `overwrite`, the pages are rewritten with what the commands printed
/// (lines that match keep their placeholders): review the diff, then put
/// placeholders where a figure depends on the machine.
const UPDATE_VARIABLE: &str = "MGE_DOCS";

/// Lines the machine's weather decides, left out of what a command printed:
/// `run`'s warning when other processes made the timed runs noisy, and the
/// one about more `--threads` than this machine has cores.
const WEATHER: [&str; 2] = ["warning: the timed runs are noisy: ", "warning: --threads "];

/// Runs every session of `path` not marked `<!-- not run: ... -->`; fails
/// with every mismatch of the page, each with its line and a diff.
pub fn check_page(path: &str) {
    let page = Page::read(&root(), path);
    let mut failures = Vec::new();
    let mut rewrites = Vec::new();
    for block in page.sessions().filter(|block| block.not_run.is_none()) {
        let printed = run_session(path, block);
        for (step, actual) in block.steps().into_iter().zip(printed) {
            if let Err(failure) = compare(&page, &step, &actual) {
                failures.push(failure);
            }
            let output = matched(&step, &actual);
            rewrites.push((step, output));
        }
    }
    if std::env::var(UPDATE_VARIABLE).as_deref() == Ok("overwrite") {
        rewrite(&page, &rewrites);
        return;
    }
    assert!(
        failures.is_empty(),
        "{} of {path}'s examples print other than the page shows (- the page, + mge; \
         {UPDATE_VARIABLE}=overwrite rewrites the page):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The commands of one session, in order, in a new folder that sees the
/// repository's files (`fixtures/`, `bench/`) under their own names: each
/// command's stdout and stderr together, as a terminal shows them.
fn run_session(path: &str, block: &Block) -> Vec<String> {
    let folder = tempfile::tempdir().expect("a temporary folder");
    for entry in std::fs::read_dir(root()).expect("the repository") {
        let name = entry.expect("an entry").file_name();
        if name != ".git" && name != "target" {
            std::os::unix::fs::symlink(root().join(&name), folder.path().join(&name)).expect("a link");
        }
    }
    let mut status = 0;
    let mut printed = Vec::new();
    for step in block.steps() {
        // `(exit N)` hands the previous command's status on, for `echo $?`.
        let script = format!("exec 2>&1\n(exit {status})\n{}", step.command);
        let (code, output) = run_with_deadline(&script, folder.path())
            .unwrap_or_else(|err| panic!("{path}:{}: $ {}: {err}", step.line, step.command));
        status = code;
        let text = String::from_utf8_lossy(&output).replace(&folder.path().display().to_string(), "[CWD]");
        printed.push(
            text.lines()
                .filter(|line| !WEATHER.iter().any(|weather| line.starts_with(weather)))
                .map(|line| format!("{line}\n"))
                .collect(),
        );
    }
    printed
}

/// `sh -c SCRIPT` in `folder`, in a process group of its own that is killed
/// whole at the tests' deadline (killing `sh` alone would leave its `mge`
/// holding the output pipe open): its exit code and stdout.
fn run_with_deadline(script: &str, folder: &Path) -> Result<(i32, Vec<u8>), String> {
    let mut child = Command::new("sh")
        .args(["-c", script])
        .current_dir(folder)
        .env("PATH", search_path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|err| format!("cannot start sh: {err}"))?;
    let mut stdout = child.stdout.take().expect("a piped stdout");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = sender.send(stdout.read_to_end(&mut bytes).map(|_| bytes));
    });
    // Read until the pipe ends, when every process of the command is done with
    // it: a process left in the background holds it too, and meets the deadline.
    match receiver.recv_timeout(COMMAND_TIMEOUT) {
        Ok(output) => {
            let status = child.wait().map_err(|err| err.to_string())?;
            Ok((status.code().unwrap_or(128), output.map_err(|err| err.to_string())?))
        }
        Err(_) => {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            Err(format!("did not finish within {COMMAND_TIMEOUT:?}"))
        }
    }
}

/// `PATH` with a folder in front whose `mge` is the binary under test.
fn search_path() -> String {
    static FOLDER: OnceLock<PathBuf> = OnceLock::new();
    let folder = FOLDER.get_or_init(|| {
        let folder = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-bin");
        std::fs::create_dir_all(&folder).expect("a folder for the binary");
        let link = folder.join("mge");
        let binary = Command::cargo_bin("mge")
            .expect("the mge binary is built")
            .get_program()
            .to_owned();
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(binary, &link).expect("a link to the binary");
        folder
    });
    format!("{}:{}", folder.display(), std::env::var("PATH").unwrap_or_default())
}

/// snapbox's matching, with backslashes kept (mge shows `\n` in names).
fn assert() -> Assert {
    Assert::new().normalize_paths(false)
}

/// What `step` printed against what the page shows: the diff, when they differ.
fn compare(page: &Page, step: &Step, actual: &str) -> Result<(), String> {
    let name = format!("{}:{}: $ {}", page.path, step.line, step.command);
    assert()
        .try_eq(Some(&name), Data::text(actual), Data::text(expected(step)))
        .map_err(|err| err.to_string())
}

fn expected(step: &Step) -> String {
    step.expected.iter().map(|line| format!("{line}\n")).collect()
}

/// What `step` printed, with the page's lines where they match it (placeholders kept).
fn matched(step: &Step, actual: &str) -> String {
    let (normalized, _) = assert().normalize(Data::text(actual), Data::text(expected(step)));
    normalized.render().unwrap_or_default()
}

/// Writes each step's `matched` output in place of what the page showed.
fn rewrite(page: &Page, rewrites: &[(Step, String)]) {
    let mut lines: Vec<String> = page.text.lines().map(str::to_string).collect();
    for (step, output) in rewrites.iter().rev() {
        let start = step.line; // the line after the `$` line, from 0
                               // A session in a list item is indented: its output lines are too.
        let command = &lines[start - 1];
        let indent = command[..command.len() - command.trim_start().len()].to_string();
        let output = output.lines().map(|line| format!("{indent}{line}"));
        lines.splice(start..start + step.expected.len(), output);
    }
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(root().join(&page.path), text).unwrap_or_else(|err| panic!("{}: {err}", page.path));
}
