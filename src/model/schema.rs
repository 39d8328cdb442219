//! The graph schemas of MegEngine 1.13 as the verifier needs them: which
//! fields are tables, vectors, strings and unions (`schema.fbs` for FBS v1,
//! `schema_v2.fbs` for FBS v2, with `dtype.fbs` and `mgb_cpp_opr.fbs`, in
//! MegEngine's `src/serialization/impl/` and `src/opr/impl/`).

use std::collections::BTreeSet;

use anyhow::{bail, Result};

use super::flatbuffer::Field::{Inline, String, Strings, Table, Tables, Union, Unions, Vector};
use super::flatbuffer::{Schema, Table as Reader};

/// `Graph`, the root of an FBS v1 graph.
pub static GRAPH_V1: Schema = Schema {
    name: "Graph",
    // mgb_version, hash, nr_shared_tensor, oprs, output_vars_idx (struct
    // OutputVar: two uints), metadata.
    fields: &[
        Inline(4),
        Inline(8),
        Inline(4),
        Tables(&OPERATOR_V1),
        Vector(8),
        Table(&METADATA_V1),
    ],
    // As for FBS v2: oprs and output_vars_idx are read unchecked.
    required: &[3, 4],
};

/// `Model`, the root of an FBS v2 graph.
pub static MODEL_V2: Schema = Schema {
    name: "Model",
    // mge_version, model_version, oprs, middle_tensors, output_vars_idx,
    // output_alias, nr_shared_tensor, metadata.
    fields: &[
        Inline(4),
        Inline(4),
        Tables(&OPERATOR_V2),
        Tables(&MIDDLE_TENSOR_V2),
        Tables(&OUTPUT_VAR_V2),
        Tables(&OUTPUT_ALIAS_V2),
        Inline(4),
        Table(&METADATA_V2),
    ],
    // The loader walks oprs and output_vars_idx without checking they are there.
    required: &[2, 4],
};

static OPERATOR_V1: Schema = Schema {
    name: "Operator",
    // type_id, param (type, value), inputs, comp_node, output_name,
    // output_dtype, tensors, priority, blobs, additional_params (types, values), name.
    fields: &[
        Inline(8),
        Inline(1),
        Union(operator_param),
        Vector(4),
        Tables(&COMP_NODE),
        Strings,
        Table(&DTYPE),
        Tables(&TENSOR_V1),
        Inline(4),
        Tables(&BLOB_V1),
        Vector(1),
        Unions(operator_param),
        String,
    ],
    required: &[],
};

pub(super) static OPERATOR_V2: Schema = Schema {
    name: "Operator",
    // type, type_id, name, param (type, value), additional_params (types,
    // values), inputs, outputs, comp_node, output_dtype, tensors, opr_version,
    // priority, custom_data.
    fields: &[
        String,
        Inline(8),
        String,
        Inline(1),
        Union(operator_param),
        Vector(1),
        Unions(operator_param),
        Vector(4),
        Vector(4),
        Tables(&COMP_NODE),
        Table(&DTYPE),
        Tables(&TENSOR_V2),
        Inline(4),
        Inline(4),
        Tables(&BLOB_V2),
    ],
    // The loader names an operator of an unknown type id by its type.
    required: &[0],
};

static TENSOR_V1: Schema = Schema {
    name: "Tensor",
    // name, shape, comp_node, dtype, data_size, offset.
    fields: &[
        String,
        Vector(4),
        Table(&COMP_NODE),
        Table(&DTYPE),
        Inline(4),
        Inline(4),
    ],
    required: &[],
};

static TENSOR_V2: Schema = Schema {
    name: "Tensor",
    // name, shape, comp_node, dtype, format (type, value), data.
    fields: &[
        String,
        Vector(4),
        Table(&COMP_NODE),
        Table(&DTYPE),
        Inline(1),
        Union(scalars_only),
        Vector(1),
    ],
    required: &[],
};

pub(super) static MIDDLE_TENSOR_V2: Schema = Schema {
    name: "MiddleTensor",
    // name, shape, comp_node, dtype, format (type, value).
    fields: &[
        String,
        Vector(4),
        Table(&COMP_NODE),
        Table(&DTYPE),
        Inline(1),
        Union(scalars_only),
    ],
    // The loader names output vars after their middle tensor.
    required: &[0],
};

static OUTPUT_VAR_V2: Schema = Schema {
    name: "OutputVar",
    fields: &[Inline(4), Inline(4)],
    required: &[],
};

static OUTPUT_ALIAS_V2: Schema = Schema {
    name: "OutputAlias",
    fields: &[Inline(4), String],
    // The loader reads every alias's name.
    required: &[1],
};

static METADATA_V1: Schema = Schema {
    name: "Metadata",
    // is_valid, graph_modified, user_info, optimize_options.
    fields: &[Inline(1), Inline(1), String, Inline(8)],
    required: &[],
};

static METADATA_V2: Schema = Schema {
    name: "Metadata",
    // is_valid, graph_modified, optimize_options, user_info.
    fields: &[Inline(1), Inline(1), Inline(8), String],
    required: &[],
};

static BLOB_V1: Schema = Schema {
    name: "Blob",
    fields: &[Vector(1)],
    required: &[0],
};

static BLOB_V2: Schema = Schema {
    name: "Blob",
    fields: &[Vector(1)],
    required: &[],
};

static COMP_NODE: Schema = Schema {
    name: "CompNode",
    fields: &[String],
    required: &[],
};

static DTYPE: Schema = Schema {
    name: "DType",
    // type, param (type, value: LinearQuantizationParam, scalars only).
    fields: &[Inline(1), Inline(1), Union(scalars_only)],
    required: &[],
};

/// `param.Dimshuffle`: pattern, ndim.
static DIMSHUFFLE: Schema = Schema {
    name: "Dimshuffle",
    fields: &[Vector(4), Inline(4)],
    required: &[],
};

/// `param.AxisAddRemove`: desc (struct AxisDesc: a byte and an int, 8 bytes).
static AXIS_ADD_REMOVE: Schema = Schema {
    name: "AxisAddRemove",
    fields: &[Vector(8)],
    required: &[],
};

/// `param.IndexDescMaskDump`: items (struct IndexDescMaskItem: 5 bytes).
static INDEX_DESC_MASK_DUMP: Schema = Schema {
    name: "IndexDescMaskDump",
    fields: &[Vector(5)],
    required: &[],
};

/// The `OperatorParam` member that is a `DType` (`TypeCvt`'s: the dtype it converts to).
pub const DTYPE_PARAM: u8 = 67;

/// The `OperatorParam` union (the same tags in both schemas). The parameter
/// tables generated from `opr_param_defs.py` hold scalars only; the ones
/// written by hand in `mgb_cpp_opr.fbs`, and `DType`, have vectors or tables.
fn operator_param(tag: u8) -> Option<&'static Schema> {
    match tag {
        64 => Some(&DIMSHUFFLE),
        65 => Some(&AXIS_ADD_REMOVE),
        66 => Some(&INDEX_DESC_MASK_DUMP),
        DTYPE_PARAM => Some(&DTYPE),
        _ => None,
    }
}

/// `TensorFormat` and `DTypeParam`: every member holds scalars only.
fn scalars_only(_tag: u8) -> Option<&'static Schema> {
    None
}

/// What the FBS v2 loader indexes with the graph's own numbers without
/// checking them: names of operator outputs looked up among the middle
/// tensors, output aliases looked up among the output vars.
pub fn check_v2_references(flatbuffer: &[u8]) -> Result<()> {
    let model = Reader::root(flatbuffer)?;
    let middle_tensors = model.tables(3)?.len();
    if middle_tensors > 0 {
        for (index, operator) in model.tables(2)?.iter().enumerate() {
            if let Some(&id) = operator.u32s(8)?.iter().find(|&&id| id as usize >= middle_tensors) {
                bail!("operator {index} outputs var {id}, but the graph has {middle_tensors} middle tensors");
            }
        }
    }
    // A set: a graph of many outputs and as many aliases is looked up in n log n.
    let original_ids = model
        .tables(4)?
        .iter()
        .map(|var| Ok(var.u32(1)?.unwrap_or(0)))
        .collect::<Result<BTreeSet<u32>>>()?;
    for alias in model.tables(5)? {
        let id = alias.u32(0)?.unwrap_or(0);
        if !original_ids.contains(&id) {
            bail!("output alias for var {id}, which is no output of the graph");
        }
    }
    Ok(())
}
