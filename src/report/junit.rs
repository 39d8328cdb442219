//! JUnit XML as CI systems read it (Jenkins, GitLab, GitHub annotations): a
//! `testsuite` per model, a `testcase` per thing checked of it. `check` and
//! `compare` say what their suites hold (`ModelCheck::junit_suite`,
//! `compare`'s pairs); the writing is here.

use std::fmt::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::output_files::{claim_file, write_atomically};
use crate::text::printable;

/// Claims `--junit`'s file before any work: not one of the command's inputs, nor stdout.
pub fn claim(junit: Option<&Path>) -> Result<()> {
    match junit {
        Some(junit) => claim_file("--junit", junit).with_context(|| format!("--junit {}", junit.display())),
        None => Ok(()),
    }
}

/// Writes `command`'s suites to `--junit`'s file, whole, where one was asked for.
pub fn write(junit: Option<&Path>, command: &str, suites: &[Suite]) -> Result<()> {
    match junit {
        Some(junit) => write_atomically(junit, junit_xml(command, suites).as_bytes()).context("--junit"),
        None => Ok(()),
    }
}

/// One model's `testsuite`.
pub struct Suite {
    pub name: String,
    pub cases: Vec<JunitCase>,
}

/// One `testcase`.
pub struct JunitCase {
    pub name: String,
    pub time_s: f64,
    pub outcome: Outcome,
}

/// How a `testcase` ended, with its message. An error (it could not be
/// checked) is not a failure (it was, and did not pass), as JUnit counts them.
pub enum Outcome {
    Passed,
    /// Passed, with something to say in the case's output (`system-out`).
    Noted(String),
    Failure(String),
    Error(String),
    Skipped(String),
}

/// The document for `suites`, of the tool's `command` (`mge check`).
pub fn junit_xml(command: &str, suites: &[Suite]) -> String {
    let mut body = String::new();
    let (mut tests, mut failures, mut errors, mut skipped, mut total_time) = (0, 0, 0, 0, 0.0);
    for suite in suites {
        let count = |kind: fn(&Outcome) -> bool| suite.cases.iter().filter(|case| kind(&case.outcome)).count();
        let suite_failures = count(|outcome| matches!(outcome, Outcome::Failure(_)));
        let suite_errors = count(|outcome| matches!(outcome, Outcome::Error(_)));
        let suite_skipped = count(|outcome| matches!(outcome, Outcome::Skipped(_)));
        let time = suite.cases.iter().fold(0.0, |sum, case| sum + case.time_s);
        tests += suite.cases.len();
        failures += suite_failures;
        errors += suite_errors;
        skipped += suite_skipped;
        total_time += time;
        let name = escape(&suite.name);
        let _ = writeln!(
            body,
            r#"  <testsuite name="{name}" tests="{}" failures="{suite_failures}" errors="{suite_errors}" skipped="{suite_skipped}" time="{time:.6}">"#,
            suite.cases.len()
        );
        for case in &suite.cases {
            let _ = writeln!(
                body,
                r#"    <testcase name="{}" classname="{name}" time="{:.6}">"#,
                escape(&case.name),
                case.time_s
            );
            let element = match &case.outcome {
                Outcome::Passed => None,
                Outcome::Noted(message) => {
                    let _ = writeln!(body, "      <system-out>{}</system-out>", escape(message));
                    None
                }
                Outcome::Failure(message) => Some(("failure", message)),
                Outcome::Error(message) => Some(("error", message)),
                Outcome::Skipped(message) => Some(("skipped", message)),
            };
            if let Some((element, message)) = element {
                let _ = writeln!(body, r#"      <{element} message="{}"/>"#, escape(message));
            }
            body.push_str("    </testcase>\n");
        }
        body.push_str("  </testsuite>\n");
    }
    let command = escape(command);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"{command}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{total_time:.6}\">\n\
         {body}</testsuites>\n"
    )
}

/// Text for an attribute: markup escaped, control characters XML 1.0 cannot
/// hold as text output shows them (`\x1b`), and its non-characters dropped.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\n' => escaped.push_str("&#10;"),
            '\t' | '\r' => escaped.push(' '),
            c if (c as u32) < 0x20 => escaped.push_str(&printable(c.encode_utf8(&mut [0; 4]))),
            '\u{FFFE}' | '\u{FFFF}' => {}
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_attributes_cannot_hold() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>\n\u{1}e\u{ffff}"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;&#10;\\x01e"
        );
    }
}
