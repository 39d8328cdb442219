//! `mge info`: what a model file holds.

use serde::Serialize;

use super::run::{stats_table, TensorStats};
use super::table::Table;
use super::Report;
use crate::model::{GraphCost, EXPECTATION_SUFFIX};
use crate::tensor::{format_shape, TensorInfo};
use crate::text::{counted, printable};

#[derive(Serialize)]
pub struct Tensor {
    pub name: String,
    /// None where the graph leaves it to run time (`dynamic`: after NMS, a mask).
    pub shape: Option<Vec<usize>>,
    pub dtype: String,
    /// An input carrying an expected output value (testcase containers only).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expectation: bool,
    /// The AssertEqual var the engine lists for an output it checks
    /// (testcase containers only): `assert_eq(feat:expect,feat)[86]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assertion: Option<String>,
}

impl From<&TensorInfo> for Tensor {
    fn from(info: &TensorInfo) -> Tensor {
        Tensor {
            name: info.name.clone(),
            // The engine declares a shape it infers only at run time with no
            // dimensions: a graph's scalar has one.
            shape: (!info.shape.is_empty()).then(|| info.shape.clone()),
            dtype: info.dtype.to_string(),
            expectation: info.name.ends_with(EXPECTATION_SUFFIX),
            assertion: None,
        }
    }
}

impl Tensor {
    /// An output, with the var the engine lists for it where that is another.
    pub fn output(info: &TensorInfo, engine_name: &str) -> Tensor {
        Tensor {
            assertion: (engine_name != info.name).then(|| engine_name.to_string()),
            ..Tensor::from(info)
        }
    }
}

#[derive(Serialize)]
pub struct Testcase {
    pub index: usize,
    pub tensors: Vec<TensorStats>,
}

#[derive(Serialize)]
pub struct ModelInfo {
    pub model: String,
    /// A testcase container rather than a plain model.
    #[serde(skip)]
    pub container: bool,
    pub format: String,
    pub size_bytes: usize,
    /// Whether its graph was verified before the engine read it (an encrypted
    /// one once decrypted with its key).
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packing: Option<Packing>,
    pub inputs: Vec<Tensor>,
    pub outputs: Vec<Tensor>,
    pub testcases: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub testcase_values: Vec<Testcase>,
    /// The operators by type and what they cost (`--ops`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ops: Option<GraphCost>,
}

/// A Lite packed model's header and what its info carries.
#[derive(Serialize)]
pub struct Packing {
    pub name: String,
    pub model_decryption: String,
    /// The info's method and parser, when it has an info.
    pub info_decryption: Option<String>,
    pub info_parser: Option<String>,
    /// What its info sets, as `mge` options (or the info's own key where none fits).
    pub info_options: Vec<String>,
    /// `mge`'s options in the info's `extra_info`.
    pub mge_options: Vec<String>,
    /// Why a run refuses them (one names a file of this machine), if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mge_options_refused: Option<String>,
    /// Its info is encrypted, so its options cannot be shown.
    pub info_encrypted: bool,
    pub fast_run_cache_bytes: Option<usize>,
}

impl Packing {
    fn to_text(&self) -> String {
        let mut text = format!(
            "packed as '{}', model decryption {}",
            printable(&self.name),
            printable(&self.model_decryption)
        );
        match (&self.info_decryption, &self.info_parser) {
            (Some(decryption), Some(parser)) => {
                text += &format!(
                    ", info decryption {}, parsed by {}\n",
                    printable(decryption),
                    printable(parser)
                )
            }
            _ => text += ", no info\n",
        }
        if self.info_encrypted {
            text += "  info options: encrypted (applied by the engine, not readable here)\n";
        } else if !self.info_options.is_empty() {
            text += &format!(
                "  info options (applied by the engine): {}\n",
                printable(&self.info_options.join(" "))
            );
        }
        if let Some(refusal) = &self.mge_options_refused {
            text += &format!(
                "  mge options (extra_info, refused by every command that runs it): {}\n    {}\n",
                printable(&self.mge_options.join(" ")),
                printable(refusal)
            );
        } else if !self.mge_options.is_empty() {
            text += &format!(
                "  mge options (extra_info, applied by mge run): {}\n",
                printable(&self.mge_options.join(" "))
            );
        }
        match self.fast_run_cache_bytes {
            Some(bytes) => text += &format!("  fast-run cache: {bytes} bytes embedded\n"),
            None => text += "  fast-run cache: none\n",
        }
        text
    }
}

impl Report for ModelInfo {
    fn to_text(&self) -> String {
        let kind = if self.container { "testcase container" } else { "model" };
        let mut text = format!(
            "{}: {kind}, {}, {} bytes\n",
            printable(&self.model),
            self.format,
            self.size_bytes
        );
        if let Some(packing) = &self.packing {
            text += &packing.to_text();
        }
        if !self.verified {
            text += "graph: encrypted, and does not decrypt to a graph that verifies, so not verified before the engine read it (the engine ran supervised)\n";
        }
        let mut table = Table::new(&["", "name", "shape", "dtype"], &[]);
        for (role, tensors) in [("input", &self.inputs), ("output", &self.outputs)] {
            for tensor in tensors {
                let role = if tensor.expectation { "expect" } else { role };
                table.row(vec![
                    role.into(),
                    tensor.name.clone(),
                    tensor
                        .shape
                        .as_deref()
                        .map_or_else(|| "dynamic".to_string(), format_shape),
                    tensor.dtype.clone(),
                ]);
            }
        }
        text += &table.render("");
        if self.container {
            text += &format!("testcases: {}\n", self.testcases);
            for testcase in &self.testcase_values {
                let table = stats_table(&format!("#{}", testcase.index), &testcase.tensors);
                text += &table.render("  ");
            }
        }
        if let Some(ops) = &self.ops {
            text += &ops_text(ops);
        }
        text
    }
}

/// The operators by type: count, dtypes, parameters, MACs and FLOPs, and the totals.
fn ops_text(ops: &GraphCost) -> String {
    let mut table = Table::new(
        &["type", "count", "dtypes", "parameters", "bytes", "MACs", "FLOPs"],
        &[1, 3, 4, 5, 6],
    );
    let operations = |value: Option<u64>| value.map_or_else(|| "-".to_string(), scaled);
    for row in &ops.types {
        let (count, bytes) = match row.parameters {
            Some(parameters) => (grouped(parameters.count), grouped(parameters.bytes)),
            None => (String::new(), String::new()),
        };
        let dtypes: Vec<&str> = row.dtypes.iter().map(String::as_str).collect();
        table.row(vec![
            row.op_type.clone(),
            row.count.to_string(),
            dtypes.join(" "),
            count,
            bytes,
            operations(row.macs),
            operations(row.flops),
        ]);
    }
    table.row(vec![
        "total".into(),
        ops.operators.to_string(),
        String::new(),
        grouped(ops.parameters.count),
        grouped(ops.parameters.bytes),
        scaled(ops.macs),
        scaled(ops.flops),
    ]);
    let mut text = format!(
        "\noperators: {} in {}\n",
        ops.operators,
        counted(ops.types.len(), "type")
    );
    text += &table.render("");
    text += &format!(
        "parameters: {} in {} constant tensors ({} bytes); MACs and FLOPs from the shapes the graph stores (its batch as dumped)\n",
        grouped(ops.parameters.count),
        ops.parameters.tensors,
        grouped(ops.parameters.bytes)
    );
    if ops.saturated {
        text += &format!(
            "saturated: a count passed {} and is shown as that: the graph stores shapes no tensor can have\n",
            grouped(u64::MAX)
        );
    }
    if let Some(reason) = ops.uncounted_reason() {
        let types: Vec<String> = ops
            .uncounted_types
            .iter()
            .map(|(op_type, count)| format!("{op_type} {count}"))
            .collect();
        text += &format!("uncounted, not in the totals: {reason}: {}\n", types.join(", "));
    }
    text
}

/// `11,683,816`.
fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut text = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

/// `1.814 G`, `512.0 K`, `896`.
fn scaled(value: u64) -> String {
    let value = value as f64;
    match value {
        v if v >= 1e9 => format!("{:.3} G", v / 1e9),
        v if v >= 1e6 => format!("{:.3} M", v / 1e6),
        v if v >= 1e3 => format!("{:.1} K", v / 1e3),
        v => format!("{v}"),
    }
}
