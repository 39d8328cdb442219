//! Edits of an FBS v2 graph: a new root written in front of the graph
//! (`builder`), listing the graph's operators and vars with new ones, and new
//! outputs. Nothing of the graph itself moves or changes. Also graphs made
//! from scratch: a testcase's constants (`constants_graph`).

use anyhow::{bail, Context, Result};

use super::builder::{Builder, Offset, Value};
use super::graph::{model, operator, output, tensor};
use super::structure::Structure;
use super::GraphFormat;
use super::FBS_V2_IDENTIFIER;

/// Type ids and operator versions of the operators an edit adds, as
/// MegEngine 1.13 dumps them (`OprRegistryV2`; `trace.dump` writes these
/// into every testcase container, e.g. `fixtures/conv_float_tc1.mge`).
const HOST_TO_DEVICE: (&str, u64, u32) = ("Host2DeviceCopy", 2_436_615_116_837_392_937, 2);
const ASSERT_EQUAL: (&str, u64, u32) = ("AssertEqual", 7_135_914_203_479_735_452, 1);
const SHARED_DEVICE_TENSOR: (&str, u64, u32) = ("SharedDeviceTensor", 6_084_106_446_169_059_487, 1);

/// `OperatorParam` members: `param.AssertEqual` (maxerr, verbose) and `param.Host2DeviceCopy`.
const ASSERT_EQUAL_PARAM: u8 = 56;
const HOST_TO_DEVICE_PARAM: u8 = 63;
/// `TensorFormat.DefaultTensorFormat`.
const DEFAULT_TENSOR_FORMAT: u8 = 1;
/// The FBS model version MegEngine 1.13 writes.
const MODEL_VERSION: u32 = 2;

/// A tensor an edit describes: its name, shape and megdnn dtype (`DTypeEnum`).
#[derive(Clone, Copy)]
pub struct TensorSpec<'a> {
    pub name: &'a str,
    pub shape: &'a [usize],
    pub dtype: u8,
}

/// The graph's outputs and what new ones add: the root fields an edit rewrites.
pub(super) struct Edit<'a> {
    pub(super) graph: Structure<'a>,
    pub(super) builder: Builder,
    /// The graph's own operators and middle tensors, then new ones.
    pub(super) operators: Vec<Offset>,
    pub(super) vars: Vec<Offset>,
    next_id: u32,
}

impl<'a> Edit<'a> {
    pub(super) fn new(flatbuffer: &'a [u8]) -> Result<Edit<'a>> {
        let graph = Structure::read(GraphFormat::FbsV2, flatbuffer, &[])?;
        let next_id = graph.next_var_id()?;
        let builder = Builder::before(flatbuffer, 4);
        // The tables of one of the root's vectors, as objects the new root lists.
        let listed = |field: usize| -> Result<Vec<Offset>> {
            Ok(graph
                .root
                .tables(field)?
                .iter()
                .map(|table| builder.existing(table.position()))
                .collect())
        };
        let (operators, vars) = (listed(model::OPRS)?, listed(model::MIDDLE_TENSORS)?);
        Ok(Edit {
            graph,
            builder,
            operators,
            vars,
            next_id,
        })
    }

    /// The id of the var named `name`, which must be unique.
    fn var_id(&self, name: &str) -> Result<u32> {
        let ids: Vec<u32> = (0..self.graph.vars.len() as u32)
            .filter(|&id| self.graph.vars[id as usize].name == Some(name))
            .collect();
        match ids.as_slice() {
            [id] => Ok(*id),
            [] => bail!("the model has no var named '{name}' (the var names of `mge dump --io`'s index.json)"),
            _ => bail!("the model has {} vars named '{name}': it cannot tell which", ids.len()),
        }
    }

    /// A new middle tensor, the var an operator outputs; returns its id.
    fn var(&mut self, spec: &TensorSpec) -> u32 {
        let var = middle_tensor(&mut self.builder, spec.name, spec.shape);
        self.vars.push(var);
        self.next_id += 1;
        self.next_id - 1
    }

    fn operator(&mut self, operator: NewOperator) {
        let table = operator_table(&mut self.builder, operator);
        self.operators.push(table);
    }

    /// The root with the operators and vars listed, `outputs` as the graph's
    /// outputs and `aliases` as their names (none: the vars' own names).
    pub(super) fn finish(mut self, outputs: &[(u32, u32)], aliases: Option<Vec<Offset>>) -> Result<Vec<u8>> {
        let outputs: Vec<Offset> = outputs
            .iter()
            .map(|&(compact, original)| output_var(&mut self.builder, compact, original))
            .collect();
        let root = self.graph.root;
        let mut fields = vec![
            (model::OPRS, Value::Offset(self.builder.offsets(&self.operators))),
            (model::MIDDLE_TENSORS, Value::Offset(self.builder.offsets(&self.vars))),
            (model::OUTPUT_VARS, Value::Offset(self.builder.offsets(&outputs))),
        ];
        if let Some(aliases) = aliases {
            fields.push((model::OUTPUT_ALIAS, Value::Offset(self.builder.offsets(&aliases))));
        }
        for index in [model::MGE_VERSION, model::MODEL_VERSION, model::NR_SHARED_TENSOR] {
            if let Some(value) = root.u32(index)? {
                fields.push((index, Value::U32(value)));
            }
        }
        if let Some(metadata) = root.target(model::METADATA)? {
            fields.push((model::METADATA, Value::Offset(self.builder.existing(metadata))));
        }
        let root = self.builder.table(&fields);
        Ok(self.builder.finish(root, FBS_V2_IDENTIFIER, true))
    }

    /// The graph's outputs: `(compact id, original id)` each, in order.
    fn outputs(&self) -> Result<Vec<(u32, u32)>> {
        self.graph
            .root
            .tables(model::OUTPUT_VARS)?
            .iter()
            .map(|var| {
                Ok((
                    var.u32(output::COMPACT_ID)?.unwrap_or(0),
                    var.u32(output::ORIGINAL_ID)?.unwrap_or(0),
                ))
            })
            .collect()
    }

    /// The graph's output aliases as `(original id, position)`; empty without any.
    fn aliases(&self) -> Result<Vec<(u32, usize)>> {
        self.graph
            .root
            .tables(model::OUTPUT_ALIAS)?
            .iter()
            .map(|alias| Ok((alias.u32(output::ALIAS_ID)?.unwrap_or(0), alias.position())))
            .collect()
    }
}

/// The graph (`flatbuffer`, FBS v2) with the vars `names` as outputs after
/// its own; returns the new graph, size-prefixed.
pub fn with_outputs(flatbuffer: &[u8], names: &[String]) -> Result<Vec<u8>> {
    let mut edit = Edit::new(flatbuffer)?;
    let mut outputs = edit.outputs()?;
    let aliases = edit.aliases()?;
    // Original ids name outputs for aliases: new ones must not clash.
    let first_original = outputs.iter().map(|&(_, original)| original + 1).max().unwrap_or(0);
    let mut new_aliases: Vec<Offset> = aliases
        .iter()
        .map(|&(_, position)| edit.builder.existing(position))
        .collect();
    for (original, name) in (first_original..).zip(names) {
        let id = edit.var_id(name)?;
        if outputs.iter().any(|&(compact, _)| compact == id) {
            bail!("--extra-output {name}: it is an output already");
        }
        outputs.push((id, original));
        if !aliases.is_empty() {
            // With aliases, the engine's outputs are the aliased ones only.
            let alias_name = edit.builder.string(name);
            let alias = edit.builder.table(&[
                (output::ALIAS_ID, Value::U32(original)),
                (output::ALIAS_NAME, Value::Offset(alias_name)),
            ]);
            new_aliases.push(alias);
        }
    }
    let aliases = (!aliases.is_empty()).then_some(new_aliases);
    edit.finish(&outputs, aliases)
}

/// The graph with an AssertEqual operator per output, checking it against a
/// new input `<output>:expect`, as `trace.dump(input_data=...)` writes a
/// testcase container's model; `outputs` describe the graph's outputs, in
/// the engine's order, by the names the engine reports.
pub fn with_assertions(flatbuffer: &[u8], outputs: &[TensorSpec], maxerr: f32) -> Result<Vec<u8>> {
    let mut edit = Edit::new(flatbuffer)?;
    let checked = engine_outputs(&edit)?;
    if checked.len() != outputs.len() {
        bail!(
            "the graph lists {} outputs, the engine reported {}",
            checked.len(),
            outputs.len()
        );
    }
    let empty_param = edit.builder.table(&[]);
    let mut asserted = Vec::new();
    for (spec, out_id) in outputs.iter().zip(checked) {
        let expect_name = format!("{}{}", spec.name, super::EXPECTATION_SUFFIX);
        let expect = TensorSpec {
            name: &expect_name,
            ..*spec
        };
        let expect_id = edit.var(&expect);
        let value = input_tensor(&mut edit, &expect);
        edit.operator(NewOperator {
            kind: HOST_TO_DEVICE,
            param: Some((HOST_TO_DEVICE_PARAM, empty_param)),
            inputs: &[],
            outputs: &[expect_id],
            tensors: Some(value),
        });
        let assert_name = format!("assert_eq({expect_name},{})", spec.name);
        let assert_id = edit.var(&TensorSpec {
            name: &assert_name,
            ..*spec
        });
        let param = edit.builder.table(&[(0, Value::F32(maxerr)), (1, Value::Bool(true))]);
        edit.operator(NewOperator {
            kind: ASSERT_EQUAL,
            param: Some((ASSERT_EQUAL_PARAM, param)),
            inputs: &[expect_id, out_id],
            outputs: &[assert_id],
            tensors: None,
        });
        asserted.push((assert_id, assert_id));
    }
    // The assertions are the outputs now, named by their vars: no aliases.
    edit.finish(&asserted, None)
}

/// The var id of each output the engine reports, in its order: the aliased
/// vars where the graph has aliases.
fn engine_outputs(edit: &Edit) -> Result<Vec<u32>> {
    let outputs = edit.outputs()?;
    let aliases = edit.aliases()?;
    if aliases.is_empty() {
        return Ok(outputs.iter().map(|&(compact, _)| compact).collect());
    }
    aliases
        .iter()
        .map(|&(original, _)| {
            outputs
                .iter()
                .find(|&&(_, id)| id == original)
                .map(|&(compact, _)| compact)
                .with_context(|| format!("an output alias names var {original}, which is no output"))
        })
        .collect()
}

/// The `tensors` vector of an input's Host2DeviceCopy: its name, shape and dtype.
fn input_tensor(edit: &mut Edit, spec: &TensorSpec) -> Offset {
    let value = tensor_table(
        &mut edit.builder,
        Some(spec.name),
        spec.shape,
        spec.dtype,
        "xpux:0",
        None,
    );
    edit.builder.offsets(&[value])
}

/// An operator an edit adds: its kind (type, type id, version), param
/// (`OperatorParam` member and table), the ids of its inputs and outputs,
/// and its `tensors`.
struct NewOperator<'a> {
    kind: (&'a str, u64, u32),
    param: Option<(u8, Offset)>,
    inputs: &'a [u32],
    outputs: &'a [u32],
    tensors: Option<Offset>,
}

fn operator_table(builder: &mut Builder, new: NewOperator) -> Offset {
    let (type_name, type_id, version) = new.kind;
    let type_name = builder.string(type_name);
    let mut fields = vec![
        (operator::TYPE, Value::Offset(type_name)),
        (operator::TYPE_ID, Value::U64(type_id)),
        (operator::OPR_VERSION, Value::U32(version)),
        (operator::OUTPUTS, Value::Offset(builder.u32s(new.outputs))),
    ];
    if !new.inputs.is_empty() {
        fields.push((operator::INPUTS, Value::Offset(builder.u32s(new.inputs))));
    }
    if let Some((param_type, param)) = new.param {
        fields.extend([
            (operator::PARAM_TYPE, Value::U8(param_type)),
            (operator::PARAM, Value::Offset(param)),
        ]);
    }
    if let Some(tensors) = new.tensors {
        fields.push((operator::TENSORS, Value::Offset(tensors)));
    }
    builder.table(&fields)
}

/// An `OutputVar`: a var's id, and the id its output is known by (to aliases).
pub(super) fn output_var(builder: &mut Builder, compact: u32, original: u32) -> Offset {
    builder.table(&[
        (output::COMPACT_ID, Value::U32(compact)),
        (output::ORIGINAL_ID, Value::U32(original)),
    ])
}

/// A `MiddleTensor`: a var's name and shape.
fn middle_tensor(builder: &mut Builder, name: &str, shape: &[usize]) -> Offset {
    let name = builder.string(name);
    let shape = shape_vector(builder, shape);
    builder.table(&[
        (tensor::NAME, Value::Offset(name)),
        (tensor::SHAPE, Value::Offset(shape)),
    ])
}

fn shape_vector(builder: &mut Builder, shape: &[usize]) -> Offset {
    let dims: Vec<u32> = shape.iter().map(|&dim| dim as u32).collect();
    builder.u32s(&dims)
}

/// A `Tensor` table.
fn tensor_table(
    builder: &mut Builder,
    name: Option<&str>,
    shape: &[usize],
    dtype: u8,
    comp_node: &str,
    data: Option<&[u8]>,
) -> Offset {
    let mut fields = Vec::new();
    if let Some(data) = data {
        fields.push((tensor::DATA, Value::Offset(builder.bytes(data))));
    }
    if let Some(name) = name {
        fields.push((tensor::NAME, Value::Offset(builder.string(name))));
    }
    let shape = shape_vector(builder, shape);
    let locator = builder.string(comp_node);
    let comp_node = builder.table(&[(0, Value::Offset(locator))]);
    let dtype = match dtype {
        0 => builder.table(&[]),
        code => builder.table(&[(0, Value::U8(code))]),
    };
    let format = builder.table(&[]);
    fields.extend([
        (tensor::SHAPE, Value::Offset(shape)),
        (tensor::COMP_NODE, Value::Offset(comp_node)),
        (tensor::DTYPE, Value::Offset(dtype)),
        (tensor::FORMAT_TYPE, Value::U8(DEFAULT_TENSOR_FORMAT)),
        (tensor::FORMAT, Value::Offset(format)),
    ]);
    builder.table(&fields)
}

/// A testcase graph: no inputs, its outputs the constants `values` (their
/// names sorted, the order a container's model reads them in), each as
/// `trace.dump` writes them, a SharedDeviceTensor.
pub fn constants_graph(values: &[(TensorSpec, &[u8])], mge_version: Option<u32>) -> Vec<u8> {
    let mut builder = Builder::new();
    let mut operators = Vec::new();
    let mut vars = Vec::new();
    let mut outputs = Vec::new();
    for (id, (spec, data)) in values.iter().enumerate() {
        let value = tensor_table(&mut builder, None, spec.shape, spec.dtype, "cpux:0", Some(data));
        let tensors = builder.offsets(&[value]);
        operators.push(operator_table(
            &mut builder,
            NewOperator {
                kind: SHARED_DEVICE_TENSOR,
                param: None,
                inputs: &[],
                outputs: &[id as u32],
                tensors: Some(tensors),
            },
        ));
        vars.push(middle_tensor(&mut builder, &format!("shared[{id}]"), spec.shape));
        outputs.push(output_var(&mut builder, id as u32, id as u32));
    }
    let mut fields = vec![
        (model::OPRS, Value::Offset(builder.offsets(&operators))),
        (model::MIDDLE_TENSORS, Value::Offset(builder.offsets(&vars))),
        (model::OUTPUT_VARS, Value::Offset(builder.offsets(&outputs))),
        (model::MODEL_VERSION, Value::U32(MODEL_VERSION)),
        (model::NR_SHARED_TENSOR, Value::U32(values.len() as u32)),
    ];
    if let Some(version) = mge_version {
        fields.push((model::MGE_VERSION, Value::U32(version)));
    }
    let root = builder.table(&fields);
    builder.finish(root, FBS_V2_IDENTIFIER, true)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::flatbuffer::Table;
    use crate::model::ModelFile;

    /// The type ids written are those MegEngine's own dump wrote into a
    /// container (`fixtures/conv_float_tc1.mge`, made by `trace.dump`).
    #[test]
    fn adds_operators_as_megengine_dumps_them() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/conv_float_tc1.mge");
        let container = ModelFile::read(&file, None).unwrap();
        let model = &container.graph()[4..];
        let testcase = &container.testcases().next().unwrap()[4..];
        let mut dumped = Vec::new();
        for flatbuffer in [model, testcase] {
            let root = Table::root(flatbuffer).unwrap();
            for operator in root.tables(model::OPRS).unwrap() {
                let type_id = operator.u64(operator::TYPE_ID).unwrap().unwrap();
                let version = operator.u32(operator::OPR_VERSION).unwrap().unwrap();
                let name = operator.string(operator::TYPE).unwrap().unwrap();
                dumped.push((name.to_string(), type_id, version));
            }
        }
        for (name, type_id, version) in [HOST_TO_DEVICE, ASSERT_EQUAL, SHARED_DEVICE_TENSOR] {
            assert!(
                dumped.contains(&(name.to_string(), type_id, version)),
                "{name} {type_id} v{version} not in {dumped:?}"
            );
        }
    }

    /// New outputs are listed after the graph's own, which stays as it was.
    #[test]
    fn a_new_output_follows_the_graphs_own() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/conv_float.mge");
        let mut model = ModelFile::read(&file, None).unwrap();
        let before = model.graph().to_vec();
        model.add_outputs(&["Convolution".to_string()]).unwrap();
        let edited = model.graph();
        assert!(edited.ends_with(&before[4..]), "the old graph is kept whole at the end");
        let graph = Structure::read(GraphFormat::FbsV2, &edited[4..], &[]).unwrap();
        let outputs = graph.root.tables(model::OUTPUT_VARS).unwrap();
        let names: Vec<&str> = outputs
            .iter()
            .map(|output| {
                let id = output.u32(output::COMPACT_ID).unwrap().unwrap_or(0);
                graph.vars[id as usize].name.unwrap()
            })
            .collect();
        assert_eq!(names, ["feat", "Convolution"]);
        assert!(model.add_outputs(&["feat".to_string()]).is_err());
    }
}
