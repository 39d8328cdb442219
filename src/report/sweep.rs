//! `mge run --sweep`: a row per shape, text or JSON (`sweep`).

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::table::Table;
use super::Report;
use crate::text::{part_of, printable};

/// How a shape's run ended.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It ran.
    Ok,
    /// The run ended with its error: the engine (or mge) declined the shape,
    /// and said why; the process itself was sound.
    Refused,
    /// The engine took the process down: a signal, its `exit`, an exit code
    /// the tool never ends with.
    Crashed,
    /// Stopped at the deadline, or stuck.
    Hung,
    /// An output held NaN or infinities (`--check-finite`).
    NonFinite,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Refused => "refused",
            Status::Crashed => "crashed",
            Status::Hung => "hung",
            Status::NonFinite => "nonfinite",
        }
    }
}

/// Each swept input's shape in a row, in the order the sweep names them.
#[derive(Clone, Debug)]
pub struct Shapes(pub Vec<(String, Vec<usize>)>);

impl Serialize for Shapes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, shape) in &self.0 {
            map.serialize_entry(name, shape)?;
        }
        map.end()
    }
}

impl Shapes {
    /// `1x3x224x224`, each input's joined by a space.
    pub fn label(&self) -> String {
        let labels: Vec<String> = self.0.iter().map(|(_, shape)| shape_label(shape)).collect();
        labels.join(" ")
    }
}

/// `1x3x224x224`, as `--sweep` takes it.
pub fn shape_label(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    dims.join("x")
}

/// One shape's row.
#[derive(Serialize, Debug)]
pub struct Row {
    pub shapes: Shapes,
    pub status: Status,
    /// The median of the timed runs, and its 95% confidence interval (from 6 runs).
    pub median_ms: Option<f64>,
    pub ci95_ms: Option<[f64; 2]>,
    /// The median over the first swept input's first dimension (its batch).
    pub per_item_ms: Option<f64>,
    /// Items of that dimension per second, at the median.
    pub items_per_s: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
    /// Why a shape is not `ok`, in one line.
    pub error: Option<String>,
    /// The `--repro` folder written for a shape that is not `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repro: Option<String>,
}

/// `mge run --sweep`'s report.
#[derive(Serialize)]
pub struct SweepReport {
    pub model: String,
    pub device: String,
    /// Runs of each shape: untimed, then timed.
    pub warmup: usize,
    pub iterations: u64,
    pub sweep: Vec<Row>,
}

impl SweepReport {
    /// The rows whose shape did not run `ok`.
    pub fn failed(&self) -> impl Iterator<Item = &Row> {
        self.sweep.iter().filter(|row| row.status != Status::Ok)
    }
}

impl Report for SweepReport {
    fn to_text(&self) -> String {
        let shapes = self.sweep.len();
        let mut text = format!(
            "model  {} on {}: {shapes} shape{}, each in a process of its own ({} warm-up, {} timed runs)\n",
            printable(&self.model),
            self.device,
            if shapes == 1 { "" } else { "s" },
            self.warmup,
            self.iterations
        );
        let names: Vec<&str> = self
            .sweep
            .first()
            .map(|row| row.shapes.0.iter().map(|(name, _)| name.as_str()).collect())
            .unwrap_or_default();
        let mut header = names.clone();
        header.extend(["status", "median ms", "95% interval", "ms/item", "items/s", "peak RSS"]);
        let first_figure = names.len() + 1;
        let mut table = Table::new(&header, &(first_figure..header.len()).collect::<Vec<_>>());
        for row in &self.sweep {
            let mut cells: Vec<String> = row.shapes.0.iter().map(|(_, shape)| shape_label(shape)).collect();
            let figure = |value: Option<f64>, digits: usize| value.map_or("-".to_string(), |v| format!("{v:.digits$}"));
            cells.extend([
                row.status.word().to_string(),
                figure(row.median_ms, 4),
                row.ci95_ms
                    .map_or("-".to_string(), |[low, high]| format!("{low:.4} to {high:.4}")),
                figure(row.per_item_ms, 4),
                figure(row.items_per_s, 1),
                row.peak_rss_bytes.map_or("-".to_string(), |bytes| {
                    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
                }),
            ]);
            table.row(cells);
        }
        text += &table.render("");
        for row in self.failed() {
            let reason = row.error.as_deref().unwrap_or("no reason given");
            text += &format!("{} {}: {reason}\n", row.shapes.label(), row.status.word());
        }
        let failed = self.failed().count();
        text += &match failed {
            0 if shapes == 1 => "1 shape ok\n".to_string(),
            0 => format!("all {shapes} shapes ok\n"),
            _ => format!("{} not ok\n", part_of(failed, shapes, "shape")),
        };
        text
    }
}

/// The shapes of `rows` as the error of a sweep that failed names them.
pub fn not_ok(rows: &[&Row]) -> String {
    let named: Vec<String> = rows
        .iter()
        .map(|row| format!("{} {}", row.shapes.label(), row.status.word()))
        .collect();
    named.join(", ")
}

impl Row {
    /// A row for `shapes` whose run ended as `status`, before its figures.
    pub fn new(shapes: Shapes, status: Status) -> Row {
        Row {
            shapes,
            status,
            median_ms: None,
            ci95_ms: None,
            per_item_ms: None,
            items_per_s: None,
            peak_rss_bytes: None,
            error: None,
            repro: None,
        }
    }

    /// The figures of a run whose median is `median_ms` (the first swept
    /// input's first dimension its items).
    pub fn timed(mut self, median_ms: f64, ci95_ms: Option<[f64; 2]>, peak_rss_bytes: Option<u64>) -> Row {
        let items = self
            .shapes
            .0
            .first()
            .and_then(|(_, shape)| shape.first().copied())
            .unwrap_or(1)
            .max(1);
        let per_item = median_ms / items as f64;
        self.median_ms = Some(median_ms);
        self.ci95_ms = ci95_ms;
        self.per_item_ms = Some(per_item);
        self.items_per_s = (per_item > 0.0).then(|| 1e3 / per_item);
        self.peak_rss_bytes = peak_rss_bytes;
        self
    }
}
