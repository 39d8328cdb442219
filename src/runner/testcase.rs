//! The testcases a container embeds, run and judged the way MegEngine's
//! load_and_run does: by the model's own AssertEqual operators.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::{Outputs, RunPlan, Session};
use crate::compare::{compare_values, worst, LeftOut, Rules, Tolerance};
use crate::engine::{capture_stdout, EngineError, Lite, NetworkOptions};
use crate::feeds::Feed;
use crate::messages::to_stderr;
use crate::model::{checked_output, Assertion, ModelFile, EXPECTATION_SUFFIX};
use crate::supervise::child::announce;
use crate::supervise::repro_record;
use crate::supervise::Phase;
use crate::tensor::{HostTensor, TensorView};
use crate::text::{counted, number, part_of};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestcaseStatus {
    Passed,
    Failed,
    /// Ran, but the model has no expectations to check.
    Skipped,
    /// Could not run: a broken testcase or an engine failure other than a mismatch.
    Error,
}

/// One checked output: the engine's AssertEqual error against the model's tolerance.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OutputCheck {
    pub name: String,
    /// `None` when the engine did not print it (a model dumped with `silent=True`,
    /// or an assertion the run never reached); NaN when a value was NaN.
    pub err: Option<f64>,
    pub maxerr: f64,
    /// With `--allow-outliers` (`check` given rules): how many elements the verdict left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
}

pub struct TestcaseRun {
    pub index: usize,
    pub status: TestcaseStatus,
    pub checks: Vec<OutputCheck>,
    pub message: Option<String>,
    /// It failed `--check-finite`: its outputs held NaN or infinities.
    pub non_finite: bool,
    pub seconds: f64,
    pub feeds: Vec<Feed>,
    /// Forward+wait of each timed run in ms; empty when the testcase failed.
    pub samples: Vec<f64>,
    pub outputs: Vec<(String, HostTensor)>,
}

/// Who judges a testcase's outputs.
#[derive(Clone, Copy)]
pub enum Judge<'a> {
    /// The model's own AssertEqual operators, in the engine.
    Engine,
    /// The tool's comparison under these rules, of the real outputs with the
    /// values the testcase holds for `<output>:expect`; an output no rule
    /// gives a tolerance keeps its assertion's maxerr.
    Rules(&'a Rules),
}

impl Judge<'_> {
    /// Which outputs the model must be loaded with for this judge.
    pub fn outputs(self) -> Outputs {
        match self {
            Judge::Engine => Outputs::Asserted,
            Judge::Rules(_) => Outputs::Real,
        }
    }
}

/// Runs every testcase of `model` in turn on one network (loaded with
/// `judge.outputs()`), as load_and_run does; a failed testcase leaves the
/// network usable for the next.
pub fn run_testcases(
    lite: &Lite,
    model: &ModelFile,
    session: &mut Session,
    plan: &RunPlan,
    judge: Judge,
) -> Result<Vec<TestcaseRun>> {
    let assertions = model.assertions()?;
    if let Judge::Rules(rules) = judge {
        rules.check_names(assertions.iter().map(Assertion::output))?;
    }
    Ok(model
        .testcases()
        .enumerate()
        .map(|(index, graph)| run_testcase(lite, session, Testcase { index, graph }, &assertions, plan, judge))
        .collect())
}

/// One testcase graph of a container, and its place.
struct Testcase<'a> {
    index: usize,
    graph: &'a [u8],
}

fn run_testcase(
    lite: &Lite,
    session: &mut Session,
    testcase: Testcase,
    assertions: &[Assertion],
    plan: &RunPlan,
    judge: Judge,
) -> TestcaseRun {
    let Testcase { index, graph } = testcase;
    announce(Phase::Testcase { index });
    let started = Instant::now();
    let mut run = TestcaseRun {
        index,
        status: TestcaseStatus::Error,
        checks: Vec::new(),
        message: None,
        non_finite: false,
        seconds: 0.0,
        feeds: Vec::new(),
        samples: Vec::new(),
        outputs: Vec::new(),
    };
    let judged = testcase_values(lite, graph, &session.testcase_inputs())
        .context("cannot read the testcase")
        .and_then(|values| {
            let (feeds, expected) = split_values(values, session, index);
            repro_record::testcase(index, &feeds);
            run.feeds = feeds;
            match judge {
                Judge::Engine => judge_by_the_engine(&mut run, session, assertions, plan),
                Judge::Rules(rules) => judge_by_rules(&mut run, session, &expected, assertions, plan, rules),
            }
        });
    if let Err(err) = judged {
        run.message = Some(format!("{err:#}"));
    }
    run.seconds = started.elapsed().as_secs_f64();
    run
}

/// Feeds the testcase, runs it and sets its status, checks and message; an
/// error is a testcase that could not run (its status stays `Error`).
fn judge_by_the_engine(
    run: &mut TestcaseRun,
    session: &mut Session,
    assertions: &[Assertion],
    plan: &RunPlan,
) -> Result<()> {
    let capture = capture_stdout()?;
    let result = session.feed(&run.feeds).and_then(|()| session.measure(plan, &mut ()));
    let printed = capture.finish()?;
    repro_record::engine_stdout(&printed);
    if plan.verbose && !printed.is_empty() {
        to_stderr(printed.strip_suffix('\n').unwrap_or(&printed));
    }
    let errors = errors_by_assertion(assertions, &printed_errors(&printed));
    run.checks = assertions
        .iter()
        .zip(errors)
        .map(|(assertion, err)| OutputCheck {
            name: assertion.output().to_string(),
            err,
            maxerr: assertion.maxerr,
            left_out: None,
        })
        .collect();
    match result {
        Ok(runs) => {
            run.samples = runs.timed_ms;
            run.outputs = session.read_outputs()?;
            if assertions.is_empty() {
                run.status = TestcaseStatus::Skipped;
                run.message = Some("no expectations".to_string());
            } else {
                run.status = TestcaseStatus::Passed;
            }
        }
        Err(err) => match err.downcast_ref::<EngineError>() {
            Some(engine) if engine.message.starts_with("Unequal value") => {
                run.status = TestcaseStatus::Failed;
                run.message = Some(describe_mismatch(&engine.message));
            }
            _ => return Err(err),
        },
    }
    Ok(())
}

/// Feeds the testcase, runs the model with its real outputs and holds each
/// asserted output against its expected value under `rules`.
fn judge_by_rules(
    run: &mut TestcaseRun,
    session: &mut Session,
    expected: &[(String, HostTensor)],
    assertions: &[Assertion],
    plan: &RunPlan,
    rules: &Rules,
) -> Result<()> {
    session.feed(&run.feeds)?;
    run.samples = session.measure(plan, &mut ())?.timed_ms;
    run.outputs = session.read_outputs()?;
    let mut failures = Vec::new();
    for assertion in assertions {
        let name = assertion.output();
        let (actual, expectation) = (
            named(&run.outputs, name)?,
            named(expected, &format!("{name}{EXPECTATION_SUFFIX}"))?,
        );
        let criterion = rules.or_maxerr(assertion.maxerr).criterion(name);
        let comparison = compare_values(actual, expectation, &criterion)
            .with_context(|| format!("'{name}' and its expected value differ in shape"))?;
        let maxerr = match criterion.tolerance {
            Tolerance::AssertEqual { maxerr } => maxerr,
            // `check` takes no --atol/--rtol: what stands here is only what is reported.
            Tolerance::Close { .. } => assertion.maxerr,
        };
        let err = comparison.judged.unwrap_or(comparison.err);
        run.checks.push(OutputCheck {
            name: name.to_string(),
            err: Some(err),
            maxerr,
            left_out: comparison.left_out,
        });
        if !comparison.passed {
            failures.push(match (&comparison.topk, &comparison.first_mismatch) {
                (Some(topk), _) => format!(
                    "'{name}': top-{} indices differ in {}",
                    topk.k,
                    part_of(topk.differing_rows, topk.rows, "row")
                ),
                (None, Some(first)) => format!(
                    "'{name}': err {} above {}, {} outside; first at {:?}: got {}, expected {}",
                    number(err),
                    number(maxerr),
                    part_of(comparison.mismatches, actual.len(), "element"),
                    first.index,
                    first.a,
                    first.b
                ),
                (None, None) => format!("'{name}': err {} above {}", number(err), number(maxerr)),
            });
        }
    }
    (run.status, run.message) = match (assertions.is_empty(), failures.is_empty()) {
        (true, _) => (TestcaseStatus::Skipped, Some("no expectations".to_string())),
        (false, true) => (TestcaseStatus::Passed, None),
        (false, false) => (TestcaseStatus::Failed, Some(failures.join("; "))),
    };
    Ok(())
}

/// The value called `name` among `values`.
fn named<'a>(values: &'a [(String, HostTensor)], name: &str) -> Result<TensorView<'a>> {
    values
        .iter()
        .find(|(found, _)| found == name)
        .map(|(_, tensor)| tensor.view())
        .with_context(|| format!("the testcase has no value for '{name}'"))
}

/// `(output, err)` from each `AssertEqual: err=<g> (name=<var> id=<n>)` line the
/// engine printed.
fn printed_errors(printed: &str) -> Vec<(String, f64)> {
    printed
        .lines()
        .filter_map(|line| {
            let (err, rest) = line.strip_prefix("AssertEqual: err=")?.split_once(" (name=")?;
            let (var, _) = rest.rsplit_once(" id=")?;
            let output = checked_output(var).unwrap_or(var);
            Some((output.to_string(), err.parse().ok()?))
        })
        .collect()
}

/// The largest printed error of each assertion's output (NaN wins).
fn errors_by_assertion(assertions: &[Assertion], printed: &[(String, f64)]) -> Vec<Option<f64>> {
    let largest = |output: &str| {
        printed
            .iter()
            .filter(|(name, _)| name == output)
            .map(|&(_, err)| err)
            .reduce(worst)
    };
    let mut errors: Vec<Option<f64>> = assertions.iter().map(|a| largest(a.output())).collect();
    // An FBS v1 graph loses var names at load, so the engine prints other names
    // than the file holds: pair them when one of each is left.
    let mut unknown: Vec<&str> = printed
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !assertions.iter().any(|a| a.output() == *name))
        .collect();
    unknown.dedup();
    let unmatched: Vec<usize> = (0..errors.len()).filter(|&i| errors[i].is_none()).collect();
    if let ([name], [index]) = (unknown.as_slice(), unmatched.as_slice()) {
        errors[*index] = largest(name);
    }
    errors
}

/// The engine's `Unequal value` message in one line: the output, the first
/// mismatching value and the expected one, where, and the error there.
fn describe_mismatch(message: &str) -> String {
    let field = |prefix: &str| {
        message
            .lines()
            .find_map(|line| line.trim_start().strip_prefix(prefix))
            .map(str::trim)
    };
    let output = field("Value of:")
        .and_then(|var| var.split_once("name:"))
        .and_then(|(_, rest)| rest.split_once(", slot:"))
        .map(|(name, _)| name);
    match (output, field("Actual:"), field("Which is:")) {
        (Some(output), Some(actual), Some(expected)) => {
            let mut text = format!("'{output}': got {actual}, expected {expected}");
            if let Some((index, shape)) = field("At index:").and_then(|at| at.split_once('/')) {
                text.push_str(&format!(" at index {index} of shape {shape}"));
            }
            if let Some(error) = field("error:") {
                text.push_str(&format!(" (error {error})"));
            }
            text
        }
        _ => message.lines().next().unwrap_or("Unequal value").to_string(),
    }
}

/// A testcase's values as feeds of the inputs `session` reads, with
/// `testcase INDEX` as their source.
pub fn testcase_feeds(lite: &Lite, graph: &[u8], session: &Session, index: usize) -> Result<Vec<Feed>> {
    let values = testcase_values(lite, graph, &session.testcase_inputs())?;
    Ok(split_values(values, session, index).0)
}

/// A testcase's values split into feeds of the inputs `session` reads and
/// the rest (the expectations of a session loaded with `Outputs::Real`).
fn split_values(
    values: Vec<(String, HostTensor)>,
    session: &Session,
    index: usize,
) -> (Vec<Feed>, Vec<(String, HostTensor)>) {
    let source = format!("testcase {index}");
    let (read, unread): (Vec<_>, Vec<_>) = values
        .into_iter()
        .partition(|(name, _)| session.inputs.iter().any(|input| input.name == *name));
    let feeds = read
        .into_iter()
        .map(|(name, tensor)| Feed {
            name,
            source: source.clone(),
            converted_from: None,
            tensor,
        })
        .collect();
    (feeds, unread)
}

/// The values a testcase graph of a container holds, named. Such a graph has no
/// inputs; its outputs are the values of the model's inputs (`Session::testcase_inputs`)
/// in the order of their names, sorted (MegEngine's load_and_run convention).
pub fn testcase_values(lite: &Lite, graph: &[u8], model_inputs: &[&str]) -> Result<Vec<(String, HostTensor)>> {
    // On the calling thread: a dispatcher thread would only spin for these constants.
    let options = NetworkOptions {
        cpu_inplace: true,
        ..NetworkOptions::default()
    };
    let mut testcase = Session::open(lite, graph, &options)?;
    testcase.forward()?;
    let values = testcase.read_outputs()?;
    let mut names = model_inputs.to_vec();
    names.sort_unstable();
    if values.len() != names.len() {
        bail!(
            "it holds {} but the model has {}",
            counted(values.len(), "tensor"),
            counted(names.len(), "input")
        );
    }
    Ok(names
        .into_iter()
        .map(String::from)
        .zip(values.into_iter().map(|(_, value)| value))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_errors_the_engine_prints() {
        let printed = "AssertEqual: err=0 (name=assert_eq(feat:expect,feat)[46] id=46)\n\
                       some other line\n\
                       AssertEqual: err=3.86273e-05 (name=assert_eq(a b:expect,a b)[7] id=7)\n\
                       AssertEqual: err=nan (name=custom id=9)\n";
        let errors = printed_errors(printed);
        assert_eq!(errors[0], ("feat".to_string(), 0.0));
        assert_eq!(errors[1], ("a b".to_string(), 3.86273e-05));
        assert_eq!(errors[2].0, "custom");
        assert!(errors[2].1.is_nan());
        assert_eq!(errors.len(), 3);
    }

    #[test]
    fn pairs_errors_with_assertions() {
        let assertion = |var: &str| Assertion {
            var: var.to_string(),
            maxerr: 1e-4,
            verbose: true,
        };
        let two = [
            assertion("assert_eq(a:expect,a)[3]"),
            assertion("assert_eq(b:expect,b)[5]"),
        ];
        let printed = [
            ("a".to_string(), 0.5),
            ("a".to_string(), 0.25),
            ("b".to_string(), f64::NAN),
        ];
        let errors = errors_by_assertion(&two, &printed);
        assert_eq!(errors[0], Some(0.5));
        assert!(errors[1].unwrap().is_nan());
        // Names the file does not hold (FBS v1): paired only when unambiguous.
        let renamed = [("h2d[0],axis_add_rm[23]".to_string(), 1e-5)];
        assert_eq!(errors_by_assertion(&two[..1], &renamed), [Some(1e-5)]);
        assert_eq!(errors_by_assertion(&two, &renamed), [None, None]);
    }

    #[test]
    fn describes_a_mismatch_in_one_line() {
        let message = "Unequal value\n\
            Value of: {id:24, layout:{1(8),8(1) Float32}, Float32, owner:axis_add_rm(Reduce[2])[23]{AxisAddRemove}, name:feat, slot:0, CompNode(\"cpu0:0\" from \"cpu0:0\"), s, 4, 8}\n  \
            Actual: 0.289750\n\
            Expected: {id:1, layout:{1(8),8(1) Float32}, Float32, owner:h2d[0]{Host2DeviceCopy}, name:feat:expect, slot:0}\n\
            Which is: 1.289750\n\
            At index: {0,0}/{1,8}\n   \
            error: 1";
        assert_eq!(
            describe_mismatch(message),
            "'feat': got 0.289750, expected 1.289750 at index {0,0} of shape {1,8} (error 1)"
        );
        assert_eq!(describe_mismatch("Unequal value\nsomething else"), "Unequal value");
    }
}
