//! The part of an FBS v2 graph that computes one of its vars, that var its
//! only output: `--reduce`'s smaller reproducer. The operators it depends on
//! are listed again, in the graph's order, under a new root written in front
//! of the graph (`builder`), their var ids renumbered as the loader counts
//! them; everything else (names, params, the weights' bytes) is the graph's
//! own, referred to where it lies.

use anyhow::{bail, Context, Result};

use super::builder::{Builder, Offset, Value};
use super::edit::Edit;
use super::flatbuffer::{Field, Table};
use super::graph::{model, operator, tensor};
use super::schema::OPERATOR_V2;
use super::structure::{Operator, Structure};
use super::GraphFormat;

/// A place the graph can be cut: an operator that reads a var (not an input
/// or a constant), and the first var it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutPoint {
    /// Its position among the graph's operators.
    pub operator: usize,
    pub var: u32,
}

/// A graph cut at a var: the graph, and what it holds, for the reproducer to say.
pub struct CutGraph {
    /// Size-prefixed, as a plain model file holds it.
    pub graph: Vec<u8>,
    /// The operators kept, of the graph's.
    pub operators: usize,
    pub of: usize,
    /// Of those, the ones that read a var (`CutPoint`s).
    pub computing: usize,
    /// The inputs the part reads, by the names the engine gives them.
    pub inputs: Vec<String>,
    /// The var cut at (the output), and the operator that writes it.
    pub var: String,
    pub operator: String,
    pub op_type: String,
    /// The shapes of the operator's inputs as the graph stores them (dump time).
    pub input_shapes: Vec<Option<Vec<usize>>>,
}

/// Where `--reduce` may cut `flatbuffer`'s graph, in the graph's order.
pub fn cut_points(flatbuffer: &[u8]) -> Result<Vec<CutPoint>> {
    let graph = Structure::read(GraphFormat::FbsV2, flatbuffer, &[])?;
    graph.next_var_id()?;
    Ok(graph
        .operators
        .iter()
        .enumerate()
        .filter(|(_, operator)| !operator.inputs.is_empty())
        .filter_map(|(at, operator)| {
            Some(CutPoint {
                operator: at,
                var: *operator.outputs.first()?,
            })
        })
        .collect())
}

/// The id of the var named `name`, if exactly one var has that name.
pub fn var_named(flatbuffer: &[u8], name: &str) -> Result<Option<u32>> {
    let graph = Structure::read(GraphFormat::FbsV2, flatbuffer, &[])?;
    let mut ids = (0..graph.vars.len() as u32).filter(|&id| graph.vars[id as usize].name == Some(name));
    Ok(match (ids.next(), ids.next()) {
        (Some(id), None) => Some(id),
        _ => None,
    })
}

/// The part of `flatbuffer`'s graph that computes var `var`, which becomes its only output.
pub fn cut_at(flatbuffer: &[u8], var: u32) -> Result<CutGraph> {
    let mut edit = Edit::new(flatbuffer)?;
    let graph = &edit.graph;
    let writer = writers(graph)?;
    let cut = *writer
        .get(var as usize)
        .with_context(|| format!("the graph has no var {var}"))?;
    let kept = ancestors(graph, &writer, cut);
    // The loader numbers vars as the operators write them, in order.
    let mut renumbered: Vec<Option<u32>> = vec![None; graph.vars.len()];
    let mut order = Vec::new();
    for operator in kept.iter().map(|&at| &graph.operators[at]) {
        for &id in &operator.outputs {
            renumbered[id as usize] = Some(order.len() as u32);
            order.push(id);
        }
    }
    let new_ids = |ids: &[u32]| {
        ids.iter()
            .map(|&id| renumbered[id as usize].context("an operator kept reads a var that none writes"))
            .collect::<Result<Vec<u32>>>()
    };
    let middle = graph.root.tables(model::MIDDLE_TENSORS)?;
    let vars = order
        .iter()
        .map(|&id| edit.builder.existing(middle[id as usize].position()))
        .collect();
    let mut operators = Vec::new();
    for operator in kept.iter().map(|&at| &graph.operators[at]) {
        let (inputs, outputs) = (new_ids(&operator.inputs)?, new_ids(&operator.outputs)?);
        operators.push(renumbered_operator(
            &mut edit.builder,
            operator.table,
            &inputs,
            &outputs,
        )?);
    }
    let described = describe(graph, &kept, cut, var)?;
    let output = new_ids(&[var])?[0];
    edit.operators = operators;
    edit.vars = vars;
    Ok(CutGraph {
        graph: edit.finish(&[(output, 0)], None)?,
        ..described
    })
}

/// What the cut at operator `cut`'s var `var` keeps (`kept`), its graph left to fill.
fn describe(graph: &Structure, kept: &[usize], cut: usize, var: u32) -> Result<CutGraph> {
    let cut_operator = &graph.operators[cut];
    let kept = || kept.iter().map(|&at| &graph.operators[at]);
    Ok(CutGraph {
        graph: Vec::new(),
        operators: kept().count(),
        of: graph.operators.len(),
        computing: kept().filter(|operator| !operator.inputs.is_empty()).count(),
        inputs: kept()
            .filter(|operator| operator.op_type == "Host2DeviceCopy")
            .map(|operator| input_name(graph, operator))
            .collect::<Result<_>>()?,
        var: graph.vars[var as usize].name.unwrap_or_default().to_string(),
        operator: cut_operator
            .table
            .string(operator::NAME)?
            .unwrap_or_default()
            .to_string(),
        op_type: cut_operator.op_type.to_string(),
        input_shapes: cut_operator
            .inputs
            .iter()
            .map(|&id| graph.shape(id).map(<[usize]>::to_vec))
            .collect(),
    })
}

/// The operator that writes each var, by var id.
fn writers(graph: &Structure) -> Result<Vec<usize>> {
    let mut writer = vec![usize::MAX; graph.vars.len()];
    for (at, operator) in graph.operators.iter().enumerate() {
        for &id in &operator.outputs {
            *writer
                .get_mut(id as usize)
                .with_context(|| format!("operator {at} writes var {id}, which the graph does not list"))? = at;
        }
    }
    Ok(writer)
}

/// Operator `cut` and those it depends on, in the graph's order.
fn ancestors(graph: &Structure, writer: &[usize], cut: usize) -> Vec<usize> {
    let mut kept = vec![false; graph.operators.len()];
    let mut pending = vec![cut];
    while let Some(at) = pending.pop() {
        if std::mem::replace(&mut kept[at], true) {
            continue;
        }
        let inputs = &graph.operators[at].inputs;
        pending.extend(inputs.iter().filter_map(|&id| writer.get(id as usize).copied()));
    }
    (0..kept.len()).filter(|&at| kept[at]).collect()
}

/// The name the engine gives the input a Host2DeviceCopy makes: its tensor's.
fn input_name(graph: &Structure, operator: &Operator) -> Result<String> {
    let tensors = operator.table.tables(operator::TENSORS)?;
    let named = match tensors.first() {
        Some(value) => value.string(tensor::NAME)?,
        None => None,
    };
    let var = operator
        .outputs
        .first()
        .and_then(|&id| graph.vars.get(id as usize)?.name);
    match named.or(var) {
        Some(name) => Ok(name.to_string()),
        None => bail!("an input of the graph has no name"),
    }
}

/// A copy of the operator `table`, reading `inputs` and writing `outputs`:
/// every other field as it is, its objects the graph's own.
fn renumbered_operator(builder: &mut Builder, table: Table, inputs: &[u32], outputs: &[u32]) -> Result<Offset> {
    let mut fields = Vec::new();
    for (index, field) in OPERATOR_V2.fields.iter().enumerate() {
        let value = match (index, field) {
            (operator::INPUTS, _) if !inputs.is_empty() => Value::Offset(builder.u32s(inputs)),
            (operator::OUTPUTS, _) => Value::Offset(builder.u32s(outputs)),
            (operator::INPUTS, _) => continue,
            (_, Field::Inline(size)) => match inline(table, index, *size)? {
                Some(value) => value,
                None => continue,
            },
            _ => match table.target(index)? {
                Some(target) => Value::Offset(builder.existing(target)),
                None => continue,
            },
        };
        fields.push((index, value));
    }
    Ok(builder.table(&fields))
}

/// Inline field `index` of `size` bytes, where it is not the default.
fn inline(table: Table, index: usize, size: usize) -> Result<Option<Value>> {
    Ok(match size {
        1 => table.u8(index)?.map(Value::U8),
        4 => table.u32(index)?.map(Value::U32),
        8 => table.u64(index)?.map(Value::U64),
        _ => bail!("an operator field of {size} bytes, which no operator of MegEngine 1.13 has"),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::ModelFile;

    fn model(name: &str) -> ModelFile {
        ModelFile::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name), None).unwrap()
    }

    /// `nonfinite.mge` computes logged = log(x + 1) * 2 and shifted = (x + 1) * 3,
    /// each constant an ImmutableTensor (`make_nonfinite_fixtures.py`); MegEngine
    /// dumped its log(x + 1) as LOG1P(x), whose var is named LOG.
    #[test]
    fn a_cut_keeps_what_its_var_depends_on_in_order() {
        let model = model("nonfinite.mge");
        let var = model.var_named("LOG").unwrap().unwrap();
        let cut = model.cut_at(var).unwrap();
        assert_eq!((cut.var.as_str(), cut.op_type.as_str()), ("LOG", "Elemwise"));
        assert_eq!(cut.inputs, ["x"]);
        assert_eq!((cut.operators, cut.of, cut.computing), (2, 8, 1), "x, LOG1P(x)");
        assert_eq!(cut.input_shapes, [Some(vec![1, 4])]);
        let flatbuffer = &cut.graph[4..];
        let graph = Structure::read(GraphFormat::FbsV2, flatbuffer, &[]).unwrap();
        let types: Vec<&str> = graph
            .operators
            .iter()
            .map(|operator| operator.op_type.as_str())
            .collect();
        assert_eq!(types, ["Host2DeviceCopy", "Elemwise"]);
        // Ids count up as the loader assigns them; the output is the last.
        let ids: Vec<Vec<u32>> = graph
            .operators
            .iter()
            .map(|operator| operator.outputs.clone())
            .collect();
        assert_eq!(ids, [vec![0], vec![1]]);
        assert_eq!(graph.operators[1].inputs, [0]);
        assert_eq!(graph.vars.len(), 2);
        let outputs = graph.root.tables(model::OUTPUT_VARS).unwrap();
        assert_eq!(outputs.len(), 1);
        assert_eq!(
            graph.vars[outputs[0].u32(0).unwrap().unwrap_or(0) as usize].name,
            Some("LOG")
        );
        let places = cut_points(model_flatbuffer(&model)).unwrap();
        assert_eq!(
            places.len(),
            4,
            "x + 1, its log and the two multiplications: {places:?}"
        );
    }

    fn model_flatbuffer(model: &ModelFile) -> &[u8] {
        &model.graph()[4..]
    }
}
