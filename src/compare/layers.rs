//! `compare --by-layer`: the vars of two graphs of one network (float and
//! int8, fp32 and fp16, before and after a graph change) paired by
//! topology, as the structural diff pairs operators, and each pair's noise
//! measured: SQNR, cosine similarity, largest difference.
//!
//! Names do not pair such graphs (`conv1.RELU` against `conv1.ConvBias`),
//! nor do operators one for one: a float convolution and the elementwise
//! operator after it are one int8 `ConvBiasForward`. So each side's io dump
//! is read as layers: an operator that computes, with the elementwise
//! operators and type conversions fused after it (each reading the layer's
//! last var, which nothing else reads), a `TypeCvt` the other side lacks
//! passed through. Layers pair as the structural diff pairs operators: of
//! one kind, their inputs the paired layers' (graph inputs by name), in
//! execution order; each pair compares the layers' last vars.

use std::collections::{HashMap, HashSet, VecDeque};

use anyhow::{Context, Result};
use serde::{Serialize, Serializer};

use super::sides::Tensor;
use crate::iodump::IndexVar;
use crate::tensor::npy::Npy;

/// Above this SQNR (float32's rounding: 20 log10 2^24), two vars count as
/// the same values when the fall of the SQNR is measured.
const EXACT_DB: f64 = 144.49;

/// One pair of vars, A's the reference.
#[derive(Clone, Debug, Serialize)]
pub struct LayerPair {
    pub a_var: String,
    pub b_var: String,
    pub a_dtype: String,
    pub b_dtype: String,
    /// `10 log10(sum a^2 / sum (a - b)^2)`; infinite (null in JSON) where the
    /// values are the same, none where they cannot be compared.
    #[serde(serialize_with = "finite_or_null")]
    pub sqnr_db: Option<f64>,
    pub cosine: Option<f64>,
    pub max_abs: Option<f64>,
}

/// Where the SQNR falls most: from the lowest of the layer's inputs' to its own.
#[derive(Clone, Debug, Serialize)]
pub struct Fall {
    pub a_var: String,
    pub b_var: String,
    /// The lowest SQNR of the pairs it reads (`EXACT_DB` for values the same).
    pub from_db: f64,
    pub to_db: f64,
    pub fall_db: f64,
}

/// Both graphs layer by layer, under the names of `compare`'s JSON.
#[derive(Clone, Debug, Serialize)]
pub struct ByLayer {
    /// In A's execution order.
    #[serde(rename = "by_layer")]
    pub pairs: Vec<LayerPair>,
    /// Layers of each side that found no partner.
    #[serde(rename = "by_layer_unpaired_a")]
    pub unpaired_a: usize,
    #[serde(rename = "by_layer_unpaired_b")]
    pub unpaired_b: usize,
    /// Null where no pair reads another.
    #[serde(rename = "by_layer_fall")]
    pub largest_fall: Option<Fall>,
}

fn finite_or_null<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    value.filter(|value| value.is_finite()).serialize(serializer)
}

/// Where a layer's input comes from: a graph input, by name, or a layer of its side.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Origin {
    Input(String),
    Layer(usize),
}

/// An operator that computes and the operators fused after it.
#[derive(Debug)]
struct Layer {
    kind: &'static str,
    /// Sorted, once each.
    inputs: Vec<Origin>,
    /// The var of its first operator, and its last var: what is compared.
    head: usize,
    last: usize,
    /// Its last var is weighed inside another layer's operator (MegEngine folds
    /// a branch's batch norm into the residual add, `FUSE_MUL_ADD4`): that var
    /// is not the branch's finished value, so no fall is measured at it.
    finished_elsewhere: bool,
}

/// What a layer's first operator does, whatever its variant: a float
/// convolution and an int8 convolution with bias are one kind.
fn kind(op_type: &str) -> &'static str {
    match op_type {
        "Convolution" | "ConvolutionForward" | "ConvBias" | "ConvBiasForward" => "convolution",
        "MatrixMul" | "MatrixMulV2" | "BatchedMatrixMul" | "BatchedMatrixMulV2" => "matrix multiplication",
        "Pooling" | "PoolingForward" => "pooling",
        "Host2DeviceCopy" => "input",
        "Elemwise" | "ElemwiseMultiType" => "elementwise",
        "TypeCvt" => "type conversion",
        "Reshape" | "Dimshuffle" | "AxisAddRemove" => "reshape",
        _ => "other",
    }
}

/// The vars whose values no graph input's values reach: constants, a shape
/// (`GetVarShape`), and what is computed from them only, such as a batch
/// norm's scale reshaped to a shape the graph infers (an input absent from
/// the io dump was inferred, not executed). They are weights, no layer.
fn constants(vars: &[IndexVar]) -> HashSet<&str> {
    let dumped: HashSet<&str> = vars.iter().map(|var| var.name.as_str()).collect();
    let mut constant: HashSet<&str> = HashSet::new();
    for var in vars {
        let from_constants = var
            .inputs
            .iter()
            .all(|input| constant.contains(input.as_str()) || !dumped.contains(input.as_str()));
        let computed = var.op_type != "Host2DeviceCopy" && from_constants;
        if computed || var.op_type == "GetVarShape" {
            constant.insert(&var.name);
        }
    }
    constant
}

/// How many operators read each var's values (a var an operator reads twice
/// counts once; a constant reads no values).
fn readers<'a>(vars: &'a [IndexVar], constants: &HashSet<&str>) -> HashMap<&'a str, usize> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    let mut operator = None;
    for var in vars {
        // An operator's output vars follow each other in the index, each with its inputs.
        if operator == Some(var.operator.as_str()) || constants.contains(var.name.as_str()) {
            continue;
        }
        operator = Some(var.operator.as_str());
        let mut inputs: Vec<&str> = var.inputs.iter().map(String::as_str).collect();
        inputs.sort_unstable();
        inputs.dedup();
        for input in inputs {
            *count.entry(input).or_default() += 1;
        }
    }
    count
}

/// A side's io dump as layers, in execution order.
fn layers(vars: &[IndexVar]) -> Vec<Layer> {
    let constants = constants(vars);
    let readers = readers(vars, &constants);
    let mut layers: Vec<Layer> = Vec::new();
    let mut layer_of: HashMap<&str, usize> = HashMap::new();
    for (at, var) in vars.iter().enumerate() {
        if constants.contains(var.name.as_str()) {
            continue;
        }
        let read: Vec<usize> = var
            .inputs
            .iter()
            .filter_map(|input| layer_of.get(input.as_str()).copied())
            .collect();
        let fused = match kind(&var.op_type) {
            "elementwise" | "type conversion" => fused_into(var, &layers, &layer_of, &readers, vars),
            _ => None,
        };
        if let Some(layer) = fused {
            if var.inputs.iter().any(|input| constants.contains(input.as_str())) {
                for &other in read.iter().filter(|&&other| other != layer) {
                    let last = &vars[layers[other].last].name;
                    layers[other].finished_elsewhere |= var.inputs.contains(last);
                }
            }
            let fused = &mut layers[layer];
            fused.last = at;
            fused.inputs.extend(
                read.iter()
                    .filter(|&&other| other != layer)
                    .map(|&other| Origin::Layer(other)),
            );
            fused.inputs.sort();
            fused.inputs.dedup();
            layer_of.insert(&var.name, layer);
            continue;
        }
        // A type conversion no layer fuses passes its input's layer through.
        if let (Some(&layer), "TypeCvt") = (read.first(), var.op_type.as_str()) {
            layer_of.insert(&var.name, layer);
            continue;
        }
        let inputs = match var.op_type.as_str() {
            "Host2DeviceCopy" => vec![Origin::Input(var.name.clone())],
            _ => {
                let mut inputs: Vec<Origin> = read.iter().map(|&layer| Origin::Layer(layer)).collect();
                inputs.sort();
                inputs.dedup();
                inputs
            }
        };
        layer_of.insert(&var.name, layers.len());
        layers.push(Layer {
            kind: kind(&var.op_type),
            inputs,
            head: at,
            last: at,
            finished_elsewhere: false,
        });
    }
    layers
}

/// The layer an elementwise operator or a type conversion `var` fuses
/// into: one whose last var it reads and nothing else reads; of several,
/// the one begun last (an int8 convolution adds the branch computed before it).
fn fused_into(
    var: &IndexVar,
    layers: &[Layer],
    layer_of: &HashMap<&str, usize>,
    readers: &HashMap<&str, usize>,
    vars: &[IndexVar],
) -> Option<usize> {
    var.inputs
        .iter()
        .filter(|input| readers.get(input.as_str()) == Some(&1))
        .filter_map(|input| {
            let layer = *layer_of.get(input.as_str())?;
            (vars[layers[layer].last].name == *input).then_some(layer)
        })
        .max_by_key(|&layer| layers[layer].head)
}

/// Pairs the layers of A and B as the structural diff pairs operators: B's
/// in execution order, each with A's first unpaired layer of its kind whose
/// inputs are the partners of its own. (A's index, B's), in A's order.
fn pair_layers(a: &[Layer], b: &[Layer]) -> Vec<(usize, usize)> {
    let mut candidates: HashMap<(&str, Vec<Origin>), VecDeque<usize>> = HashMap::new();
    for (at, layer) in a.iter().enumerate() {
        candidates
            .entry((layer.kind, layer.inputs.clone()))
            .or_default()
            .push_back(at);
    }
    let mut partner: Vec<Option<usize>> = vec![None; b.len()];
    for (at, layer) in b.iter().enumerate() {
        let inputs: Option<Vec<Origin>> = layer
            .inputs
            .iter()
            .map(|origin| match origin {
                Origin::Input(name) => Some(Origin::Input(name.clone())),
                Origin::Layer(theirs) => partner[*theirs].map(Origin::Layer),
            })
            .collect();
        let Some(mut inputs) = inputs else {
            continue;
        };
        inputs.sort();
        partner[at] = candidates.get_mut(&(layer.kind, inputs)).and_then(VecDeque::pop_front);
    }
    let mut pairs: Vec<(usize, usize)> = partner
        .iter()
        .enumerate()
        .filter_map(|(b, a)| a.map(|a| (a, b)))
        .collect();
    pairs.sort_unstable();
    pairs
}

/// Both io dumps' vars (`a`, `b`: each side's tensors in execution order)
/// paired layer by layer and measured, B against A.
pub fn by_layer(a: &[Tensor], b: &[Tensor]) -> Result<ByLayer> {
    fn dumped(tensors: &[Tensor]) -> (Vec<&Tensor>, Vec<IndexVar>) {
        tensors
            .iter()
            .filter_map(|tensor| Some((tensor, tensor.var.clone()?)))
            .unzip()
    }
    let ((a_tensors, a_vars), (b_tensors, b_vars)) = (dumped(a), dumped(b));
    let (a_layers, b_layers) = (layers(&a_vars), layers(&b_vars));
    let pairs = pair_layers(&a_layers, &b_layers);
    let mut measured = Vec::with_capacity(pairs.len());
    for &(x, y) in &pairs {
        let pair = measure(a_tensors[a_layers[x].last], b_tensors[b_layers[y].last])?;
        measured.push((x, pair));
    }
    let largest_fall = largest_fall(&a_layers, &measured);
    Ok(ByLayer {
        unpaired_a: a_layers.len() - pairs.len(),
        unpaired_b: b_layers.len() - pairs.len(),
        pairs: measured.into_iter().map(|(_, pair)| pair).collect(),
        largest_fall,
    })
}

/// The pair whose SQNR falls most below the lowest of the pairs it reads,
/// of those whose A var is its layer's finished value; the first of equals.
fn largest_fall(a_layers: &[Layer], measured: &[(usize, LayerPair)]) -> Option<Fall> {
    let sqnr_of: HashMap<usize, f64> = measured
        .iter()
        .filter_map(|(layer, pair)| Some((*layer, pair.sqnr_db?.min(EXACT_DB))))
        .collect();
    let mut largest: Option<Fall> = None;
    for (layer, pair) in measured {
        let Some(&to_db) = sqnr_of.get(layer).filter(|_| !a_layers[*layer].finished_elsewhere) else {
            continue;
        };
        let from_db = a_layers[*layer]
            .inputs
            .iter()
            .filter_map(|origin| match origin {
                Origin::Layer(input) if !a_layers[*input].finished_elsewhere => sqnr_of.get(input).copied(),
                _ => None,
            })
            .reduce(f64::min);
        let Some(from_db) = from_db else {
            continue;
        };
        if largest.as_ref().is_none_or(|fall| from_db - to_db > fall.fall_db) {
            largest = Some(Fall {
                a_var: pair.a_var.clone(),
                b_var: pair.b_var.clone(),
                from_db,
                to_db,
                fall_db: from_db - to_db,
            });
        }
    }
    largest
}

/// One pair's SQNR, cosine similarity and largest difference, each value
/// read as a real number (a quantized var's through its scale).
fn measure(a: &Tensor, b: &Tensor) -> Result<LayerPair> {
    let dtype = |tensor: &Tensor| {
        tensor
            .var
            .as_ref()
            .and_then(|var| var.dtype.clone())
            .unwrap_or_default()
    };
    let mut pair = LayerPair {
        a_var: a.name.clone(),
        b_var: b.name.clone(),
        a_dtype: dtype(a),
        b_dtype: dtype(b),
        sqnr_db: None,
        cosine: None,
        max_abs: None,
    };
    let (Some(a_bytes), Some(b_bytes)) = (a.read()?, b.read()?) else {
        return Ok(pair);
    };
    let a_npy = Npy::parse(&a_bytes).with_context(|| a.location())?;
    let b_npy = Npy::parse(&b_bytes).with_context(|| b.location())?;
    let (Some(x), Some(y)) = (a.real_view(&a_npy), b.real_view(&b_npy)) else {
        return Ok(pair);
    };
    if x.len() != y.len() || x.shape != y.shape {
        return Ok(pair);
    }
    let (mut signal, mut noise, mut b_energy, mut dot, mut max_abs) = (0.0, 0.0, 0.0, 0.0, 0.0f64);
    for (u, v) in x.values().zip(y.values()) {
        signal += u * u;
        b_energy += v * v;
        dot += u * v;
        noise += (u - v) * (u - v);
        max_abs = super::worst(max_abs, (u - v).abs());
    }
    pair.sqnr_db = Some(match noise {
        0.0 => f64::INFINITY,
        _ => 10.0 * (signal / noise).log10(),
    })
    .filter(|db| !db.is_nan());
    pair.cosine = Some(dot / (signal * b_energy).sqrt()).filter(|cosine| cosine.is_finite());
    pair.max_abs = Some(max_abs).filter(|value| !value.is_nan());
    Ok(pair)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, op_type: &str, inputs: &[&str]) -> IndexVar {
        IndexVar {
            name: name.to_string(),
            id: 0,
            operator: name.to_string(),
            op_type: op_type.to_string(),
            inputs: inputs.iter().map(|input| input.to_string()).collect(),
            shape: None,
            dtype: None,
            scale: None,
            zero_point: None,
            file: None,
        }
    }

    /// Pairs the layers of `a` and `b` and checks their last vars' names against `expected`.
    fn assert_paired(a: &[IndexVar], b: &[IndexVar], expected: &[(&str, &str)]) {
        let (a_layers, b_layers) = (layers(a), layers(b));
        let last = |vars: &[IndexVar], layers: &[Layer], at: usize| vars[layers[at].last].name.clone();
        let pairs: Vec<(String, String)> = pair_layers(&a_layers, &b_layers)
            .into_iter()
            .map(|(x, y)| (last(a, &a_layers, x), last(b, &b_layers, y)))
            .collect();
        let expected: Vec<(String, String)> = expected.iter().map(|(x, y)| (x.to_string(), y.to_string())).collect();
        assert_eq!(pairs, expected, "{a_layers:?} {b_layers:?}");
    }

    /// A float convolution, its bias and ReLU, pair with an int8
    /// convolution with bias whose input a `TypeCvt` only B has quantizes;
    /// a residual addition fuses into the convolution begun last.
    #[test]
    fn a_float_chain_pairs_with_its_fused_int8_operators() {
        let a = [
            var("w", "ImmutableTensor", &[]),
            var("data", "Host2DeviceCopy", &[]),
            var("conv1", "Convolution", &["data", "w"]),
            var("conv1.RELU", "Elemwise", &["conv1", "w"]),
            var("down", "Convolution", &["conv1.RELU", "w"]),
            var("conv2", "Convolution", &["conv1.RELU", "w"]),
            var("conv2.ADD", "Elemwise", &["conv2", "down"]),
            var("out", "Elemwise", &["conv2.ADD"]),
        ];
        let b = [
            var("w", "ImmutableTensor", &[]),
            var("data", "Host2DeviceCopy", &[]),
            var("quant", "TypeCvt", &["data"]),
            var("conv1.ConvBias", "ConvBiasForward", &["quant", "w"]),
            var("down.ConvBias", "ConvBiasForward", &["conv1.ConvBias", "w"]),
            var(
                "conv2.ConvBias",
                "ConvBiasForward",
                &["conv1.ConvBias", "w", "w", "down.ConvBias"],
            ),
            var("out", "TypeCvt", &["conv2.ConvBias"]),
        ];
        let expected = [
            ("data", "quant"),
            ("conv1.RELU", "conv1.ConvBias"),
            ("down", "down.ConvBias"),
            ("out", "out"),
        ];
        assert_paired(&a, &b, &expected);
    }

    /// A batch norm left in a float dump computes its scale from weights
    /// reshaped to a shape the graph inferred (a `Concat` absent from the io
    /// dump) and reads the activation's shape: these are weights, so the
    /// convolution still pairs with the int8 one, as does the residual
    /// addition after it.
    #[test]
    fn weights_computed_at_run_time_are_no_layer() {
        let a = [
            var("bn.weight", "ImmutableTensor", &[]),
            var("bn.Reshape", "Reshape", &["bn.weight", "bn.Concat"]),
            var("bn.scale", "Elemwise", &["bn.Reshape", "bn.weight"]),
            var("data", "Host2DeviceCopy", &[]),
            var("conv1", "ConvolutionForward", &["data", "bn.weight"]),
            var("shape", "GetVarShape", &["conv1"]),
            var("conv1.MUL", "Elemwise", &["conv1", "bn.scale", "bn.Reshape"]),
            var("conv1.RELU", "Elemwise", &["conv1.MUL"]),
            var("conv2", "ConvolutionForward", &["conv1.RELU", "bn.weight"]),
            var("add_relu", "Elemwise", &["conv2", "conv1.RELU", "bn.Reshape"]),
        ];
        let b = [
            var("w", "ImmutableTensor", &[]),
            var("data", "Host2DeviceCopy", &[]),
            var("quant", "TypeCvt", &["data"]),
            var("conv1.ConvBias", "ConvBiasForward", &["quant", "w"]),
            var("conv2.ConvBias", "ConvBiasForward", &["conv1.ConvBias", "w"]),
            var("add_relu", "ElemwiseMultiType", &["conv2.ConvBias", "conv1.ConvBias"]),
        ];
        let expected = [
            ("data", "quant"),
            ("conv1.RELU", "conv1.ConvBias"),
            ("add_relu", "add_relu"),
        ];
        assert_paired(&a, &b, &expected);
    }
}
