//! Two model graphs compared from their files: operators only in one, and
//! changed (type, parameters, output shapes and dtypes, the constants they
//! read), parameters and operations per type and in total, inputs and
//! outputs. No engine runs.
//!
//! Operators are matched by name first: a name the dump gave (a module's,
//! `conv2.Convolution`), on its operator or its output var, that one operator
//! of the type holds on each side. Names the engine made up (`RELU[3]`,
//! `conv(data,w)[8]`: counters and ids that an operator more shifts) are not
//! matched by. The rest are matched by topology, in execution order: an
//! operator of the same type whose inputs come from the matched counterparts
//! of its own (graph inputs by name, constants by place), so that a renamed
//! var is one operator changed, not one removed and one added. Constants
//! (weights, biases) are compared as the inputs of the operators that read them.

use std::collections::HashMap;

use serde::Serialize;

use anyhow::Result;

use super::cost::{dtype_bits, graph_cost, type_name, GraphCost, Parameters, POOLING_FIELDS};
use super::structure::{Dumped, Operator, Param, Structure, Tensor};
use super::ModelGraph;
use crate::text::number;

/// How two graphs differ; every list is empty when they are the same.
#[derive(Debug, Serialize)]
pub struct StructureDiff {
    pub ops_only_a: Vec<OpRef>,
    pub ops_only_b: Vec<OpRef>,
    pub ops_changed: Vec<OpChange>,
    /// Operators matched on both sides, changed or not.
    pub ops_matched: usize,
    pub params: ParamsDiff,
    pub macs: Totals,
    pub flops: Totals,
    /// Types whose count or operations differ.
    pub types: Vec<TypeDiff>,
    pub inputs: Vec<IoChange>,
    pub outputs: Vec<IoChange>,
    pub dumped: Sides<DumpedAs>,
}

#[derive(Debug, Serialize)]
pub struct Sides<T> {
    pub a: T,
    pub b: T,
}

/// An operator of one side.
#[derive(Debug, Serialize)]
pub struct OpRef {
    pub name: String,
    #[serde(rename = "type")]
    pub op_type: String,
    /// Its first output var.
    pub var: String,
}

/// An operator on both sides that differs.
#[derive(Debug, Serialize)]
pub struct OpChange {
    pub a_name: String,
    pub b_name: String,
    #[serde(rename = "type")]
    pub op_type: String,
    /// What differs: `type`, `name`, `param`, `inputs`, `shape`, `dtype`, `weights`.
    pub changes: Vec<&'static str>,
    /// How, a phrase each: `pad_h 1 -> 4`, `conv2.weight (16,16,3,3) -> (16,16,9,9)`.
    pub details: Vec<Detail>,
}

#[derive(Debug, Serialize)]
pub struct Detail {
    /// One of `OpChange::changes`.
    pub change: &'static str,
    pub detail: String,
}

#[derive(Debug, Serialize)]
pub struct ParamsDiff {
    pub a: Parameters,
    pub b: Parameters,
    /// Constants read in the same place by matched operators whose values differ.
    pub differing_tensors: usize,
    /// The largest element difference among those of the same shape.
    pub largest_difference: Option<WeightDifference>,
}

#[derive(Debug, Serialize)]
pub struct WeightDifference {
    pub a_var: String,
    pub b_var: String,
    pub max_abs_diff: f64,
}

/// A total of both sides; `None` where some operator of a counted type
/// needs a shape the graph does not store (FBS v1).
#[derive(Debug, Serialize)]
pub struct Totals {
    pub a: Option<u64>,
    pub b: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct TypeDiff {
    #[serde(rename = "type")]
    pub op_type: String,
    pub count: Sides<usize>,
    pub macs: Sides<Option<u64>>,
    pub flops: Sides<Option<u64>>,
}

/// An input or output that differs.
#[derive(Debug, Serialize)]
pub struct IoChange {
    pub a: Option<IoVar>,
    pub b: Option<IoVar>,
    /// `only_a`, `only_b`, `name`, `shape`, `dtype`.
    pub changes: Vec<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IoVar {
    /// `None` where the file does not name it (FBS v1 names few vars).
    pub name: Option<String>,
    pub shape: Option<Vec<usize>>,
    pub dtype: Option<String>,
}

/// What a side's file says of how it was dumped.
#[derive(Debug, Serialize)]
pub struct DumpedAs {
    /// `fbs-v2`, `packed fbs-v1`, ...
    pub format: String,
    pub container: bool,
    #[serde(flatten)]
    pub graph: Dumped,
}

impl StructureDiff {
    /// Whether the graphs are the same: nothing differs but how they were dumped.
    pub fn same(&self) -> bool {
        self.ops_only_a.is_empty()
            && self.ops_only_b.is_empty()
            && self.ops_changed.is_empty()
            && self.inputs.is_empty()
            && self.outputs.is_empty()
            && self.params.differing_tensors == 0
            && self.params.a == self.params.b
    }
}

/// megdnn's `DTypeEnum`, by number.
const DTYPES: [&str; 22] = [
    "float32",
    "uint8",
    "int8",
    "int16",
    "int32",
    "intb1",
    "intb2",
    "intb4",
    "byte",
    "float16",
    "uintb4",
    "quint8",
    "qint32",
    "qint8",
    "quint4",
    "qint4",
    "qint16",
    "bfloat16",
    "bool",
    "uint16",
    "qint1",
    "complex64",
];

pub fn dtype_name(dtype: u8) -> String {
    DTYPES
        .get(dtype as usize)
        .map_or_else(|| format!("dtype {dtype}"), |name| name.to_string())
}

/// Two model files' graphs compared (see `diff`), each as the engine runs
/// it (`ModelFile::model_graph`).
pub fn diff_graphs(a: &ModelGraph, b: &ModelGraph) -> Result<StructureDiff> {
    let (structure_a, structure_b) = (a.structure()?, b.structure()?);
    let dumped = |graph: &ModelGraph, structure: &Structure| DumpedAs {
        format: graph.file_format.clone(),
        container: graph.container,
        graph: structure.dumped.clone(),
    };
    let sides = Sides {
        a: dumped(a, &structure_a),
        b: dumped(b, &structure_b),
    };
    Ok(diff(&structure_a, &structure_b, sides))
}

/// Compares graph `a` with graph `b` (each pruned to what its outputs need),
/// dumped as `dumped` says.
pub fn diff(a: &Structure, b: &Structure, dumped: Sides<DumpedAs>) -> StructureDiff {
    let sides = [Side::of(a), Side::of(b)];
    let pairs = match_operators(&sides);
    let (changed, constants) = changed_operators(&sides, &pairs);
    let matched_b: Vec<bool> = {
        let mut seen = vec![false; b.operators.len()];
        pairs.iter().for_each(|&(_, at)| seen[at] = true);
        seen
    };
    let matched_a: Vec<bool> = {
        let mut seen = vec![false; a.operators.len()];
        pairs.iter().for_each(|&(at, _)| seen[at] = true);
        seen
    };
    let only = |side: &Side, matched: &[bool]| -> Vec<OpRef> {
        side.computed()
            .filter(|&at| !matched[at])
            .map(|at| side.op_ref(at))
            .collect()
    };
    let costs = [graph_cost(&sides[0].pruned()), graph_cost(&sides[1].pruned())];
    StructureDiff {
        ops_only_a: only(&sides[0], &matched_a),
        ops_only_b: only(&sides[1], &matched_b),
        ops_changed: changed,
        ops_matched: pairs.len(),
        params: ParamsDiff {
            a: costs[0].parameters,
            b: costs[1].parameters,
            differing_tensors: constants.differing,
            largest_difference: constants.largest,
        },
        macs: totals(&costs, |cost| cost.macs),
        flops: totals(&costs, |cost| cost.flops),
        types: type_diffs(&costs),
        inputs: io_changes(&sides[0].inputs(), &sides[1].inputs()),
        outputs: io_changes(&sides[0].outputs(), &sides[1].outputs()),
        dumped,
    }
}

/// One graph, with who writes each var and which operators its outputs need.
struct Side<'s, 'a> {
    graph: &'s Structure<'a>,
    needed: Vec<bool>,
    /// By var id: the operator that writes it.
    writer: Vec<Option<usize>>,
}

impl<'s, 'a> Side<'s, 'a> {
    fn of(graph: &'s Structure<'a>) -> Side<'s, 'a> {
        let mut writer = vec![None; graph.vars.len()];
        for (at, operator) in graph.operators.iter().enumerate() {
            for &id in &operator.outputs {
                if let Some(slot) = writer.get_mut(id as usize) {
                    *slot = Some(at);
                }
            }
        }
        Side {
            graph,
            needed: graph.needed(),
            writer,
        }
    }

    fn operator(&self, at: usize) -> &Operator<'a> {
        &self.graph.operators[at]
    }

    /// The operators that compute: needed, neither constants nor inputs.
    fn computed(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.graph.operators.len()).filter(|&at| {
            let operator = self.operator(at);
            self.needed[at] && !operator.is_constant() && !operator.is_input()
        })
    }

    /// The graph with only the needed operators, for its cost.
    fn pruned(&self) -> Structure<'a> {
        Structure {
            format: self.graph.format,
            root: self.graph.root,
            operators: self
                .graph
                .operators
                .iter()
                .zip(&self.needed)
                .filter(|(_, needed)| **needed)
                .map(|(operator, _)| operator.clone())
                .collect(),
            vars: self.graph.vars.clone(),
            outputs: self.graph.outputs.clone(),
            dumped: self.graph.dumped.clone(),
        }
    }

    fn var_name(&self, id: u32) -> String {
        self.graph
            .vars
            .get(id as usize)
            .and_then(|var| var.name)
            .map_or_else(|| format!("var {id}"), String::from)
    }

    /// An operator's name: the one it was dumped with, else its first output's.
    fn name(&self, at: usize) -> String {
        let operator = self.operator(at);
        match operator.name {
            Some(name) => name.to_string(),
            None => operator
                .outputs
                .first()
                .map_or_else(String::new, |&id| self.var_name(id)),
        }
    }

    fn op_ref(&self, at: usize) -> OpRef {
        let operator = self.operator(at);
        OpRef {
            name: self.name(at),
            op_type: type_name(&operator.op_type).to_string(),
            var: operator
                .outputs
                .first()
                .map_or_else(String::new, |&id| self.var_name(id)),
        }
    }

    /// The names that identify an operator: its own and its outputs', but
    /// those the engine made up.
    fn stable_names(&self, at: usize) -> Vec<&'a str> {
        let operator = self.operator(at);
        let vars = operator
            .outputs
            .iter()
            .filter_map(|&id| self.graph.vars.get(id as usize).and_then(|var| var.name));
        operator
            .name
            .into_iter()
            .chain(vars)
            .filter(|name| !made_up(name))
            .collect()
    }

    /// What feeds input `index` of operator `at`.
    fn source(&self, at: usize, index: usize) -> InputOrigin {
        let Some(&id) = self.operator(at).inputs.get(index) else {
            return InputOrigin::Missing;
        };
        match self.writer.get(id as usize).copied().flatten() {
            None => InputOrigin::Missing,
            Some(writer) if self.operator(writer).is_input() => InputOrigin::Input(self.var_name(id)),
            Some(writer) if self.operator(writer).is_constant() => InputOrigin::Constant(writer),
            Some(writer) => InputOrigin::Computed(writer),
        }
    }

    fn inputs(&self) -> Vec<IoVar> {
        (0..self.graph.operators.len())
            .filter(|&at| self.needed[at] && self.operator(at).is_input())
            .filter_map(|at| {
                let operator = self.operator(at);
                let id = *operator.outputs.first()?;
                let declared = operator.tensors.first();
                Some(self.io_var(id, declared))
            })
            .collect()
    }

    fn outputs(&self) -> Vec<IoVar> {
        self.graph.outputs.iter().map(|&id| self.io_var(id, None)).collect()
    }

    fn io_var(&self, id: u32, declared: Option<&Tensor>) -> IoVar {
        let var = self.graph.vars.get(id as usize);
        let shape = var
            .and_then(|var| var.shape.clone())
            .or_else(|| declared.map(|tensor| tensor.shape.clone()));
        let dtype = var
            .and_then(|var| var.dtype)
            .or(declared.and_then(|tensor| tensor.dtype));
        IoVar {
            name: var.and_then(|var| var.name).map(String::from),
            shape,
            dtype: dtype.map(dtype_name),
        }
    }
}

/// What an operator's input comes from.
#[derive(Debug, PartialEq)]
enum InputOrigin {
    Input(String),
    Constant(usize),
    Computed(usize),
    Missing,
}

/// A name the engine made up: a counter or an id in brackets at its end.
fn made_up(name: &str) -> bool {
    name.strip_suffix(']')
        .and_then(|rest| rest.rsplit_once('['))
        .is_some_and(|(_, number)| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
}

/// Matched operators (A's index, B's), by name then by topology.
fn match_operators(sides: &[Side; 2]) -> Vec<(usize, usize)> {
    let mut partner: [HashMap<usize, usize>; 2] = [HashMap::new(), HashMap::new()];
    let pair = |partner: &mut [HashMap<usize, usize>; 2], a: usize, b: usize| {
        partner[0].insert(a, b);
        partner[1].insert(b, a);
    };
    for (a, b) in by_name(sides) {
        pair(&mut partner, a, b);
    }
    loop {
        let mut progress = false;
        for b in sides[1].computed().collect::<Vec<_>>() {
            if partner[1].contains_key(&b) {
                continue;
            }
            let candidate = sides[0]
                .computed()
                .filter(|a| !partner[0].contains_key(a))
                .find(|&a| same_place(sides, &partner[0], a, b));
            if let Some(a) = candidate {
                pair(&mut partner, a, b);
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    let mut pairs: Vec<(usize, usize)> = partner[0].iter().map(|(&a, &b)| (a, b)).collect();
    pairs.sort_by_key(|&(_, b)| b);
    pairs
}

/// Operators of a type that hold the same stable name, one on each side.
fn by_name(sides: &[Side; 2]) -> Vec<(usize, usize)> {
    fn index<'a>(side: &Side<'_, 'a>) -> HashMap<(&'a str, String), Vec<usize>> {
        let mut holders: HashMap<(&'a str, String), Vec<usize>> = HashMap::new();
        for at in side.computed() {
            let op_type = type_name(&side.operator(at).op_type).to_string();
            for name in side.stable_names(at) {
                holders.entry((name, op_type.clone())).or_default().push(at);
            }
        }
        holders
    }
    let (a, b) = (index(&sides[0]), index(&sides[1]));
    let mut pairs: Vec<(usize, usize)> = b
        .iter()
        .filter_map(
            |(key, theirs)| match (a.get(key).map(Vec::as_slice), theirs.as_slice()) {
                (Some([mine]), [theirs]) => Some((*mine, *theirs)),
                _ => None,
            },
        )
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    // One partner each: an operator two names pair with two others keeps none.
    let count = |pick: fn(&(usize, usize)) -> usize, at: usize| pairs.iter().filter(|pair| pick(pair) == at).count();
    pairs
        .iter()
        .copied()
        .filter(|&(a, b)| count(|pair| pair.0, a) == 1 && count(|pair| pair.1, b) == 1)
        .collect()
}

/// Whether A's operator `a` sits where B's `b` does: the same type, inputs
/// from the same places (inputs by name, constants anywhere, computed vars
/// from matched operators).
fn same_place(sides: &[Side; 2], partner: &HashMap<usize, usize>, a: usize, b: usize) -> bool {
    let (mine, theirs) = (sides[0].operator(a), sides[1].operator(b));
    if type_name(&mine.op_type) != type_name(&theirs.op_type) || mine.inputs.len() != theirs.inputs.len() {
        return false;
    }
    (0..mine.inputs.len()).all(|index| match (sides[0].source(a, index), sides[1].source(b, index)) {
        (InputOrigin::Input(x), InputOrigin::Input(y)) => x == y,
        (InputOrigin::Constant(_), InputOrigin::Constant(_)) => true,
        (InputOrigin::Computed(x), InputOrigin::Computed(y)) => partner.get(&x) == Some(&y),
        _ => false,
    })
}

/// The constants matched operators read, compared.
#[derive(Default)]
struct Constants {
    differing: usize,
    largest: Option<WeightDifference>,
    seen: Vec<(usize, usize)>,
}

/// The matched operators that differ, and the constants they read.
fn changed_operators(sides: &[Side; 2], pairs: &[(usize, usize)]) -> (Vec<OpChange>, Constants) {
    let mut constants = Constants::default();
    let changed = pairs
        .iter()
        .filter_map(|&(a, b)| {
            let mut change = Change::default();
            compare_operators(sides, a, b, &mut change);
            compare_constants(sides, a, b, &mut change, &mut constants);
            (!change.words.is_empty()).then(|| OpChange {
                a_name: sides[0].name(a),
                b_name: sides[1].name(b),
                op_type: type_name(&sides[1].operator(b).op_type).to_string(),
                changes: change.words,
                details: change.details,
            })
        })
        .collect();
    (changed, constants)
}

#[derive(Default)]
struct Change {
    words: Vec<&'static str>,
    details: Vec<Detail>,
}

impl Change {
    fn add(&mut self, change: &'static str, detail: String) {
        if !self.words.contains(&change) {
            self.words.push(change);
        }
        self.details.push(Detail { change, detail });
    }
}

/// Type, name, parameters, inputs, output shapes and dtypes.
fn compare_operators(sides: &[Side; 2], a: usize, b: usize, change: &mut Change) {
    let (mine, theirs) = (sides[0].operator(a), sides[1].operator(b));
    if type_name(&mine.op_type) != type_name(&theirs.op_type) {
        change.add("type", format!("{} -> {}", mine.op_type, theirs.op_type));
    }
    let (name_a, name_b) = (sides[0].stable_names(a), sides[1].stable_names(b));
    if !name_a.is_empty() && !name_b.is_empty() && !name_a.iter().any(|name| name_b.contains(name)) {
        change.add("name", format!("'{}' -> '{}'", name_a[0], name_b[0]));
    }
    for detail in param_changes(&mine.params, &theirs.params) {
        change.add("param", detail);
    }
    if mine.inputs.len() != theirs.inputs.len() {
        change.add(
            "inputs",
            format!("{} inputs -> {}", mine.inputs.len(), theirs.inputs.len()),
        );
    }
    for (&x, &y) in mine.outputs.iter().zip(&theirs.outputs) {
        let (Some(var_a), Some(var_b)) = (sides[0].graph.vars.get(x as usize), sides[1].graph.vars.get(y as usize))
        else {
            continue;
        };
        if let (Some(shape_a), Some(shape_b)) = (&var_a.shape, &var_b.shape) {
            if shape_a != shape_b {
                change.add(
                    "shape",
                    format!("output {} -> {}", shape_text(shape_a), shape_text(shape_b)),
                );
            }
        }
        if let (Some(dtype_a), Some(dtype_b)) = (var_a.dtype, var_b.dtype) {
            if dtype_a != dtype_b {
                change.add(
                    "dtype",
                    format!("output {} -> {}", dtype_name(dtype_a), dtype_name(dtype_b)),
                );
            }
        }
    }
}

/// The constants two matched operators read in the same places.
fn compare_constants(sides: &[Side; 2], a: usize, b: usize, change: &mut Change, constants: &mut Constants) {
    let count = sides[0].operator(a).inputs.len().min(sides[1].operator(b).inputs.len());
    for index in 0..count {
        let (InputOrigin::Constant(x), InputOrigin::Constant(y)) =
            (sides[0].source(a, index), sides[1].source(b, index))
        else {
            continue;
        };
        let (Some(value_a), Some(value_b)) = (
            sides[0].operator(x).tensors.first(),
            sides[1].operator(y).tensors.first(),
        ) else {
            continue;
        };
        let names = (
            sides[0].var_name(sides[0].operator(a).inputs[index]),
            sides[1].var_name(sides[1].operator(b).inputs[index]),
        );
        let Some(detail) = tensor_difference(value_a, value_b, &names, constants) else {
            continue;
        };
        if !constants.seen.contains(&(x, y)) {
            constants.seen.push((x, y));
            constants.differing += 1;
        }
        change.add("weights", detail);
    }
}

/// How two constants differ, if they do; the largest element difference
/// among those of one shape is kept in `constants`.
fn tensor_difference(a: &Tensor, b: &Tensor, names: &(String, String), constants: &mut Constants) -> Option<String> {
    let name = match names.0 == names.1 {
        true => names.0.clone(),
        false => format!("{} / {}", names.0, names.1),
    };
    if a.shape != b.shape {
        return Some(format!("{name} {} -> {}", shape_text(&a.shape), shape_text(&b.shape)));
    }
    if a.dtype != b.dtype {
        let dtype = |tensor: &Tensor| dtype_name(tensor.dtype.unwrap_or(0));
        return Some(format!("{name} {} -> {}", dtype(a), dtype(b)));
    }
    if a.data == b.data {
        return None;
    }
    let Some(largest) = largest_difference(a, b) else {
        return Some(format!("{name}: other values"));
    };
    if constants
        .largest
        .as_ref()
        .is_none_or(|kept| largest > kept.max_abs_diff)
    {
        constants.largest = Some(WeightDifference {
            a_var: names.0.clone(),
            b_var: names.1.clone(),
            max_abs_diff: largest,
        });
    }
    Some(format!("{name}: largest difference {}", number(largest)))
}

/// The largest absolute difference of two constants' elements, for the
/// dtypes whose values read as numbers here.
fn largest_difference(a: &Tensor, b: &Tensor) -> Option<f64> {
    let dtype = a.dtype.unwrap_or(0);
    let width = (dtype_bits(dtype) / 8) as usize;
    let read: fn(&[u8]) -> f64 = match dtype {
        0 => |bytes| f64::from(f32::from_le_bytes(bytes.try_into().expect("4 bytes"))),
        1 | 11 => |bytes| f64::from(bytes[0]),
        2 | 13 => |bytes| f64::from(bytes[0] as i8),
        3 | 16 => |bytes| f64::from(i16::from_le_bytes(bytes.try_into().expect("2 bytes"))),
        4 | 12 => |bytes| f64::from(i32::from_le_bytes(bytes.try_into().expect("4 bytes"))),
        9 => |bytes| half::f16::from_le_bytes(bytes.try_into().expect("2 bytes")).to_f64(),
        _ => return None,
    };
    if a.data.len() != b.data.len() || !a.data.len().is_multiple_of(width) {
        return None;
    }
    Some(
        a.data
            .chunks_exact(width)
            .zip(b.data.chunks_exact(width))
            .map(|(x, y)| (read(x) - read(y)).abs())
            .fold(0.0, |largest, difference| match difference.is_nan() {
                true => f64::NAN,
                false => largest.max(difference),
            }),
    )
}

/// `(16,16,3,3)`.
fn shape_text(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    format!("({})", dims.join(","))
}

/// How two operators' parameters differ, a phrase per field.
fn param_changes(a: &[Param], b: &[Param]) -> Vec<String> {
    let mut changes = Vec::new();
    if a.len() != b.len() {
        changes.push(format!("{} parameters -> {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(b) {
        if x.tag != y.tag {
            changes.push(format!("parameter kind {} -> {}", x.tag, y.tag));
            continue;
        }
        let (fields_a, fields_b) = (param_fields(x), param_fields(y));
        let fields = fields_a.len().max(fields_b.len());
        for index in 0..fields {
            let (value_a, value_b) = (
                fields_a.get(index).cloned().flatten(),
                fields_b.get(index).cloned().flatten(),
            );
            if value_a != value_b {
                let show = |value: Option<u64>| value.map_or_else(|| "default".to_string(), |value| value.to_string());
                changes.push(format!(
                    "{} {} -> {}",
                    field_name(x.tag, index),
                    show(value_a),
                    show(value_b)
                ));
            }
        }
    }
    changes
}

/// A parameter's fields by index, each as a number, `None` where left at its
/// default. Fields that refer elsewhere (vectors) read as a hash of their bytes.
fn param_fields(param: &Param) -> Vec<Option<u64>> {
    let Ok(stored) = param.table.stored_fields() else {
        return Vec::new();
    };
    let mut fields = vec![None; stored.iter().map(|(index, _)| index + 1).max().unwrap_or(0)];
    for (index, bytes) in stored {
        let value = match (refers_elsewhere(param.tag), bytes.len()) {
            (true, _) => param.table.bytes(index).ok().flatten().map(|range| {
                let referred = &param.table.buffer()[range];
                referred.iter().fold(referred.len() as u64, |hash, &byte| {
                    hash.wrapping_mul(31).wrapping_add(u64::from(byte))
                })
            }),
            (false, 8..) => Some(u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))),
            (false, 4..) => Some(u64::from(u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")))),
            (false, 2..) => Some(u64::from(u16::from_le_bytes(bytes[..2].try_into().expect("2 bytes")))),
            (false, _) => bytes.first().map(|&byte| u64::from(byte)),
        };
        fields[index] = value;
    }
    fields
}

/// The `OperatorParam` members that hold vectors (`Dimshuffle`, `AxisAddRemove`,
/// `IndexDescMaskDump`, `DType`): their fields are offsets.
fn refers_elsewhere(tag: u8) -> bool {
    (64..=67).contains(&tag)
}

/// A parameter's field as `opr_param_defs.fbs` names it, for the kinds
/// that hold a kernel's geometry; else its index.
fn field_name(tag: u8, index: usize) -> String {
    const CONVOLUTION: [&str; 10] = [
        "mode",
        "pad_h",
        "pad_w",
        "stride_h",
        "stride_w",
        "dilate_h",
        "dilate_w",
        "sparse",
        "format",
        "compute_mode",
    ];
    const CONV_BIAS: [&str; 11] = [
        "nonlineMode",
        "mode",
        "sparse",
        "format",
        "pad_h",
        "pad_w",
        "stride_h",
        "stride_w",
        "dilate_h",
        "dilate_w",
        "compute_mode",
    ];
    let names: &[&str] = match tag {
        3 => &CONVOLUTION,
        6 => &CONV_BIAS,
        9 => &POOLING_FIELDS,
        _ => &[],
    };
    names
        .get(index)
        .map_or_else(|| format!("field {index}"), |name| name.to_string())
}

fn totals(costs: &[GraphCost; 2], total: fn(&GraphCost) -> u64) -> Totals {
    let counted = |cost: &GraphCost| (cost.uncounted == 0).then(|| total(cost));
    Totals {
        a: counted(&costs[0]),
        b: counted(&costs[1]),
    }
}

/// The types whose count or operations differ between the two costs.
fn type_diffs(costs: &[GraphCost; 2]) -> Vec<TypeDiff> {
    let mut names: Vec<&str> = costs
        .iter()
        .flat_map(|cost| cost.types.iter().map(|row| row.op_type.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let row = |cost: &GraphCost| {
                cost.types
                    .iter()
                    .find(|row| row.op_type == name)
                    .cloned()
                    .unwrap_or_default()
            };
            let (a, b) = (row(&costs[0]), row(&costs[1]));
            // Operations count where both sides know them (FBS v1 stores no shapes).
            let differ = |x: Option<u64>, y: Option<u64>| x.is_some() && y.is_some() && x != y;
            (a.count != b.count || differ(a.macs, b.macs) || differ(a.flops, b.flops)).then(|| TypeDiff {
                op_type: name.to_string(),
                count: Sides { a: a.count, b: b.count },
                macs: Sides { a: a.macs, b: b.macs },
                flops: Sides { a: a.flops, b: b.flops },
            })
        })
        .collect()
}

/// Inputs or outputs matched by name, the rest in order (renamed).
fn io_changes(a: &[IoVar], b: &[IoVar]) -> Vec<IoChange> {
    let mut changes = Vec::new();
    let named_alike = |x: &IoVar, y: &IoVar| x.name.is_some() && x.name == y.name;
    let unnamed = |mine: &[IoVar], theirs: &[IoVar]| -> Vec<IoVar> {
        mine.iter()
            .filter(|var| !theirs.iter().any(|other| named_alike(var, other)))
            .cloned()
            .collect()
    };
    for var in a {
        if let Some(other) = b.iter().find(|other| named_alike(var, other)) {
            changes.extend(io_change(var.clone(), other.clone()));
        }
    }
    let (rest_a, rest_b) = (unnamed(a, b), unnamed(b, a));
    for index in 0..rest_a.len().max(rest_b.len()) {
        let (var_a, var_b) = (rest_a.get(index).cloned(), rest_b.get(index).cloned());
        match (var_a, var_b) {
            (Some(x), Some(y)) => changes.extend(io_change(x, y)),
            (x, y) => changes.push(IoChange {
                changes: vec![if x.is_some() { "only_a" } else { "only_b" }],
                a: x,
                b: y,
            }),
        }
    }
    changes
}

fn io_change(a: IoVar, b: IoVar) -> Option<IoChange> {
    let mut changes = Vec::new();
    if a.name.is_some() && b.name.is_some() && a.name != b.name {
        changes.push("name");
    }
    if a.shape.is_some() && b.shape.is_some() && a.shape != b.shape {
        changes.push("shape");
    }
    if a.dtype.is_some() && b.dtype.is_some() && a.dtype != b.dtype {
        changes.push("dtype");
    }
    (!changes.is_empty()).then_some(IoChange {
        a: Some(a),
        b: Some(b),
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_engine_made_up_are_not_matched_by() {
        assert!(made_up("RELU[3]"));
        assert!(made_up("conv(data,conv1.weight)[8]"));
        assert!(!made_up("conv2.Convolution"));
        assert!(!made_up("prob"));
        assert!(!made_up("x[]"));
        assert!(!made_up("a[b]"));
    }
}
