//! `mge compare ... --by-op`: where the time went, on the variants of a small
//! CNN that `fixtures/make_whatchanged_fixtures.py` dumped. What is asserted
//! holds on any machine: a 9x9 kernel does 9 times the work of the 3x3 one it
//! replaces (the engine's own algorithms take it many times longer), an
//! operator B alone has is B's alone however fast it runs, and a model
//! against itself has nothing to attribute.

use crate::common::*;
use assert_cmd::Command;
use std::sync::OnceLock;

use serde_json::Value;

const CNN: &str = "fixtures/whatchanged/cnn.mge";

fn rows(timing: &Value) -> &Vec<Value> {
    timing["by_op"]
        .as_array()
        .unwrap_or_else(|| panic!("no by_op: {timing}"))
}

/// Two folders, one pair: the small CNN against itself with conv2's kernel
/// made 9x9. That convolution heads the list, slower by a whole interval
/// well above 1.
#[test]
fn the_slowed_convolution_heads_the_list_with_its_interval() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for (folder, model) in [(&a, CNN), (&b, "fixtures/whatchanged/cnn_conv9x9.mge")] {
        std::fs::create_dir(folder).unwrap();
        std::fs::copy(root().join(model), folder.join("net.mge")).unwrap();
    }
    let (stdout, _) = run_expecting(
        mge()
            .args(["compare", "-q", "--json", "--rounds", "6", "--by-op", "3"])
            .arg(&a)
            .arg(&b),
        1,
    );
    let report = json_of(&stdout);
    let timing = &report["pairs"][0]["timing"];
    let first = &rows(timing)[0];
    for side in ["a_name", "b_name"] {
        assert!(first[side].as_str().unwrap().contains("conv2.weight"), "{first}");
    }
    assert_eq!(first["type"], "ConvolutionForward");
    assert_eq!(first["speed"], "slower", "{first}");
    let low = first["ci95"][0].as_f64().unwrap();
    assert!(low > 2.0, "9 times the work, at least twice the time: {first}");
    assert!(first["b_ms"].as_f64().unwrap() > first["a_ms"].as_f64().unwrap());
    assert!(rows(timing).len() <= 3 + 3, "{timing}");
    let totals = &timing["by_op_totals"];
    assert!(totals["rounds"].as_u64().unwrap() >= 6, "{totals}");
    // The pair's graphs differ in that convolution alone.
    let structure = &report["pairs"][0]["structure"];
    assert_eq!(structure["ops_changed"].as_array().unwrap().len(), 1, "{structure}");
    assert_eq!(
        (totals["only_a"].as_u64(), totals["only_b"].as_u64()),
        (Some(0), Some(0))
    );
}

/// `mge compare` of 6 rounds with every operator listed (`--by-op 50`),
/// each judged against `min_effect` percent; the sides still to be given.
fn every_operator(min_effect: &str) -> Command {
    let mut command = mge();
    command.args([
        "compare",
        "-q",
        "--json",
        "--rounds",
        "6",
        "--by-op",
        "50",
        "--min-effect",
        min_effect,
    ]);
    command
}

/// The small CNN against itself with one convolution more, every operator
/// listed, judged against a `--min-effect` of 40%: one compare, which the
/// tests below share.
fn extra_convolution() -> &'static Value {
    static REPORT: OnceLock<Value> = OnceLock::new();
    REPORT.get_or_init(|| {
        let (stdout, _) = run_expecting(
            every_operator("40").args([CNN, "fixtures/whatchanged/cnn_extra_conv.mge"]),
            1,
        );
        json_of(&stdout)
    })
}

/// Two models: the extra convolution (and its ReLU) are B's alone; every
/// convolution of A is matched.
#[test]
fn an_extra_convolution_is_listed_as_b_s_alone() {
    let report = extra_convolution();
    let timing = &report["timing"];
    // Two models: how their graphs differ is in the report.
    assert_eq!(
        report["structure"]["ops_only_b"].as_array().unwrap().len(),
        2,
        "{report}"
    );
    let only_b: Vec<&Value> = rows(timing).iter().filter(|row| row["a_name"].is_null()).collect();
    let extra = only_b
        .iter()
        .find(|row| row["b_name"].as_str().unwrap().contains("extra.weight"))
        .unwrap_or_else(|| panic!("the extra convolution is B's alone: {timing}"));
    assert_eq!(extra["type"], "ConvolutionForward");
    assert_eq!(extra["speed"], "undecided");
    assert!(extra["a_ms"].is_null() && extra["ratio"].is_null(), "{extra}");
    assert!(
        rows(timing).iter().all(|row| !row["b_name"].is_null()),
        "A has nothing alone: {timing}"
    );
    let convolutions = rows(timing)
        .iter()
        .filter(|row| row["type"] == "ConvolutionForward" && !row["a_name"].is_null())
        .count();
    assert_eq!(convolutions, 3, "{timing}");
}

/// One model on two runtimes that are the same engine (A on the install of
/// 1.13.0 in the cache folder, B on the one `mge` uses, with its own options
/// the same as the default): no operator changed, as far as the profiled
/// rounds can tell. Judged against ±10%: the operators' intervals hold
/// together 95% of the time, so against the default ±2% one compare in 20
/// may call an operator of the same engine `slower`, and the suite's own
/// test threads load the machine (conv2 read [1.025, 1.297] in one run).
#[test]
fn the_model_against_itself_attributes_no_change() {
    let (stdout, _) = run_expecting(
        every_operator("10").args([CNN, "--a-runtime", "1.13.0", "--b-options", "--threads 1"]),
        0,
    );
    let report = json_of(&stdout);
    let runtime = report["a"]["runtime"].as_str().unwrap_or_default();
    assert!(runtime.contains("/runtime/1.13.0/"), "{report}");
    let timing = report["timing"].clone();
    let totals = &timing["by_op_totals"];
    assert_eq!(
        (totals["only_a"].as_u64(), totals["only_b"].as_u64()),
        (Some(0), Some(0)),
        "{totals}"
    );
    assert!(
        totals["judged"].as_u64().unwrap() >= 3,
        "the convolutions are judged: {totals}"
    );
    for row in rows(&timing) {
        assert_eq!(row["a_name"], row["b_name"], "{row}");
        let speed = row["speed"].as_str().unwrap();
        assert!(speed == "same" || speed == "undecided", "{row}");
    }
}

/// Each operator is judged as the pair is, against the same `--min-effect`:
/// `same` only with its whole interval within ±PCT, `faster` or `slower`
/// only wholly beyond, else `undecided`.
#[test]
fn operators_are_judged_against_the_pair_s_min_effect() {
    let timing = &extra_convolution()["timing"];
    assert_eq!(timing["min_effect_pct"], 40.0, "{timing}");
    assert_eq!(timing["by_op_totals"]["min_effect_pct"], 40.0, "{timing}");
    let judged: Vec<&Value> = rows(timing).iter().filter(|row| !row["ci95"].is_null()).collect();
    assert!(judged.len() >= 3, "the convolutions are judged: {timing}");
    for row in judged {
        let (low, high) = (row["ci95"][0].as_f64().unwrap(), row["ci95"][1].as_f64().unwrap());
        let expected = if low >= 0.6 && high <= 1.4 {
            "same"
        } else if high < 0.6 {
            "faster"
        } else if low > 1.4 {
            "slower"
        } else {
            "undecided"
        };
        assert_eq!(row["speed"], expected, "{row}");
    }
}

#[test]
fn by_op_needs_timed_runs() {
    let (_, stderr) = run_expecting(mge().args(["compare", CNN, CNN, "--by-op", "--no-timing"]), 2);
    assert!(stderr.contains("cannot be used with '--no-timing'"), "{stderr}");
    let (_, stderr) = run_expecting(mge().args(["compare", CNN, "--by-op", "--b-naive"]), 2);
    assert!(stderr.contains("--b-naive runs are not timed"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
