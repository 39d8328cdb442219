//! The part of an FBS v2 graph that computes one of its vars, that var its
//! only output: `--reduce`'s smaller reproducer. A graph of its own: the
//! operators the var depends on, in the graph's order, their var ids
//! renumbered as the loader counts them, with the vars they write, the
//! tensors they hold (weights included) and the graph's version and
//! metadata, each copied as it was (`copy`); nothing else of the graph.

use anyhow::{bail, Context, Result};

use super::builder::{Builder, Offset};
use super::copy::Copier;
use super::edit::output_var;
use super::graph::{model, operator, tensor};
use super::schema::{MIDDLE_TENSOR_V2, MODEL_V2, OPERATOR_V2};
use super::structure::{Operator, Structure};
use super::{GraphFormat, FBS_V2_IDENTIFIER};

/// An FBS v2 graph is size-prefixed: its alignment counts from before the prefix.
const SIZE_PREFIX: usize = 4;

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
    writers(&graph)?;
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
    let mut ids = (0u32..)
        .zip(&graph.vars)
        .filter(|(_, var)| var.name == Some(name))
        .map(|(id, _)| id);
    Ok(match (ids.next(), ids.next()) {
        (Some(id), None) => Some(id),
        _ => None,
    })
}

/// The part of `flatbuffer`'s graph that computes var `var`, which becomes its only output.
pub fn cut_at(flatbuffer: &[u8], var: u32) -> Result<CutGraph> {
    let graph = Structure::read(GraphFormat::FbsV2, flatbuffer, &[])?;
    graph.next_var_id()?;
    let writer = writers(&graph)?;
    let cut = writer
        .get(var as usize)
        .copied()
        .flatten()
        .with_context(|| format!("the graph has no var {var}"))?;
    let kept: Vec<&Operator> = ancestors(&graph, &writer, cut)
        .into_iter()
        .filter_map(|at| graph.operators.get(at))
        .collect();
    // The loader numbers vars as the operators write them, in order.
    let mut renumbered: Vec<Option<u32>> = vec![None; graph.vars.len()];
    let mut order = Vec::new();
    for &id in kept.iter().flat_map(|operator| &operator.outputs) {
        let slot = renumbered
            .get_mut(id as usize)
            .context("a var the graph does not list")?;
        *slot = Some(order.len() as u32);
        order.push(id);
    }
    let new_ids = |ids: &[u32]| {
        ids.iter()
            .map(|&id| {
                renumbered
                    .get(id as usize)
                    .copied()
                    .flatten()
                    .with_context(|| format!("an operator kept reads var {id}, which none kept writes"))
            })
            .collect::<Result<Vec<u32>>>()
    };
    let output = new_ids(&[var])?;
    let mut part = Part {
        builder: Builder::new(),
        copier: Copier::new(flatbuffer, SIZE_PREFIX),
    };
    let middle = graph.root.tables(model::MIDDLE_TENSORS)?;
    let vars = order
        .iter()
        .map(|&id| {
            let var = middle.get(id as usize).context("a var the graph does not list")?;
            part.copier
                .table(&mut part.builder, var.position(), &MIDDLE_TENSOR_V2, &[])
        })
        .collect::<Result<Vec<Offset>>>()?;
    let operators = kept
        .iter()
        .map(|operator| part.operator(operator, &new_ids(&operator.inputs)?, &new_ids(&operator.outputs)?))
        .collect::<Result<Vec<Offset>>>()?;
    let cut_operator = graph.operators.get(cut).context("no operator writes the var")?;
    Ok(CutGraph {
        graph: part.finish(&graph, &operators, &vars, &output)?,
        ..describe(&graph, &kept, cut_operator, var)?
    })
}

/// The part of a graph being written: a new buffer, and the graph's objects copied into it.
struct Part<'a> {
    builder: Builder,
    copier: Copier<'a>,
}

impl Part<'_> {
    /// A copy of `operator`, reading `inputs` and writing `outputs`: every
    /// other field as it is, its objects copied.
    fn operator(&mut self, operator: &Operator, inputs: &[u32], outputs: &[u32]) -> Result<Offset> {
        let mut replaced = Vec::new();
        for (field, ids) in [(operator::INPUTS, inputs), (operator::OUTPUTS, outputs)] {
            // An operator of none holds the field empty or not at all: either stays.
            if !ids.is_empty() {
                replaced.push((field, Some(self.builder.u32s(ids))));
            }
        }
        let at = operator.table.position();
        self.copier.table(&mut self.builder, at, &OPERATOR_V2, &replaced)
    }

    /// The finished graph, size-prefixed: `graph`'s root listing `operators`
    /// and `vars`, `outputs` its outputs, no aliases; its other fields (the
    /// versions, the shared tensors' count, the metadata) as they were.
    fn finish(mut self, graph: &Structure, operators: &[Offset], vars: &[Offset], outputs: &[u32]) -> Result<Vec<u8>> {
        let builder = &mut self.builder;
        let outputs: Vec<Offset> = outputs.iter().map(|&id| output_var(builder, id, 0)).collect();
        let replaced = [
            (model::OPRS, Some(builder.offsets(operators))),
            (model::MIDDLE_TENSORS, Some(builder.offsets(vars))),
            (model::OUTPUT_VARS, Some(builder.offsets(&outputs))),
            (model::OUTPUT_ALIAS, None),
        ];
        let root = self
            .copier
            .table(builder, graph.root.position(), &MODEL_V2, &replaced)?;
        Ok(self.builder.finish(root, FBS_V2_IDENTIFIER, true))
    }
}

/// What the cut at `cut_operator`'s var `var` keeps (`kept`), its graph left to fill.
fn describe(graph: &Structure, kept: &[&Operator], cut_operator: &Operator, var: u32) -> Result<CutGraph> {
    Ok(CutGraph {
        graph: Vec::new(),
        operators: kept.len(),
        of: graph.operators.len(),
        computing: kept.iter().filter(|operator| !operator.inputs.is_empty()).count(),
        inputs: kept
            .iter()
            .filter(|operator| operator.op_type == "Host2DeviceCopy")
            .map(|operator| input_name(graph, operator))
            .collect::<Result<_>>()?,
        var: graph
            .vars
            .get(var as usize)
            .and_then(|var| var.name)
            .unwrap_or_default()
            .to_string(),
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

/// The operator that writes each var, by var id, of a graph the loader can
/// read in order: refused where an operator reads a var that no operator
/// before it writes, writes a var the graph does not list, or one written
/// already (MegEngine 1.13 refuses such a graph as it loads; another engine
/// build may run it, and fail, and the cut must not trust it).
fn writers(graph: &Structure) -> Result<Vec<Option<usize>>> {
    let mut writer = vec![None; graph.vars.len()];
    for (at, operator) in graph.operators.iter().enumerate() {
        let what = || format!("operator {at} ({})", operator.op_type);
        if let Some(id) = operator
            .inputs
            .iter()
            .find(|&&id| writer.get(id as usize).copied().flatten().is_none())
        {
            bail!("{} reads var {id}, which no operator before it writes", what());
        }
        for &id in &operator.outputs {
            let slot = writer
                .get_mut(id as usize)
                .with_context(|| format!("{} writes var {id}, which the graph does not list", what()))?;
            if slot.replace(at).is_some() {
                bail!("{} writes var {id}, which an operator before it wrote", what());
            }
        }
    }
    Ok(writer)
}

/// Operator `cut` and those it depends on, by position, in the graph's order.
fn ancestors(graph: &Structure, writer: &[Option<usize>], cut: usize) -> Vec<usize> {
    let mut kept = vec![false; graph.operators.len()];
    let mut pending = vec![cut];
    while let Some(at) = pending.pop() {
        let Some(seen) = kept.get_mut(at) else {
            continue;
        };
        if std::mem::replace(seen, true) {
            continue;
        }
        let inputs = graph.operators.get(at).map_or(&[][..], |operator| &operator.inputs);
        pending.extend(
            inputs
                .iter()
                .filter_map(|&id| writer.get(id as usize).copied().flatten()),
        );
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::builder::Value;
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

    /// The cut is a graph of its own: none of the graph's other operators,
    /// vars or constants, and not the graph's bytes under a new root.
    #[test]
    fn a_cut_holds_its_part_alone() {
        let model = model("nonfinite.mge");
        let whole = model_flatbuffer(&model);
        let cut = model.cut_at(model.var_named("LOG").unwrap().unwrap()).unwrap();
        assert!(!cut.graph.ends_with(whole), "the graph under a new root");
        assert!(
            cut.graph.len() < whole.len(),
            "{} of {} bytes",
            cut.graph.len(),
            whole.len()
        );
        let graph = Structure::read(GraphFormat::FbsV2, &cut.graph[4..], &[]).unwrap();
        let names: Vec<&str> = graph.vars.iter().filter_map(|var| var.name).collect();
        assert_eq!(names, ["x", "LOG"]);
        // Nothing of the other vars is there, not even their names.
        let original = Structure::read(GraphFormat::FbsV2, whole, &[]).unwrap();
        for name in original
            .vars
            .iter()
            .filter_map(|var| var.name)
            .filter(|name| !names.contains(name))
        {
            assert!(
                !cut.graph.windows(name.len()).any(|bytes| bytes == name.as_bytes()),
                "{name}"
            );
        }
        assert_eq!(graph.dumped, original.dumped, "the versions and metadata kept");
    }

    /// A graph of operators `(type, inputs, outputs)` over `vars` vars (v0,
    /// v1, ...), the last its output: ids as a crafted file may hold them.
    fn crafted(operators: &[(&str, &[u32], &[u32])], vars: u32) -> Vec<u8> {
        let mut builder = Builder::new();
        let mut tables = Vec::new();
        for (kind, inputs, outputs) in operators {
            let kind = builder.string(kind);
            let outputs = builder.u32s(outputs);
            let inputs = builder.u32s(inputs);
            tables.push(builder.table(&[
                (operator::TYPE, Value::Offset(kind)),
                (operator::INPUTS, Value::Offset(inputs)),
                (operator::OUTPUTS, Value::Offset(outputs)),
            ]));
        }
        let names: Vec<Offset> = (0..vars)
            .map(|id| {
                let name = builder.string(&format!("v{id}"));
                builder.table(&[(tensor::NAME, Value::Offset(name))])
            })
            .collect();
        let output = output_var(&mut builder, vars.saturating_sub(1), 0);
        let fields = [
            (model::OPRS, Value::Offset(builder.offsets(&tables))),
            (model::MIDDLE_TENSORS, Value::Offset(builder.offsets(&names))),
            (model::OUTPUT_VARS, Value::Offset(builder.offsets(&[output]))),
        ];
        let root = builder.table(&fields);
        builder.finish(root, FBS_V2_IDENTIFIER, false)
    }

    /// Var ids no loader could follow (MegEngine 1.13 refuses them as it
    /// loads; another engine build may run the graph and fail): the graph is
    /// refused in a line, never cut and never a panic, at any var.
    #[test]
    fn a_graph_whose_var_ids_do_not_hold_is_refused() {
        const H2D: &str = "Host2DeviceCopy";
        type Operators<'a> = &'a [(&'a str, &'a [u32], &'a [u32])];
        let cases: [(Operators, u32, &str); 5] = [
            (
                &[(H2D, &[], &[0]), ("Elemwise", &[0], &[1]), ("Elemwise", &[7], &[2])],
                3,
                "operator 2 (Elemwise) reads var 7, which no operator before it writes",
            ),
            (
                &[(H2D, &[], &[0]), ("Elemwise", &[u32::MAX], &[1])],
                2,
                "operator 1 (Elemwise) reads var 4294967295, which no operator before it writes",
            ),
            (
                &[(H2D, &[], &[0]), ("Elemwise", &[2], &[1]), ("Elemwise", &[0], &[2])],
                3,
                "operator 1 (Elemwise) reads var 2, which no operator before it writes",
            ),
            (
                &[(H2D, &[], &[0]), ("Elemwise", &[0], &[0]), ("Elemwise", &[1], &[2])],
                3,
                "operator 1 (Elemwise) writes var 0, which an operator before it wrote",
            ),
            (
                &[(H2D, &[], &[0]), ("Elemwise", &[0], &[5])],
                2,
                "operator 1 (Elemwise) writes var 5, which the graph does not list",
            ),
        ];
        for (operators, vars, said) in cases {
            let graph = crafted(operators, vars);
            let err = format!("{:#}", cut_points(&graph).expect_err(said));
            assert!(err.contains(said), "{said}: {err}");
            for var in (0..=vars).chain([u32::MAX]) {
                assert!(cut_at(&graph, var).is_err(), "{said}: a cut at var {var}");
            }
        }
        // The same graph, its ids sound, is cut.
        let sound = crafted(
            &[(H2D, &[], &[0]), ("Elemwise", &[0], &[1]), ("Elemwise", &[1], &[2])],
            3,
        );
        assert_eq!(cut_points(&sound).unwrap().len(), 2);
        assert_eq!(cut_at(&sound, 1).unwrap().operators, 2);
        assert!(cut_at(&sound, 3).is_err());
    }
}
