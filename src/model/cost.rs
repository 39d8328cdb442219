//! What a model costs, read from its graph without running it: operators by
//! type, parameters and static multiply-accumulates and FLOPs, by the rules
//! of MegEngine's `network_visualize.py --cal_params --cal_flops`.
//!
//! - Parameters: every `ImmutableTensor` (weights, folded biases, but also
//!   shape constants and scalars), as network_visualize counts them.
//! - Convolution: N·Cout·H·W·(Cin/groups·kh·kw) MACs (ConvBias, the fused
//!   `ConvBiasForward` of an optimised dump, adds one per output, its bias; its
//!   activation is not counted, as neither MegEngine count does); matrix
//!   multiplication: M·N·K (batched: B·M·N·K). FLOPs are twice the MACs (ConvBias:
//!   plus its bias), as the engine's own profiler counts them. Quantized
//!   operators count as their float ones.
//! - Transposed convolution (`ConvolutionBackwardData`), which network_visualize
//!   does not count: as the engine's profiler counts it, a MAC per element of
//!   its input (`diff`) per weight of an output channel's filter.
//! - Elementwise: one FLOP per output element, no MACs.
//! - Pooling and reduction, which network_visualize does not count: FLOPs as the
//!   engine's profiler counts them (an operation per window element of each
//!   output; per input element), no MACs.
//! - Operators that only hold, move or reshape data: none.
//! - Operators that compute but that neither network_visualize nor the engine's
//!   profiler counts (softmax, layer norm, ROIAlign, NMS, top-k, sorting, masks,
//!   gathers, type conversions, resizing such as a detector's upsampling): none,
//!   as MegEngine counts them.
//! - Any other operator is `uncounted`, and so is a counted one whose shapes the
//!   graph does not store (FBS v1 stores none; FBS v2 none for a var whose shape
//!   is known only at run time, such as the boxes NMS keeps).
//!
//! Each type's dtypes are those its operators' outputs have, stored in the
//! graph or deduced from their inputs (`dtypes::graph_dtypes`): the precision
//! it runs in (`qint8` where its operators run quantized).
//!
//! Shapes are the ones the graph stores for its vars: the shapes MegEngine
//! inferred from the inputs' when it dumped the graph, batch included
//! (network_visualize sets the batch to 1 first). A shape known only at run time
//! depends on the values fed, so no count from the graph can hold it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::dtypes::{dtype_name, graph_dtypes};
use super::structure::{type_name, Operator, Structure};
use super::GraphFormat;
use crate::text::counted;

/// `param.MatrixMul` fields `transposeA`, `transposeB`.
const TRANSPOSE_A: usize = 0;
/// `param.Pooling`'s fields in their order (`opr_param_defs.fbs`).
pub(super) const POOLING_FIELDS: [&str; 8] = [
    "mode", "pad_h", "pad_w", "stride_h", "stride_w", "window_h", "window_w", "format",
];

/// The cost of a model's operators of one type.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TypeCost {
    #[serde(rename = "type")]
    pub op_type: String,
    pub count: usize,
    /// The dtypes of its operators' outputs, by name, in order, where the
    /// graph tells them (`dtypes::graph_dtypes`).
    pub dtypes: BTreeSet<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Parameters>,
    /// None for a type whose operations are not counted.
    pub macs: Option<u64>,
    pub flops: Option<u64>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Parameters {
    pub count: u64,
    pub bytes: u64,
    pub tensors: usize,
}

/// A model's cost: per operator type and in total.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GraphCost {
    pub operators: usize,
    /// Sorted by FLOPs, then count.
    pub types: Vec<TypeCost>,
    pub parameters: Parameters,
    pub macs: u64,
    pub flops: u64,
    /// Operators whose operations are not in `macs` and `flops`: of a type
    /// not counted, or counted but without the shapes it needs in the graph.
    pub uncounted: usize,
    /// Those operators by type: how many of each.
    pub uncounted_types: BTreeMap<String, usize>,
    /// Of those, the operators of a counted type whose shapes the graph does not store.
    pub shapeless: usize,
    /// Why it stores none: the format's words for it.
    #[serde(skip)]
    shapeless_why: &'static str,
    /// A count passed `u64::MAX` (a crafted shape) and stopped there.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub saturated: bool,
}

/// Types whose operators hold, move or reshape data and do no arithmetic.
const NO_ARITHMETIC: &[&str] = &[
    "AxisAddRemove",
    "Broadcast",
    "Concat",
    "Copy",
    "Dimshuffle",
    "GetVarShape",
    "Host2DeviceCopy",
    "Identity",
    "MarkDynamicVar",
    "MarkNoBroadcastElemwise",
    "MultipleDeviceTensorHolder",
    "MultipleDeviceTensorWithFormatHolder",
    "Reshape",
    "SharedDeviceTensor",
    "SharedDeviceTensorWithFormat",
    "Split",
    "Subtensor",
    "VolatileSharedDeviceTensor",
];

/// Types that compute, but whose operations MegEngine's counts leave out: its
/// profiler's `computation` is none, and network_visualize has no rule for them.
const COUNTED_AS_NONE: &[&str] = &[
    "Argsort",
    "CondTake",
    "IndexingMultiAxisVec",
    "LayerNorm",
    "NMSKeepMGB",
    "ROIAlign",
    "Resize",
    "Softmax",
    "TopK",
    "TypeCvt",
];

/// What one operator costs.
#[derive(Default)]
struct Cost {
    parameters: Option<Parameters>,
    /// (MACs, FLOPs). None: not a counted type. Some(None): counted, but a shape is missing.
    operations: Option<Option<(u64, u64)>>,
}

/// The cost of a graph's operators (`needed` ones only, when given).
pub fn graph_cost(graph: &Structure) -> GraphCost {
    let mut types: BTreeMap<String, TypeCost> = BTreeMap::new();
    let mut total = GraphCost {
        operators: graph.operators.len(),
        shapeless_why: match graph.format {
            GraphFormat::FbsV1 => "whose shapes FBS v1 does not store",
            GraphFormat::FbsV2 => "whose shapes are known only at run time",
        },
        ..GraphCost::default()
    };
    let var_dtypes = graph_dtypes(graph);
    for operator in &graph.operators {
        let name = type_name(&operator.op_type);
        let cost = operator_cost(graph, operator, name);
        let row = types.entry(name.to_string()).or_insert_with(|| TypeCost {
            op_type: name.to_string(),
            ..TypeCost::default()
        });
        row.count += 1;
        let dtypes = operator.outputs.iter().filter_map(|&id| *var_dtypes.get(id as usize)?);
        row.dtypes.extend(dtypes.map(dtype_name));
        if let Some(parameters) = cost.parameters {
            let sum = row.parameters.get_or_insert_with(Parameters::default);
            for into in [sum, &mut total.parameters] {
                into.count = into.count.saturating_add(parameters.count);
                into.bytes = into.bytes.saturating_add(parameters.bytes);
                into.tensors += parameters.tensors;
            }
        }
        match cost.operations {
            None | Some(None) => {
                total.uncounted += 1;
                total.shapeless += usize::from(cost.operations.is_some());
                *total.uncounted_types.entry(name.to_string()).or_default() += 1;
            }
            Some(Some((macs, flops))) => {
                for (into, value) in [
                    (row.macs.get_or_insert(0), macs),
                    (row.flops.get_or_insert(0), flops),
                    (&mut total.macs, macs),
                    (&mut total.flops, flops),
                ] {
                    *into = into.saturating_add(value);
                }
            }
        }
    }
    // Every count saturates rather than wraps: none of a real graph comes near.
    total.saturated = [total.macs, total.flops, total.parameters.count, total.parameters.bytes].contains(&u64::MAX);
    total.types = types.into_values().collect();
    total.types.sort_by(|a, b| {
        b.flops
            .cmp(&a.flops)
            .then(b.count.cmp(&a.count))
            .then(a.op_type.cmp(&b.op_type))
    });
    total
}

impl GraphCost {
    /// Why the totals leave operators out, where they do: `2 operators whose shapes
    /// are known only at run time`, `1 operator of a type not counted`.
    pub fn uncounted_reason(&self) -> Option<String> {
        let of_types = self.uncounted - self.shapeless;
        let reasons: Vec<String> = [
            (self.shapeless, self.shapeless_why),
            (of_types, "of a type not counted"),
        ]
        .into_iter()
        .filter(|&(count, _)| count > 0)
        .map(|(count, why)| format!("{} {why}", counted(count, "operator")))
        .collect();
        (!reasons.is_empty()).then(|| reasons.join(", "))
    }
}

fn operator_cost(graph: &Structure, operator: &Operator, name: &str) -> Cost {
    let shape = |id: Option<&u32>| id.and_then(|&id| graph.shape(id));
    let output = shape(operator.outputs.first());
    let counted = |operations: Option<(u64, u64)>| Cost {
        parameters: None,
        operations: Some(operations),
    };
    match name {
        "ImmutableTensor" => Cost {
            parameters: constant(operator),
            operations: Some(Some((0, 0))),
        },
        "Convolution" | "ConvBias" | "ConvBiasForward" => counted((|| {
            let (output, weight) = (output?, shape(operator.inputs.get(1))?);
            let per_output = elements(&weight[weight.len().checked_sub(3)?..]);
            let macs = elements(output).saturating_mul(per_output);
            let bias = if name == "Convolution" { 0 } else { elements(output) };
            Some((macs.saturating_add(bias), macs.saturating_mul(2).saturating_add(bias)))
        })()),
        "MatrixMul" | "BatchedMatrixMul" => {
            let transposed = operator
                .params
                .first()
                .and_then(|param| param.table.u8(TRANSPOSE_A).ok().flatten())
                .unwrap_or(0)
                != 0;
            counted((|| {
                let (output, a) = (output?, shape(operator.inputs.first())?);
                let inner = *a.get(a.len().checked_sub(if transposed { 2 } else { 1 })?)?;
                let macs = elements(output).saturating_mul(inner as u64);
                Some((macs, macs.saturating_mul(2)))
            })())
        }
        // The filter first, then `diff`, the input it spreads over the output.
        "ConvolutionBackwardData" => counted((|| {
            let (filter, diff) = (shape(operator.inputs.first())?, shape(operator.inputs.get(1))?);
            let macs = elements(diff).saturating_mul(elements(&filter[filter.len().checked_sub(3)?..]));
            Some((macs, macs.saturating_mul(2)))
        })()),
        "Elemwise" | "ElemwiseMultiType" => counted(output.map(|output| (0, elements(output)))),
        // As the engine's profiler: a comparison or addition per window element of each output.
        "Pooling" => counted((|| {
            let param = operator.params.first()?;
            let window = |name: &str| {
                let index = POOLING_FIELDS.iter().position(|field| *field == name)?;
                // A field at the schema's default (a window of 2) is left out of the flatbuffer.
                Some(u64::from(param.table.u32(index).ok()?.unwrap_or(2)))
            };
            Some((
                0,
                elements(output?)
                    .saturating_mul(window("window_h")?)
                    .saturating_mul(window("window_w")?),
            ))
        })()),
        // As the engine's profiler: an addition (or comparison) per input element.
        "Reduce" => counted(shape(operator.inputs.first()).map(|input| (0, elements(input)))),
        _ if NO_ARITHMETIC.contains(&name) || COUNTED_AS_NONE.contains(&name) => counted(Some((0, 0))),
        _ => Cost::default(),
    }
}

/// The parameters an `ImmutableTensor` holds: its tensor's elements and bytes.
fn constant(operator: &Operator) -> Option<Parameters> {
    let value = operator.tensors.first()?;
    let count = elements(&value.shape);
    Some(Parameters {
        count,
        bytes: count.saturating_mul(dtype_bits(value.dtype.unwrap_or(0))).div_ceil(8),
        tensors: 1,
    })
}

/// The elements of a tensor of `shape`, at most `u64::MAX`.
fn elements(shape: &[usize]) -> u64 {
    shape
        .iter()
        .fold(1u64, |product, &dim| product.saturating_mul(dim as u64))
}

/// Bits per element of megdnn's `DTypeEnum` (`dtype.fbs`).
pub fn dtype_bits(dtype: u8) -> u64 {
    match dtype {
        5 | 20 => 1,           // IntB1, QuantizedS1
        6 => 2,                // IntB2
        7 | 10 | 14 | 15 => 4, // IntB4, UintB4, Quantized4Asymm, QuantizedS4
        1 | 2 | 8 | 11 | 13 | 18 => 8,
        3 | 9 | 16 | 17 | 19 => 16,
        21 => 64, // Complex64
        _ => 32,  // Float32, Int32, QuantizedS32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_types_without_their_version() {
        assert_eq!(type_name("MatrixMulV2"), "MatrixMul");
        assert_eq!(type_name("PoolingV1"), "Pooling");
        assert_eq!(type_name("Convolution"), "Convolution");
        assert_eq!(type_name("Convolution3D"), "Convolution3D");
        assert_eq!(type_name("V2"), "V2");
    }
}
