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

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};

use serde::Serialize;

use anyhow::Result;

use super::cost::{dtype_bits, graph_cost, GraphCost, Parameters, TypeCost, POOLING_FIELDS};
use super::dtypes::dtype_name;
use super::structure::{type_name, Dumped, Operator, Param, Structure, Tensor};
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
    /// Why a side's totals are unknown: the operators its counts leave out.
    pub uncounted: Sides<Option<String>>,
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
        uncounted: Sides {
            a: costs[0].uncounted_reason(),
            b: costs[1].uncounted_reason(),
        },
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

    /// Where operator `at` sits, the writers of its inputs as `partner` names
    /// them (A's operator); `None` where an input comes from nowhere, or from
    /// a writer `partner` does not name.
    fn place(&self, at: usize, partner: impl Fn(usize) -> Option<usize>) -> Option<Place<'s>> {
        let graph: &'s Structure<'a> = self.graph;
        let operator = &graph.operators[at];
        let inputs = (0..operator.inputs.len())
            .map(|index| match self.source(at, index) {
                InputOrigin::Input(name) => Some(Origin::Input(name)),
                InputOrigin::Constant(_) => Some(Origin::Constant),
                InputOrigin::Computed(writer) => partner(writer).map(Origin::Computed),
                InputOrigin::Missing => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Place {
            op_type: type_name(&operator.op_type),
            inputs,
        })
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
    let mut partners = Partners {
        of_a: vec![None; sides[0].graph.operators.len()],
        of_b: vec![None; sides[1].graph.operators.len()],
    };
    for (a, b) in by_name(sides) {
        partners.pair(a, b);
    }
    by_topology(sides, &mut partners);
    partners
        .of_b
        .iter()
        .enumerate()
        .filter_map(|(b, a)| a.map(|a| (a, b)))
        .collect()
}

/// Each operator's partner on the other side, by index.
struct Partners {
    of_a: Vec<Option<usize>>,
    of_b: Vec<Option<usize>>,
}

impl Partners {
    fn pair(&mut self, a: usize, b: usize) {
        self.of_a[a] = Some(b);
        self.of_b[b] = Some(a);
    }
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
    let mut pairings: [HashMap<usize, usize>; 2] = Default::default();
    for &(a, b) in &pairs {
        *pairings[0].entry(a).or_default() += 1;
        *pairings[1].entry(b).or_default() += 1;
    }
    pairs.retain(|(a, b)| pairings[0][a] == 1 && pairings[1][b] == 1);
    pairs
}

/// Where an operator sits, as topology matching compares two: its type, and
/// where each of its inputs comes from.
#[derive(PartialEq, Eq, Hash)]
struct Place<'s> {
    op_type: &'s str,
    inputs: Vec<Origin>,
}

/// Where an input comes from: a graph input by name, a constant (any), or
/// an operator of A's (on B's side, the partner of the one that writes it).
#[derive(PartialEq, Eq, Hash)]
enum Origin {
    Input(String),
    Constant,
    Computed(usize),
}

/// Pairs the operators left by topology: as visiting B's unpaired operators
/// in execution order, pairing each with A's first unpaired operator in the
/// same place, and visiting again while a pass pairs any, would. But each of
/// B's is visited once, when the writers of its inputs are all paired, in
/// the pass that would first find them so, and A's are kept by place: n log n
/// where the passes compared every operator with every other.
fn by_topology(sides: &[Side; 2], partners: &mut Partners) {
    let mut candidates: HashMap<Place, VecDeque<usize>> = HashMap::new();
    for a in sides[0].computed().filter(|&a| partners.of_a[a].is_none()) {
        if let Some(place) = sides[0].place(a, Some) {
            candidates.entry(place).or_default().push_back(a);
        }
    }
    let mut waiting = Waiting::of(&sides[1], &partners.of_b);
    // (pass, B's operator), the soonest first: the order of the visits.
    let mut visits: BinaryHeap<Reverse<(usize, usize)>> = waiting.ready.iter().map(|&b| Reverse((0, b))).collect();
    while let Some(Reverse((pass, b))) = visits.pop() {
        let Some(place) = sides[1].place(b, |writer| partners.of_b[writer]) else {
            continue;
        };
        let Some(a) = candidates.get_mut(&place).and_then(VecDeque::pop_front) else {
            continue;
        };
        partners.pair(a, b);
        for reader in waiting.paired(b) {
            // A reader before `b` is visited again in the next pass, one after it in this one.
            visits.push(Reverse((if reader > b { pass } else { pass + 1 }, reader)));
        }
    }
}

/// B's unpaired operators, each with how many of the operators that write its
/// inputs are unpaired yet.
struct Waiting {
    /// Those none of whose writers is unpaired.
    ready: Vec<usize>,
    unpaired: Vec<usize>,
    /// By operator: the operators that read what it writes and wait for it.
    readers: Vec<Vec<usize>>,
}

impl Waiting {
    fn of(side: &Side, partner: &[Option<usize>]) -> Waiting {
        let count = side.graph.operators.len();
        let mut waiting = Waiting {
            ready: Vec::new(),
            unpaired: vec![0; count],
            readers: vec![Vec::new(); count],
        };
        for b in side.computed().filter(|&b| partner[b].is_none()) {
            let mut writers: Vec<usize> = (0..side.operator(b).inputs.len())
                .filter_map(|index| match side.source(b, index) {
                    InputOrigin::Computed(writer) if partner[writer].is_none() => Some(writer),
                    _ => None,
                })
                .collect();
            writers.sort_unstable();
            writers.dedup();
            waiting.unpaired[b] = writers.len();
            writers.into_iter().for_each(|writer| waiting.readers[writer].push(b));
            if waiting.unpaired[b] == 0 {
                waiting.ready.push(b);
            }
        }
        waiting
    }

    /// `b` is paired: the readers that now wait for none.
    fn paired(&mut self, b: usize) -> Vec<usize> {
        let readers = std::mem::take(&mut self.readers[b]);
        readers
            .into_iter()
            .filter(|&reader| {
                self.unpaired[reader] -= 1;
                self.unpaired[reader] == 0
            })
            .collect()
    }
}

/// The constants matched operators read, compared.
#[derive(Default)]
struct Constants {
    differing: usize,
    largest: Option<WeightDifference>,
    seen: HashSet<(usize, usize)>,
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
    let names_b: HashSet<&str> = name_b.iter().copied().collect();
    if !name_a.is_empty() && !name_b.is_empty() && !name_a.iter().any(|name| names_b.contains(name)) {
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
        if constants.seen.insert((x, y)) {
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
    // A cost has a row per type.
    let rows: [HashMap<&str, &TypeCost>; 2] = costs
        .each_ref()
        .map(|cost| cost.types.iter().map(|row| (row.op_type.as_str(), row)).collect());
    let mut names: Vec<&str> = rows.iter().flat_map(|rows| rows.keys().copied()).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let row =
                |rows: &HashMap<&str, &TypeCost>| rows.get(name).map_or_else(TypeCost::default, |&row| row.clone());
            let (a, b) = (row(&rows[0]), row(&rows[1]));
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
    // Each name's first var.
    fn by_name(vars: &[IoVar]) -> HashMap<&str, &IoVar> {
        let mut first = HashMap::new();
        for var in vars {
            if let Some(name) = &var.name {
                first.entry(name.as_str()).or_insert(var);
            }
        }
        first
    }
    let (named_a, named_b) = (by_name(a), by_name(b));
    let mut changes: Vec<IoChange> = a
        .iter()
        .filter_map(|var| {
            let other = named_b.get(var.name.as_deref()?)?;
            io_change(var.clone(), (*other).clone())
        })
        .collect();
    let unnamed = |mine: &[IoVar], theirs: &HashMap<&str, &IoVar>| -> Vec<IoVar> {
        mine.iter()
            .filter(|var| var.name.as_deref().is_none_or(|name| !theirs.contains_key(name)))
            .cloned()
            .collect()
    };
    let (rest_a, rest_b) = (unnamed(a, &named_b), unnamed(b, &named_a));
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
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::model::builder::Builder;
    use crate::model::flatbuffer::Table;
    use crate::model::structure::Var;
    use crate::model::GraphFormat;

    /// The links of the chains compared: at this length, comparing every
    /// operator with every other took a minute, minutes with one inserted.
    const CHAIN: usize = 50_000;
    const TWO: [u8; 4] = 2.0f32.to_le_bytes();
    const THREE: [u8; 4] = 3.0f32.to_le_bytes();

    /// A link of a chain: `x * 2` (or `x * 3`), or `relu(x)`.
    #[derive(Clone, Copy, PartialEq)]
    enum Link {
        Times(u8),
        Relu,
    }

    /// The links `bench/chain.py` traces: `x * 2` at even places, `relu(x)` at odd ones.
    fn links() -> Vec<Link> {
        (0..CHAIN)
            .map(|at| match at % 2 {
                0 => Link::Times(2),
                _ => Link::Relu,
            })
            .collect()
    }

    /// The names MegEngine's dump gives the links' operators and vars: a
    /// counter per kind it makes up (`MUL[3]`, `RELU[2]`).
    fn link_names(links: &[Link]) -> Vec<String> {
        let mut counters = [0, 0];
        links
            .iter()
            .map(|link| {
                let (kind, counter) = match link {
                    Link::Times(_) => ("MUL", &mut counters[0]),
                    Link::Relu => ("RELU", &mut counters[1]),
                };
                *counter += 1;
                format!("{kind}[{}]", *counter - 1)
            })
            .collect()
    }

    /// The chain as MegEngine dumps it (`bench/chain.py`): the input `data`,
    /// the constants 2 and 3, and an `Elemwise` operator per link reading the
    /// one before it (and its factor), named `names`; the last one's var is the output `out`.
    fn chain<'a>(root: Table<'a>, links: &[Link], names: &'a [String]) -> Structure<'a> {
        let tensor = |data: &'a [u8]| Tensor {
            name: None,
            shape: vec![1, 8],
            dtype: Some(0),
            quantization: None,
            data,
        };
        let operator = |op_type: &str, name: &'a str, inputs: Vec<u32>, output: u32, tensors| Operator {
            table: root,
            name: Some(name),
            op_type: op_type.to_string(),
            inputs,
            outputs: vec![output],
            params: Vec::new(),
            tensors,
        };
        let mut operators = vec![
            operator("Host2DeviceCopy", "data", vec![], 0, vec![tensor(&[])]),
            operator("ImmutableTensor", "const<2>", vec![], 1, vec![tensor(&TWO)]),
            operator("ImmutableTensor", "const<3>", vec![], 2, vec![tensor(&THREE)]),
        ];
        for (at, (link, name)) in links.iter().zip(names).enumerate() {
            let (id, before) = (3 + at as u32, if at == 0 { 0 } else { 2 + at as u32 });
            let inputs = match link {
                Link::Times(factor) => vec![before, u32::from(*factor) - 1],
                Link::Relu => vec![before],
            };
            operators.push(operator("Elemwise", name, inputs, id, Vec::new()));
        }
        let last = operators.len() - 1;
        let vars = operators
            .iter()
            .enumerate()
            .map(|(at, operator)| Var {
                name: if at == last { Some("out") } else { operator.name },
                shape: Some(vec![1, 8]),
                dtype: Some(0),
                quantization: None,
            })
            .collect();
        Structure {
            format: GraphFormat::FbsV2,
            root,
            operators,
            vars,
            outputs: vec![2 + links.len() as u32],
            dumped: Dumped::default(),
        }
    }

    /// The diff of the chain of `links()` with the one of `links_b`, which
    /// must take well under a minute: matching every operator against every
    /// other took minutes on chains this long.
    fn chain_diff(links_b: Vec<Link>) -> StructureDiff {
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut builder = Builder::new();
            // The diff reads no root: an empty table stands for it.
            let empty = builder.table(&[]);
            let buffer = builder.finish(empty, b"mgv2", false);
            let root = Table::root(&buffer).expect("a table");
            let links_a = links();
            let (names_a, names_b) = (link_names(&links_a), link_names(&links_b));
            let (a, b) = (chain(root, &links_a, &names_a), chain(root, &links_b, &names_b));
            let dumped = || DumpedAs {
                format: "fbs-v2".to_string(),
                container: false,
                graph: Dumped::default(),
            };
            let _ = sender.send(diff(
                &a,
                &b,
                Sides {
                    a: dumped(),
                    b: dumped(),
                },
            ));
        });
        receiver
            .recv_timeout(Duration::from_secs(60))
            .expect("the diff of two chains of 50,000 operators within a minute")
    }

    #[test]
    fn a_long_chain_against_itself_is_the_same_graph() {
        let diff = chain_diff(links());
        assert!(diff.same(), "{diff:?}");
        assert_eq!(diff.ops_matched, CHAIN);
    }

    #[test]
    fn a_weight_changed_in_a_long_chain_is_one_operator_changed() {
        let mut changed = links();
        changed[CHAIN / 2] = Link::Times(3);
        let diff = chain_diff(changed);
        assert_eq!(diff.ops_matched, CHAIN);
        assert!(diff.ops_only_a.is_empty() && diff.ops_only_b.is_empty(), "{diff:?}");
        assert_eq!(diff.ops_changed.len(), 1, "{:?}", diff.ops_changed);
        let change = &diff.ops_changed[0];
        assert_eq!(
            (change.a_name.as_str(), change.b_name.as_str()),
            ("MUL[12500]", "MUL[12500]")
        );
        assert_eq!(change.changes, ["weights"]);
        assert_eq!(diff.params.differing_tensors, 1);
    }

    /// A relu inserted after a multiplication pairs with the relu that
    /// followed it there (the same type, reading the same operator); the
    /// links after it read an operator of another kind, and stay apart, but
    /// the last, whose var `out` names it on both sides. So MegEngine's own
    /// dumps of `bench/chain.py` compare (10,000 links, one inserted after
    /// the 5,000th: 5,003 matched, 4,997 only in A and 4,998 only in B).
    #[test]
    fn an_operator_inserted_in_a_long_chain_parts_it_after_the_insertion() {
        let mut inserted = links();
        inserted.insert(CHAIN / 2 + 1, Link::Relu);
        let diff = chain_diff(inserted);
        let after = CHAIN / 2;
        assert_eq!(diff.ops_matched, after + 3);
        assert_eq!(diff.ops_only_a.len(), CHAIN - after - 3);
        assert_eq!(diff.ops_only_b.len(), CHAIN - after - 2);
        assert!(diff.ops_changed.is_empty(), "{:?}", diff.ops_changed);
        assert_eq!(diff.ops_only_a[0].name, format!("MUL[{}]", after / 2 + 1));
        assert_eq!(diff.ops_only_b[0].name, format!("RELU[{}]", after / 2 + 1));
    }

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
