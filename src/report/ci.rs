//! Reports where CI shows them: the summary as GitHub-flavoured markdown
//! (`--markdown`, and appended to the file `GITHUB_STEP_SUMMARY` names), and
//! each failure as a GitHub Actions `::error` workflow command when
//! `GITHUB_ACTIONS=true`. They say what the JUnit suites say (`junit::Suite`).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::junit::{Outcome, Suite};
use super::table::Table;
use crate::messages::warning;
use crate::output_files::{claim_file, write_atomically};
use crate::text::{counted, workflow_command_data, workflow_command_property};

/// Where a command's CI reports go, settled once from its flags and the
/// environment GitHub Actions sets.
#[derive(Debug, Default)]
pub struct CiReports {
    /// `--markdown FILE`; `-` is stdout.
    markdown: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`: appended to, never replaced.
    step_summary: Option<PathBuf>,
    /// `GITHUB_ACTIONS=true`: on stderr when stdout holds JSON, which the
    /// runner reads workflow commands from too, so that the JSON stays whole.
    annotations: Option<Stream>,
}

#[derive(Debug, Clone, Copy)]
enum Stream {
    Stdout,
    Stderr,
}

impl CiReports {
    /// From `--markdown` and `--json`, and the environment; claims the
    /// markdown file before any work, as every report file is.
    pub fn from_flags(markdown: Option<PathBuf>, json: bool) -> Result<CiReports> {
        let markdown = claim_markdown(markdown, json)?;
        let step_summary = std::env::var_os("GITHUB_STEP_SUMMARY")
            .filter(|path| !path.is_empty())
            .map(PathBuf::from);
        let on_actions = std::env::var_os("GITHUB_ACTIONS").is_some_and(|value| value == "true");
        let annotations = on_actions.then_some(if json { Stream::Stderr } else { Stream::Stdout });
        Ok(CiReports {
            markdown,
            step_summary,
            annotations,
        })
    }

    /// Writes `command`'s summary of `suites` where it was asked for. A step
    /// summary that cannot be appended to is a warning: the check stands.
    pub fn write(&self, command: &str, suites: &[Suite]) -> Result<()> {
        if let Some(stream) = self.annotations {
            let text = annotations(suites);
            let _ = match stream {
                Stream::Stdout => std::io::stdout().lock().write_all(text.as_bytes()),
                Stream::Stderr => std::io::stderr().lock().write_all(text.as_bytes()),
            };
        }
        if self.markdown.is_none() && self.step_summary.is_none() {
            return Ok(());
        }
        let summary = markdown_summary(command, suites);
        if let Some(path) = &self.step_summary {
            let appended = OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .and_then(|mut file| file.write_all(summary.as_bytes()));
            if let Err(error) = appended {
                warning(format!("GITHUB_STEP_SUMMARY {}: {error}", path.display()));
            }
        }
        write_markdown(self.markdown.as_deref(), &summary)
    }
}

/// Claims `--markdown FILE` before any work, as every report file is: `-`
/// becomes stdout, which `--json` holds whole.
pub fn claim_markdown(markdown: Option<PathBuf>, json: bool) -> Result<Option<PathBuf>> {
    if json && markdown.as_deref() == Some(Path::new("-")) {
        bail!("--markdown - and --json both write stdout: give --markdown a file");
    }
    let markdown = markdown.map(|path| match path == Path::new("-") {
        true => PathBuf::from("/dev/stdout"),
        false => path,
    });
    if let Some(path) = &markdown {
        claim_file("--markdown", path).with_context(|| format!("--markdown {}", path.display()))?;
    }
    Ok(markdown)
}

/// Writes `summary` to the claimed `--markdown` file, whole or not at all.
pub fn write_markdown(path: Option<&Path>, summary: &str) -> Result<()> {
    match path {
        Some(path) => write_atomically(path, summary.as_bytes()).context("--markdown"),
        None => Ok(()),
    }
}

/// A heading with the tally, then a row per testcase: `check`'s or
/// `compare`'s summary in GitHub-flavoured markdown.
pub fn markdown_summary(command: &str, suites: &[Suite]) -> String {
    let mut table = Table::new(&["model", "case", "result", "time (s)", "message"], &[3]);
    let mut tally = [0usize; 4];
    for suite in suites {
        for case in &suite.cases {
            let (index, result, message) = match &case.outcome {
                Outcome::Passed => (0, "passed", ""),
                Outcome::Noted(note) => (0, "passed", note.as_str()),
                Outcome::Failure(message) => (1, "FAILED", message.as_str()),
                Outcome::Error(message) => (2, "ERROR", message.as_str()),
                Outcome::Skipped(message) => (3, "skipped", message.as_str()),
            };
            tally[index] += 1;
            table.row(vec![
                suite.name.clone(),
                case.name.clone(),
                result.to_string(),
                format!("{:.3}", case.time_s),
                message.to_string(),
            ]);
        }
    }
    let counts = ["passed", "failed", "errors", "skipped"]
        .iter()
        .zip(tally)
        .filter(|(name, count)| *count > 0 || **name == "failed")
        .map(|(name, count)| format!("{count} {name}"));
    format!(
        "### {command}: {}, {}\n\n{}\n",
        counted(tally.iter().sum(), "case"),
        counts.collect::<Vec<_>>().join(", "),
        table.render_markdown()
    )
}

/// A `::error` workflow command per failed or erroneous case, titled with
/// its model and case.
fn annotations(suites: &[Suite]) -> String {
    let mut out = String::new();
    for suite in suites {
        for case in &suite.cases {
            if let Outcome::Failure(message) | Outcome::Error(message) = &case.outcome {
                let title = format!("{}: {}", suite.name, case.name);
                out.push_str(&format!(
                    "::error title={}::{}\n",
                    workflow_command_property(&title),
                    workflow_command_data(message)
                ));
            }
        }
    }
    out
}
