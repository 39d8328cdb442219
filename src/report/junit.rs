//! JUnit XML as CI systems read it (Jenkins, GitLab, GitHub annotations): a
//! `testsuite` per model, a `testcase` for loading it (its `time` the load
//! time; its error when it could not be checked), then one per embedded testcase.

use std::fmt::Write;

use super::check::ModelCheck;
use crate::runner::testcase::Status;
use crate::text::printable;

pub fn junit_xml(models: &[ModelCheck]) -> String {
    let mut suites = String::new();
    let (mut tests, mut failures, mut errors, mut skipped, mut total_time) = (0, 0, 0, 0, 0.0);
    for model in models {
        let suite = Suite::of(model);
        tests += suite.tests;
        failures += suite.failures;
        errors += suite.errors;
        skipped += suite.skipped;
        total_time += suite.time;
        let name = escape(&model.model);
        let _ = writeln!(
            suites,
            r#"  <testsuite name="{name}" tests="{}" failures="{}" errors="{}" skipped="{}" time="{:.6}">"#,
            suite.tests, suite.failures, suite.errors, suite.skipped, suite.time
        );
        let load_s = model.load_s.unwrap_or(0.0);
        let _ = writeln!(
            suites,
            r#"    <testcase name="load" classname="{name}" time="{load_s:.6}">"#
        );
        if let Some(error) = &model.error {
            let _ = writeln!(suites, r#"      <error message="{}"/>"#, escape(error));
        }
        suites.push_str("    </testcase>\n");
        for testcase in &model.testcases {
            let _ = writeln!(
                suites,
                r#"    <testcase name="testcase {}" classname="{name}" time="{:.6}">"#,
                testcase.index, testcase.time_s
            );
            let message = escape(testcase.message.as_deref().unwrap_or(""));
            let element = match testcase.status {
                Status::Passed => None,
                Status::Failed => Some("failure"),
                Status::Error => Some("error"),
                Status::Skipped => Some("skipped"),
            };
            if let Some(element) = element {
                let _ = writeln!(suites, r#"      <{element} message="{message}"/>"#);
            }
            suites.push_str("    </testcase>\n");
        }
        suites.push_str("  </testsuite>\n");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"mge check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{total_time:.6}\">\n\
         {suites}</testsuites>\n"
    )
}

/// A model's counts in JUnit's terms, where an error is not a failure.
struct Suite {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    time: f64,
}

impl Suite {
    fn of(model: &ModelCheck) -> Suite {
        let count = |status| model.testcases.iter().filter(|t| t.status == status).count();
        let load_error = usize::from(model.error.is_some());
        Suite {
            tests: model.testcases.len() + 1,
            failures: count(Status::Failed),
            errors: count(Status::Error) + load_error,
            skipped: count(Status::Skipped),
            time: model
                .testcases
                .iter()
                .fold(model.load_s.unwrap_or(0.0), |sum, t| sum + t.time_s),
        }
    }
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
