//! Reports where CI shows them: `--markdown` (GitHub-flavoured markdown, read
//! back with a GFM parser), the summary appended to `GITHUB_STEP_SUMMARY`, and
//! `::error` workflow commands when `GITHUB_ACTIONS=true`.

use crate::common::*;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

const FAILING_CHECK: [&str; 2] = ["fixtures/conv_float_tc1.mge", "fixtures/conv_float_tc3_wrong.mge"];

/// The cells of every table in `markdown`, row by row (the header first), as
/// a GitHub-flavoured markdown parser reads them.
fn table_rows(markdown: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut cell: Option<String> = None;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::TableHead | Tag::TableRow) => rows.push(Vec::new()),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::Text(text) | Event::Code(text) => {
                if let Some(cell) = cell.as_mut() {
                    cell.push_str(&text);
                }
            }
            Event::End(TagEnd::TableCell) => {
                let row: &mut Vec<String> = rows.last_mut().unwrap();
                row.push(cell.take().unwrap());
            }
            _ => {}
        }
    }
    rows
}

fn check_failing(extra: &[&str]) -> std::process::Output {
    mge()
        .args(["check", "-q"])
        .args(FAILING_CHECK)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn check_writes_its_summary_as_a_markdown_table() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("summary.md");
    run_expecting(
        mge()
            .args(["check", "-q"])
            .args(FAILING_CHECK)
            .arg("--markdown")
            .arg(&file),
        1,
    );
    let markdown = std::fs::read_to_string(&file).unwrap();
    assert!(
        markdown.starts_with("### mge check: 6 cases, 5 passed, 1 failed\n"),
        "{markdown}"
    );
    let rows = table_rows(&markdown);
    assert_eq!(
        rows[0],
        ["model", "case", "result", "time (s)", "message"],
        "{markdown}"
    );
    // A load and a testcase of the first model, a load and three of the second.
    assert_eq!(rows.len(), 7, "{markdown}");
    let failed: Vec<_> = rows.iter().filter(|row| row[2] == "FAILED").collect();
    assert_eq!(failed.len(), 1, "{markdown}");
    assert_eq!(failed[0][0], FAILING_CHECK[1], "the name reads back whole: {markdown}");
    assert_eq!(failed[0][1], "testcase 1");
    assert!(
        failed[0][4].starts_with("'feat': got 0.289750, expected 1.289750"),
        "{markdown}"
    );
    // `-` is stdout, after the report.
    let (stdout, _) = run_expecting(mge().args(["check"]).args(FAILING_CHECK).args(["--markdown", "-"]), 1);
    let (report, markdown) = stdout.split_once("### mge check").unwrap();
    assert!(report.contains("3 passed, 1 failed"), "{stdout}");
    assert_eq!(table_rows(markdown).len(), 7, "{stdout}");
}

#[test]
fn compare_writes_its_summary_as_a_markdown_table() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("summary.md");
    let mut command = mge();
    command
        .args([
            "compare",
            "-q",
            "--no-timing",
            "fixtures/divergence_a.mge",
            "fixtures/divergence_b.mge",
        ])
        .arg("--markdown")
        .arg(&file);
    run_expecting(&mut command, 1);
    let markdown = std::fs::read_to_string(&file).unwrap();
    let rows = table_rows(&markdown);
    assert_eq!(rows.len(), 2, "{markdown}");
    assert_eq!(rows[1][0], "fixtures/divergence_a.mge vs fixtures/divergence_b.mge");
    assert_eq!(rows[1][1..3], ["outputs", "FAILED"], "{markdown}");
    assert!(rows[1][4].contains("'out' err 0.0215283"), "{markdown}");
}

/// A cell of milliseconds (four decimals) read back as the JSON's value.
fn same_ms(cell: &str, json: &serde_json::Value) -> bool {
    (cell.parse::<f64>().unwrap() - json.as_f64().unwrap()).abs() <= 5e-5
}

#[test]
fn run_writes_its_summary_as_markdown_tables() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("summary.md");
    let (stdout, _) = run_expecting(
        mge()
            .args([
                "run",
                "fixtures/conv_float.mge",
                "--iter",
                "20",
                "-q",
                "--json",
                "--markdown",
            ])
            .arg(&file)
            .env("GITHUB_STEP_SUMMARY", dir.path().join("step_summary.md")),
        0,
    );
    let json = json_of(&stdout);
    let markdown = std::fs::read_to_string(&file).unwrap();
    assert!(
        markdown.starts_with("### mge run: fixtures/conv\\_float.mge (fbs-v2) on cpu\n"),
        "{markdown}"
    );
    let rows = table_rows(&markdown);
    assert_eq!(rows.len(), 6, "three tables of a header and a row: {markdown}");
    assert_eq!(rows[0], ["input", "shape", "dtype", "source"], "{markdown}");
    assert_eq!(rows[1], ["data", "(1, 3, 16, 16)", "float32", "#rand(0,1)"]);
    assert_eq!(rows[2], ["output", "shape", "dtype", "min", "max", "mean"]);
    let output = &json["outputs"][0];
    assert_eq!(rows[3][..3], ["feat", "(1, 8)", "float32"], "{markdown}");
    for (cell, stat) in rows[3][3..].iter().zip(["min", "max", "mean"]) {
        let value: f64 = cell.parse().unwrap();
        assert!(
            (value - output[stat].as_f64().unwrap()).abs() <= 5e-7,
            "{stat}: {cell} {output}"
        );
    }
    let header = [
        "iterations",
        "median (ms)",
        "median's 95% interval (ms)",
        "min (ms)",
        "max (ms)",
        "noise",
    ];
    assert_eq!(rows[4], header, "{markdown}");
    let timing = &json["timing_ms"];
    let row = &rows[5];
    assert_eq!(row[0], "20");
    assert!(same_ms(&row[1], &timing["median"]), "{} vs {timing}", row[1]);
    let (low, high) = row[2].split_once(" to ").unwrap();
    assert!(same_ms(low, &timing["median_ci95"][0]) && same_ms(high, &timing["median_ci95"][1]));
    assert!(same_ms(&row[3], &timing["min"]) && same_ms(&row[4], &timing["max"]));
    assert!(
        row[5].contains("CPU frequency") || row[5].contains("MHz"),
        "the noise line: {}",
        row[5]
    );
    // Only check and compare append to the step summary.
    assert!(!dir.path().join("step_summary.md").exists());
    // `-` is stdout, after the report.
    let (stdout, _) = run_expecting(
        mge().args(["run", "fixtures/conv_float.mge", "--iter", "3", "--markdown", "-"]),
        0,
    );
    let (report, markdown) = stdout.split_once("### mge run: ").unwrap();
    assert!(report.contains("timing   3 iterations"), "{stdout}");
    let rows = table_rows(markdown);
    assert_eq!(rows.len(), 6, "{stdout}");
    assert_eq!(rows[5][2], "too few runs (6 needed)", "{stdout}");
}

#[test]
fn run_refuses_markdown_onto_an_input_and_for_testcases() {
    let model = std::fs::read("fixtures/conv_float.mge").unwrap();
    let (_, stderr) = run_expecting(
        mge().args([
            "run",
            "fixtures/conv_float.mge",
            "--markdown",
            "fixtures/conv_float.mge",
        ]),
        2,
    );
    assert!(
        stderr.contains("mge: error: --markdown fixtures/conv_float.mge: "),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read("fixtures/conv_float.mge").unwrap(),
        model,
        "the input is intact"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("summary.md");
    let (_, stderr) = run_expecting(
        mge()
            .args(["run", "fixtures/conv_float_tc1.mge", "--markdown"])
            .arg(&file),
        2,
    );
    assert!(
        stderr.contains("mge: error: --markdown writes the summary of fed runs"),
        "{stderr}"
    );
    let (_, stderr) = run_expecting(
        mge().args(["run", "fixtures/conv_float.mge", "--json", "--markdown", "-"]),
        2,
    );
    assert!(stderr.contains("--markdown - and --json both write stdout"), "{stderr}");
    assert!(!file.exists());
}

#[test]
fn the_step_summary_is_appended_to() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("step_summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    for _ in 0..2 {
        run_expecting(
            mge()
                .args(["check", "-q"])
                .args(FAILING_CHECK)
                .env("GITHUB_STEP_SUMMARY", &summary),
            1,
        );
    }
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(markdown.starts_with("earlier step\n"), "{markdown}");
    assert_eq!(markdown.matches("### mge check: ").count(), 2, "{markdown}");
    assert_eq!(table_rows(&markdown).len(), 14, "two tables of 7 rows: {markdown}");
    // A step summary that cannot be opened: a warning, and the check's own verdict.
    let (_, stderr) = run_expecting(
        mge()
            .args(["check", "-q", "fixtures/conv_float_tc1.mge"])
            .env("GITHUB_STEP_SUMMARY", dir.path().join("no/such/folder.md")),
        0,
    );
    assert!(stderr.contains("warning: GITHUB_STEP_SUMMARY"), "{stderr}");
}

#[test]
fn failures_are_annotations_on_github_actions_only() {
    let on_actions = mge()
        .args(["check", "-q"])
        .args(FAILING_CHECK)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    let stdout = String::from_utf8(on_actions.stdout).unwrap();
    let annotations: Vec<_> = stdout.lines().filter(|line| line.starts_with("::")).collect();
    assert_eq!(
        annotations,
        ["::error title=fixtures/conv_float_tc3_wrong.mge%3A testcase 1::'feat': got 0.289750, expected 1.289750 at index {0,0} of shape {1,8} (error 1)"],
        "{stdout}"
    );
    let elsewhere = check_failing(&[]);
    assert!(!String::from_utf8_lossy(&elsewhere.stdout).contains("::error"));
    // With --json on stdout, on stderr, which the runner reads too: the JSON stays whole.
    let json = mge()
        .args(["check", "-q", "--json"])
        .args(FAILING_CHECK)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    json_of(&String::from_utf8(json.stdout).unwrap());
    let stderr = String::from_utf8(json.stderr).unwrap();
    assert!(
        stderr
            .lines()
            .any(|line| line.starts_with("::error title=fixtures/conv_float_tc3_wrong.mge%3A")),
        "{stderr}"
    );
}

/// A name with what ends a cell, a property or a line reads back whole from
/// the table and from the annotation, as GitHub decodes it.
#[test]
fn names_are_escaped_in_markdown_and_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("w|r*o_n`g%2C,\nx:.mge");
    std::fs::copy(FAILING_CHECK[1], &model).unwrap();
    let shown = model.to_str().unwrap().replace('\n', "\\n");
    let markdown = dir.path().join("summary.md");
    let output = mge()
        .args(["check", "-q"])
        .arg(&model)
        .arg("--markdown")
        .arg(&markdown)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let markdown = std::fs::read_to_string(&markdown).unwrap();
    let rows = table_rows(&markdown);
    assert_eq!(rows.len(), 5, "{markdown}");
    assert!(
        rows[1..].iter().all(|row| row.len() == 5 && row[0] == shown),
        "{markdown}"
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let annotation = stdout
        .lines()
        .find_map(|line| line.strip_prefix("::error title="))
        .unwrap();
    let (title, _) = annotation.split_once("::").unwrap();
    assert!(!title.contains([',', ':', '\n']), "{title}");
    let decoded = ["%2C", "%3A", "%0A", "%0D", "%25"]
        .iter()
        .zip([",", ":", "\n", "\r", "%"])
        .fold(title.to_string(), |text, (code, c)| text.replace(code, c));
    assert_eq!(decoded, format!("{}: testcase 1", model.to_str().unwrap()));
}

/// `--bmf FILE` read back: the benchmarks by name, each its `latency`.
fn bmf_of(file: &std::path::Path) -> serde_json::Map<String, serde_json::Value> {
    let text = std::fs::read_to_string(file).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
    parsed.as_object().unwrap().clone()
}

/// `latency`'s value and bounds, in nanoseconds; the bounds `None` when left out.
fn latency_ns(benchmark: &serde_json::Value) -> (f64, Option<[f64; 2]>) {
    let latency = benchmark["latency"].as_object().unwrap();
    let value = latency["value"].as_f64().unwrap();
    let bounds = match (latency.get("lower_value"), latency.get("upper_value")) {
        (Some(low), Some(high)) => Some([low.as_f64().unwrap(), high.as_f64().unwrap()]),
        (None, None) => None,
        _ => panic!("one bound without the other: {benchmark}"),
    };
    (value, bounds)
}

fn close_ns(ns: f64, ms: &serde_json::Value) -> bool {
    (ns - ms.as_f64().unwrap() * 1e6).abs() <= 1e-6 * ns.abs().max(1.0)
}

#[test]
fn run_writes_its_median_in_bencher_metric_format_in_nanoseconds() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bmf.json");
    let (stdout, _) = run_expecting(
        mge()
            .args(["run", "fixtures/conv_float.mge", "--iter", "20", "--json", "--bmf"])
            .arg(&file),
        0,
    );
    let timing = &json_of(&stdout)["timing_ms"];
    let benchmarks = bmf_of(&file);
    assert_eq!(benchmarks.keys().collect::<Vec<_>>(), ["fixtures/conv_float.mge"]);
    let (value, bounds) = latency_ns(&benchmarks["fixtures/conv_float.mge"]);
    assert!(close_ns(value, &timing["median"]), "{value} ns, {timing}");
    let [low, high] = bounds.expect("20 runs give a 95% interval");
    assert!(low <= value && value <= high, "{low} {value} {high}");
    assert!(close_ns(low, &timing["median_ci95"][0]) && close_ns(high, &timing["median_ci95"][1]));
    // Too few runs for a 95% interval: the bounds are left out, as Bencher allows.
    run_expecting(
        mge()
            .args(["run", "fixtures/conv_float.mge", "--iter", "3", "-q", "--json", "--bmf"])
            .arg(&file),
        0,
    );
    let (_, bounds) = latency_ns(&bmf_of(&file)["fixtures/conv_float.mge"]);
    assert_eq!(bounds, None);
    // Never onto an input, and only where runs are timed on feeds.
    let (_, stderr) = run_expecting(
        mge().args(["run", "fixtures/conv_float.mge", "--bmf", "fixtures/conv_float.mge"]),
        2,
    );
    assert!(stderr.contains("--bmf fixtures/conv_float.mge: "), "{stderr}");
    let (_, stderr) = run_expecting(
        mge().args(["run", "fixtures/conv_float_tc1.mge", "--bmf"]).arg(&file),
        2,
    );
    assert!(
        stderr.contains("mge: error: --bmf writes the timed runs of fed runs"),
        "{stderr}"
    );
}

#[test]
fn compare_writes_b_s_median_in_bencher_metric_format() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bmf.json");
    let b = dir.path().join("b.mge");
    std::fs::copy("fixtures/conv_float.mge", &b).unwrap();
    let (stdout, _) = run_expecting(
        mge()
            .args(["compare", "fixtures/conv_float.mge"])
            .arg(&b)
            .args(["--rounds", "6", "-q", "--json", "--bmf"])
            .arg(&file),
        0,
    );
    let timing = &json_of(&stdout)["timing"];
    let benchmarks = bmf_of(&file);
    let name = b.display().to_string();
    assert_eq!(benchmarks.keys().collect::<Vec<_>>(), [&name]);
    let (value, bounds) = latency_ns(&benchmarks[&name]);
    assert!(close_ns(value, &timing["b_ms"]), "{value} ns, {timing}");
    let [low, high] = bounds.expect("6 rounds give a 95% interval");
    assert!(low <= value && value <= high, "{low} {value} {high}");
    let (_, stderr) = run_expecting(
        mge()
            .args([
                "compare",
                "fixtures/conv_float.mge",
                "fixtures/conv_float.mge",
                "--no-timing",
                "--bmf",
            ])
            .arg(&file),
        2,
    );
    assert!(stderr.contains("mge: error: --bmf writes the timing"), "{stderr}");
}

#[test]
fn compare_of_folders_names_each_pair_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    for side in ["a", "b"] {
        std::fs::create_dir_all(dir.path().join(side).join("sub")).unwrap();
        std::fs::copy("fixtures/conv_float.mge", dir.path().join(side).join("m.mge")).unwrap();
        std::fs::copy("fixtures/conv_float.mge", dir.path().join(side).join("sub/n.mge")).unwrap();
    }
    let file = dir.path().join("bmf.json");
    run_expecting(
        mge()
            .args(["compare", "-q", "--rounds", "6", "--bmf"])
            .arg(&file)
            .arg(dir.path().join("a"))
            .arg(dir.path().join("b")),
        0,
    );
    let benchmarks = bmf_of(&file);
    assert_eq!(benchmarks.keys().collect::<Vec<_>>(), ["m.mge", "sub/n.mge"]);
    for benchmark in benchmarks.values() {
        let (value, bounds) = latency_ns(benchmark);
        let [low, high] = bounds.expect("6 rounds give a 95% interval");
        assert!(0.0 < low && low <= value && value <= high, "{benchmark}");
    }
}
