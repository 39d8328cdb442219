//! The examples of README.md and docs/*.md, held against the program: each
//! session a page shows (`$ mge ...` and what it printed) is run and its output
//! compared, and every other `mge` command line a page shows is parsed by mge.
//! How an example is written so that these tests check it:
//! docs/README.md, "Examples the tests run".

mod commands;
mod page;
mod session;

use std::collections::BTreeSet;

use crate::common::*;
use page::Page;

/// The pages whose sessions the suite runs, one test each (below).
const PAGES_WITH_SESSIONS: [&str; 8] = [
    "README.md",
    "docs/check.md",
    "docs/compare.md",
    "docs/conventions.md",
    "docs/info.md",
    "docs/profile.md",
    "docs/run.md",
    "docs/runtime.md",
];

#[test]
fn readme_examples() {
    session::check_page("README.md");
}

#[test]
fn check_examples() {
    session::check_page("docs/check.md");
}

#[test]
fn compare_examples() {
    session::check_page("docs/compare.md");
}

#[test]
fn conventions_examples() {
    session::check_page("docs/conventions.md");
}

#[test]
fn info_examples() {
    session::check_page("docs/info.md");
}

#[test]
fn profile_examples() {
    session::check_page("docs/profile.md");
}

#[test]
fn run_examples() {
    session::check_page("docs/run.md");
}

#[test]
fn runtime_examples() {
    session::check_page("docs/runtime.md");
}

/// README.md and every page of docs/.
fn pages() -> Vec<Page> {
    let mut paths = vec!["README.md".to_string()];
    for entry in std::fs::read_dir(root().join("docs")).expect("docs/") {
        let name = entry.expect("an entry").file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            paths.push(format!("docs/{name}"));
        }
    }
    paths.sort();
    paths.iter().map(|path| Page::read(&root(), path)).collect()
}

#[test]
fn every_page_with_sessions_has_its_test() {
    let pages = pages();
    let with_sessions: BTreeSet<&str> = pages
        .iter()
        .filter(|page| page.sessions().any(|block| block.not_run.is_none()))
        .map(|page| page.path.as_str())
        .collect();
    assert_eq!(
        with_sessions,
        BTreeSet::from(PAGES_WITH_SESSIONS),
        "add a test per page above"
    );
    for page in &pages {
        for block in &page.blocks {
            assert!(
                block.not_run.is_none() || block.is_session(),
                "{}:{}: `<!-- not run: ... -->` stands before a session (`$ mge ...`) only",
                page.path,
                block.first_line - 1
            );
        }
    }
}

/// The commands shown without their output parse: every flag exists and
/// takes the value given (`mge ARGS --help`, which parses and runs nothing).
#[test]
fn shown_commands_parse() {
    let mut failures = Vec::new();
    let mut parsed = 0;
    for page in pages() {
        for command in commands::command_lines(&page) {
            let output = mge()
                .args(command.parse_only())
                .output()
                .unwrap_or_else(|err| panic!("{}:{}: {err}", page.path, command.line));
            parsed += 1;
            if !output.status.success() {
                let stderr = String::from_utf8_lossy(&output.stderr);
                let error = stderr
                    .lines()
                    .find(|line| !line.trim().is_empty())
                    .unwrap_or("(nothing on stderr)");
                let shown = command.words.join(" ");
                failures.push(format!("{}:{}: mge {shown}\n  {}", page.path, command.line, error));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "commands the pages show that mge does not take:\n{}",
        failures.join("\n")
    );
    assert!(parsed > 80, "only {parsed} commands found: is the page reader broken?");
}
