//! A container's model as the plain model: its outputs moved from the
//! AssertEqual operators `trace.dump(input_data=...)` adds to the vars they
//! check, so that the engine prunes the assertions (and the `:expect` inputs
//! only they read) and reports the real values.
//!
//! Both loaders (`serializer_oss.cpp`, `serializer_oss_v2.cpp` at MegEngine
//! 1.13) take each output as the var whose id is the `compact_id` of its
//! `output_vars_idx` entry, ids counting the operators' outputs in file order,
//! the ids an operator's `inputs` hold too. So the rewrite is one `u32` per
//! output, in place: the id of the assertion's var becomes that of the var it
//! checks (its input 1: `AssertEqual(expect, get[, err])`).

use anyhow::{bail, Context, Result};

use super::assertions::{self, Assertion, OutputNames};
use super::flatbuffer::Table;
use super::GraphFormat;

/// `OutputVar { compact_id, original_id }`: a struct of two `u32` in FBS v1.
const V1_OUTPUT_VAR_SIZE: usize = 8;

/// Points the outputs of `flatbuffer` (a model graph's) at the vars its
/// assertions check; returns the name of each output's checked var (`None`
/// where the output is not an assertion's, or the graph does not name it).
pub fn rewrite(format: GraphFormat, flatbuffer: &mut [u8]) -> Result<Vec<Option<String>>> {
    let (targets, names) = retargets(format, flatbuffer)?;
    for (position, id) in targets {
        flatbuffer
            .get_mut(position..position + 4)
            .context("an output id lies past the end of the graph")?
            .copy_from_slice(&id.to_le_bytes());
    }
    Ok(names)
}

/// Where each asserted output's id is stored and the id to store there, and
/// each output's new name.
type Retargets = (Vec<(usize, u32)>, Vec<Option<String>>);

fn retargets(format: GraphFormat, flatbuffer: &[u8]) -> Result<Retargets> {
    let graph = Table::root(flatbuffer)?;
    let schema = assertions::schema(format);
    let checks = assertions::operators(format, graph)?
        .into_iter()
        .map(|(operator, assertion)| {
            let checked = *operator
                .u32s(schema.inputs)?
                .get(1)
                .with_context(|| format!("the AssertEqual operator '{}' has no checked input", assertion.var))?;
            Ok((operator, assertion, checked))
        })
        .collect::<Result<Vec<(Table, Assertion, u32)>>>()?;
    let outputs = output_ids(format, graph, flatbuffer)?;
    if checks.is_empty() {
        return Ok((Vec::new(), vec![None; outputs.len()]));
    }
    let mut targets = Vec::new();
    let mut names = vec![None; outputs.len()];
    match format {
        GraphFormat::FbsV2 => {
            // Each operator lists the ids of its own outputs.
            let OutputNames::InMiddleTensors { outputs: own_ids, .. } = schema.output_names else {
                unreachable!("FBS v2 operators list their output ids");
            };
            for (operator, assertion, checked) in &checks {
                let Some(&own) = operator.u32s(own_ids)?.first() else {
                    continue;
                };
                for (index, &(position, id)) in outputs.iter().enumerate() {
                    if let Some(position) = position.filter(|_| id == own) {
                        targets.push((position, *checked));
                        names[index] = checked_name(assertion);
                    }
                }
            }
        }
        GraphFormat::FbsV1 => {
            // Ids are not in the file: an assertion's var is known only by order.
            // Each AssertEqual has one output and ids grow in file order, so when
            // every output is an assertion's, the k-th smallest id is the k-th
            // assertion's.
            if checks.len() != outputs.len() {
                bail!(
                    "this FBS v1 graph has {} outputs and {} AssertEqual operators, so which output each checks cannot be told; \
                     run the plain model instead, or dump the container in FBS v2 or with no_assert=True",
                    outputs.len(),
                    checks.len()
                );
            }
            let mut by_id: Vec<usize> = (0..outputs.len()).collect();
            by_id.sort_by_key(|&index| outputs[index].1);
            for (&index, (_, assertion, checked)) in by_id.iter().zip(&checks) {
                let position = outputs[index].0.expect("FBS v1 stores every id");
                targets.push((position, *checked));
                names[index] = checked_name(assertion);
            }
        }
    }
    Ok((targets, names))
}

/// `<out>` of an assertion `assert_eq(<out>:expect,<out>)`.
fn checked_name(assertion: &Assertion) -> Option<String> {
    super::checked_output(&assertion.var).map(String::from)
}

/// Each output's `compact_id`: where it is stored (`None` for an FBS v2 field
/// left at its default, 0, which no assertion's var has), and its value.
fn output_ids(format: GraphFormat, graph: Table, flatbuffer: &[u8]) -> Result<Vec<(Option<usize>, u32)>> {
    let field = assertions::schema(format).output_vars;
    match format {
        // A vector of `OutputVar` tables, `compact_id` their field 0.
        GraphFormat::FbsV2 => graph
            .tables(field)?
            .into_iter()
            .map(|output| match output.field(0)? {
                Some(position) => Ok((Some(position), u32_at(flatbuffer, position)?)),
                None => Ok((None, 0)),
            })
            .collect(),
        // A vector of `OutputVar` structs, `compact_id` their first `u32`.
        GraphFormat::FbsV1 => {
            let Some(position) = graph.field(field)? else {
                return Ok(Vec::new());
            };
            let vector = position + u32_at(flatbuffer, position)? as usize;
            let len = u32_at(flatbuffer, vector)? as usize;
            (0..len)
                .map(|index| {
                    let position = vector + 4 + V1_OUTPUT_VAR_SIZE * index;
                    Ok((Some(position), u32_at(flatbuffer, position)?))
                })
                .collect()
        }
    }
}

fn u32_at(flatbuffer: &[u8], position: usize) -> Result<u32> {
    let bytes = flatbuffer
        .get(position..position.saturating_add(4))
        .context("an output id lies past the end of the graph")?;
    Ok(u32::from_le_bytes(bytes.try_into().unwrap()))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::ModelFile;

    fn container(name: &str) -> ModelFile {
        ModelFile::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name), None).unwrap()
    }

    /// The outputs get the names `fixtures/make_fixtures.py` gave the plain
    /// model; a container without expectations keeps its graph as it is.
    #[test]
    fn names_the_outputs_as_the_plain_model() {
        for (file, outputs) in [
            ("conv_float_tc1.mge", &["feat"][..]),
            ("conv_float_fbs1_tc1.mge", &["feat"]),
            ("image_uint8_tc1.mge", &["logits", "pooled"]),
            ("two_inputs_tc2.mge", &["y"]),
        ] {
            let model = container(file);
            let (graph, names) = model.graph_with_real_outputs().unwrap();
            assert_eq!(graph.len(), model.graph().len(), "{file}");
            assert_ne!(graph, model.graph(), "{file}");
            let names: Vec<&str> = names.iter().map(|name| name.as_deref().unwrap()).collect();
            assert_eq!(names, outputs, "{file}");
        }
        let model = container("conv_float_tc1_noassert.mge");
        let (graph, names) = model.graph_with_real_outputs().unwrap();
        assert_eq!(graph, model.graph());
        assert_eq!(names, [None]);
    }

    /// Each output becomes the var its assertion checks (input 1), and only
    /// the output ids change.
    #[test]
    fn points_each_output_at_the_checked_var() {
        for file in ["conv_float_tc1.mge", "conv_float_fbs1_tc1.mge", "image_uint8_tc1.mge"] {
            let model = container(file);
            let flatbuffer = model.graph_flatbuffer();
            let mut rewritten = flatbuffer.to_vec();
            rewrite(model.graph_format(), &mut rewritten).unwrap();
            let graph = Table::root(flatbuffer).unwrap();
            let mut checked: Vec<u32> = assertions::operators(model.graph_format(), graph)
                .unwrap()
                .iter()
                .map(|(operator, _)| operator.u32s(assertions::schema(model.graph_format()).inputs).unwrap()[1])
                .collect();
            let ids = |buffer: &[u8]| -> Vec<u32> {
                let graph = Table::root(buffer).unwrap();
                output_ids(model.graph_format(), graph, buffer)
                    .unwrap()
                    .iter()
                    .map(|&(_, id)| id)
                    .collect()
            };
            let mut now = ids(&rewritten);
            now.sort_unstable();
            checked.sort_unstable();
            assert_eq!(now, checked, "{file}");
            let changed = flatbuffer.iter().zip(&rewritten).filter(|(a, b)| a != b).count();
            assert!(changed <= 4 * now.len(), "{file}: {changed} bytes changed");
        }
    }

    #[test]
    fn refuses_fbs_v1_outputs_it_cannot_pair() {
        let model = container("conv_float_fbs1_tc1.mge");
        let mut flatbuffer = model.graph_flatbuffer().to_vec();
        // Claim no outputs: the assertion's output can no longer be told.
        let graph = Table::root(&flatbuffer).unwrap();
        let field = graph
            .field(assertions::schema(GraphFormat::FbsV1).output_vars)
            .unwrap()
            .unwrap();
        let vector = field + u32_at(&flatbuffer, field).unwrap() as usize;
        flatbuffer[vector..vector + 4].copy_from_slice(&0u32.to_le_bytes());
        let err = rewrite(GraphFormat::FbsV1, &mut flatbuffer).unwrap_err();
        assert!(err.to_string().contains("0 outputs and 1 AssertEqual"), "{err}");
    }
}
