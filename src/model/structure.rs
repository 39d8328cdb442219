//! A model graph read for its structure, in either format: operators (name,
//! type, parameters, the vars they read and write, the tensors they hold),
//! vars (name, and the shape and dtype the graph stores), outputs, and how it
//! was dumped. What `cost` counts and `diff` compares.
//!
//! FBS v2 (`schema_v2.fbs`) names each operator's type and stores each var's
//! shape and dtype (`middle_tensors`) and constants' values in the flatbuffer.
//! FBS v1 (`schema.fbs`) names a type by its hash (`type_names`), names vars
//! in the operator that writes them (`output_name`), stores no shape but the
//! tensors' own, and keeps tensor values in the bytes before its flatbuffer:
//! the loader reads them in operator order, each `offset` bytes after where
//! the previous one began plus its `data_size` (`serializer_oss.cpp`).

use anyhow::{bail, Context, Result};

use super::flatbuffer::Table;
use super::graph::{model, operator, output, tensor};
use super::schema::DTYPE_PARAM;
use super::{type_names, GraphFormat};

/// Field indices of FBS v1's tables (`schema.fbs`).
mod v1 {
    pub const GRAPH_MGB_VERSION: usize = 0;
    pub const GRAPH_OPRS: usize = 3;
    pub const GRAPH_OUTPUT_VARS: usize = 4;
    pub const GRAPH_METADATA: usize = 5;
    pub const TYPE_ID: usize = 0;
    pub const PARAM_TYPE: usize = 1;
    pub const PARAM: usize = 2;
    pub const INPUTS: usize = 3;
    pub const OUTPUT_NAME: usize = 5;
    pub const OUTPUT_DTYPE: usize = 6;
    pub const TENSORS: usize = 7;
    pub const ADDITIONAL_PARAM_TYPES: usize = 10;
    pub const ADDITIONAL_PARAMS: usize = 11;
    pub const NAME: usize = 12;
    pub const TENSOR_DATA_SIZE: usize = 4;
    pub const TENSOR_OFFSET: usize = 5;
    /// `OutputVar { compact_id, original_id }`, a struct of two `u32`.
    pub const OUTPUT_VAR_SIZE: usize = 8;
}

/// Field indices of FBS v2's `Operator` this module reads beyond `graph`'s.
const V2_ADDITIONAL_PARAM_TYPES: usize = 5;
const V2_ADDITIONAL_PARAMS: usize = 6;
const V2_OUTPUT_DTYPE: usize = 10;

/// `Metadata`'s fields: FBS v1 `is_valid, graph_modified, user_info,
/// optimize_options`; FBS v2 `is_valid, graph_modified, optimize_options, user_info`.
const METADATA_GRAPH_MODIFIED: usize = 1;

/// A graph's operators, vars and outputs, borrowed from its bytes.
pub struct Structure<'a> {
    pub format: GraphFormat,
    /// The flatbuffer's root table: `Model` or `Graph`.
    pub root: Table<'a>,
    pub operators: Vec<Operator<'a>>,
    /// By id: the ids operators' inputs and outputs hold.
    pub vars: Vec<Var<'a>>,
    /// The graph's outputs: var ids, in order.
    pub outputs: Vec<u32>,
    pub dumped: Dumped,
}

/// What the graph says of how it was dumped.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Dumped {
    /// `MGB_VERSION` of the MegEngine that dumped it (major * 1e6 + minor * 1e4 + patch).
    pub mge_version: Option<u32>,
    /// The FBS v2 model version (the operators' serialization version).
    pub model_version: Option<u32>,
    /// Whether the graph was optimized for inference (`optimize_for_inference`) and how.
    pub optimize_options: Option<u64>,
    pub graph_modified: bool,
    /// The size of what the dumper stored about itself (Python's `trace.dump`: a pickle).
    pub user_info_bytes: Option<usize>,
}

#[derive(Clone)]
pub struct Operator<'a> {
    /// Its table in the flatbuffer, to refer to where it lies.
    pub table: Table<'a>,
    pub name: Option<&'a str>,
    /// The type it was registered under (`Convolution`, `MatrixMulV2`); for
    /// a type id FBS v1 does not resolve, `type 0x...`.
    pub op_type: String,
    pub inputs: Vec<u32>,
    pub outputs: Vec<u32>,
    /// Its parameter, then its additional ones (an execution policy).
    pub params: Vec<Param<'a>>,
    /// The tensors it holds: a constant's value, an input's declared layout.
    pub tensors: Vec<Tensor<'a>>,
}

/// A member of the `OperatorParam` union: its tag, and its table.
#[derive(Clone, Copy)]
pub struct Param<'a> {
    pub tag: u8,
    pub table: Table<'a>,
}

/// A tensor an operator holds.
#[derive(Clone)]
pub struct Tensor<'a> {
    pub name: Option<&'a str>,
    pub shape: Vec<usize>,
    /// megdnn's `DTypeEnum`.
    pub dtype: Option<u8>,
    pub quantization: Option<Quantization>,
    /// Its value's bytes; empty when it holds a layout only.
    pub data: &'a [u8],
}

/// A var as the graph was dumped.
#[derive(Clone)]
pub struct Var<'a> {
    pub name: Option<&'a str>,
    /// Where stored: FBS v2 only.
    pub shape: Option<Vec<usize>>,
    pub dtype: Option<u8>,
    /// A quantized dtype's parameters, where the graph stores them.
    pub quantization: Option<Quantization>,
}

/// A quantized dtype's `LinearQuantizationParam`: a stored value `v` means
/// `(v - zero_point) * scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantization {
    pub scale: f32,
    /// Only the asymmetric dtypes (`quint8`) have one.
    pub zero_point: Option<u8>,
}

impl Operator<'_> {
    /// Whether it feeds the graph: its inputs are its vars.
    pub fn is_input(&self) -> bool {
        self.op_type == "Host2DeviceCopy"
    }

    /// Whether its outputs are constants it holds (weights, shapes, scalars).
    pub fn is_constant(&self) -> bool {
        self.inputs.is_empty() && !self.is_input() && self.tensors.iter().any(|tensor| !tensor.data.is_empty())
    }
}

impl<'a> Structure<'a> {
    /// Reads a graph's flatbuffer (verified against its schema); an FBS v1
    /// graph's tensor values lie in `tensor_data`.
    pub fn read(format: GraphFormat, flatbuffer: &'a [u8], tensor_data: &'a [u8]) -> Result<Structure<'a>> {
        let root = Table::root(flatbuffer)?;
        match format {
            GraphFormat::FbsV2 => read_v2(root),
            GraphFormat::FbsV1 => read_v1(root, tensor_data),
        }
        .context("cannot read the graph's operators")
    }

    /// How many var ids the operators define: the id the next new var gets.
    /// Each id is a middle tensor too (FBS v2), which new vars must keep so.
    pub fn next_var_id(&self) -> Result<u32> {
        let count = self
            .operators
            .iter()
            .map(|operator| operator.outputs.len())
            .sum::<usize>();
        if count != self.vars.len() {
            bail!(
                "the graph names {} of its {count} vars (dumped with keep_var_name=0?); its vars cannot be told apart",
                self.vars.len()
            );
        }
        Ok(count as u32)
    }

    /// The shape of var `id`, where stored.
    pub fn shape(&self, id: u32) -> Option<&[usize]> {
        self.vars.get(id as usize)?.shape.as_deref()
    }

    /// The operators the outputs depend on, by index: the graph the engine
    /// runs (it prunes the rest, such as a container's assertions once its
    /// outputs are the vars they check).
    pub fn needed(&self) -> Vec<bool> {
        let mut writer = vec![None; self.vars.len()];
        for (at, operator) in self.operators.iter().enumerate() {
            for &id in &operator.outputs {
                if let Some(slot) = writer.get_mut(id as usize) {
                    *slot = Some(at);
                }
            }
        }
        let mut needed = vec![false; self.operators.len()];
        let mut pending: Vec<usize> = self
            .outputs
            .iter()
            .filter_map(|&id| writer.get(id as usize).copied().flatten())
            .collect();
        while let Some(at) = pending.pop() {
            if std::mem::replace(&mut needed[at], true) {
                continue;
            }
            let inputs = &self.operators[at].inputs;
            pending.extend(
                inputs
                    .iter()
                    .filter_map(|&id| writer.get(id as usize).copied().flatten()),
            );
        }
        needed
    }
}

/// One operator of an FBS v2 graph, with its constant tensors.
fn read_v2_operator(table: Table) -> Result<Operator> {
    let tensors = table
        .tables(operator::TENSORS)?
        .into_iter()
        .map(|value| {
            let data = match value.bytes(tensor::DATA)? {
                Some(range) => &value.buffer()[range],
                None => &[],
            };
            tensor_layout(value, data)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Operator {
        table,
        name: table.string(operator::NAME)?,
        op_type: table
            .string(operator::TYPE)?
            .context("an operator has no type")?
            .to_string(),
        inputs: table.u32s(operator::INPUTS)?,
        outputs: table.u32s(operator::OUTPUTS)?,
        params: params(
            table,
            [operator::PARAM_TYPE, operator::PARAM],
            [V2_ADDITIONAL_PARAM_TYPES, V2_ADDITIONAL_PARAMS],
        )?,
        tensors,
    })
}

fn read_v2(root: Table) -> Result<Structure> {
    let operators = root
        .tables(model::OPRS)?
        .into_iter()
        .map(read_v2_operator)
        .collect::<Result<Vec<_>>>()?;
    let vars = root
        .tables(model::MIDDLE_TENSORS)?
        .into_iter()
        .map(|var| {
            let shape = match var.field(tensor::SHAPE)? {
                Some(_) => Some(var.u32s(tensor::SHAPE)?.into_iter().map(|dim| dim as usize).collect()),
                None => None,
            };
            Ok(Var {
                name: var.string(tensor::NAME)?,
                shape,
                dtype: dtype(var.table(tensor::DTYPE)?)?,
                quantization: quantization(var.table(tensor::DTYPE)?)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let outputs = root
        .tables(model::OUTPUT_VARS)?
        .into_iter()
        .map(|var| Ok(var.u32(output::COMPACT_ID)?.unwrap_or(0)))
        .collect::<Result<Vec<u32>>>()?;
    let metadata = root.table(model::METADATA)?;
    let mut structure = Structure {
        format: GraphFormat::FbsV2,
        root,
        operators,
        vars,
        outputs,
        dumped: Dumped {
            mge_version: root.u32(model::MGE_VERSION)?,
            model_version: root.u32(model::MODEL_VERSION)?,
            ..metadata_of(metadata, 2, 3)?
        },
    };
    // An output var whose middle tensor holds no dtype, or no scale: the operator's own.
    for (at, operator) in root.tables(model::OPRS)?.into_iter().enumerate() {
        let output_dtype = operator.table(V2_OUTPUT_DTYPE)?;
        if let Some(dtype) = dtype(output_dtype)? {
            let quantized = quantization(output_dtype)?;
            for &id in &structure.operators[at].outputs {
                if let Some(var) = structure.vars.get_mut(id as usize) {
                    var.quantization = var.quantization.or(quantized);
                    var.dtype.get_or_insert(dtype);
                }
            }
        }
    }
    dtypes_from_params(&mut structure)?;
    Ok(structure)
}

fn read_v1<'a>(root: Table<'a>, tensor_data: &'a [u8]) -> Result<Structure<'a>> {
    let mut vars = Vec::new();
    let mut operators = Vec::new();
    // Where the next tensor value begins in `tensor_data`.
    let mut cursor = 0usize;
    for (index, table) in root.tables(v1::GRAPH_OPRS)?.into_iter().enumerate() {
        operators.push(read_v1_operator(index, table, &mut vars, tensor_data, &mut cursor)?);
    }
    v1_vars_from_tensors(&operators, &mut vars);
    let outputs = match root.structs(v1::GRAPH_OUTPUT_VARS, v1::OUTPUT_VAR_SIZE)? {
        Some(structs) => structs
            .chunks_exact(v1::OUTPUT_VAR_SIZE)
            .map(|entry| u32::from_le_bytes(entry[..4].try_into().expect("4 bytes")))
            .collect(),
        None => Vec::new(),
    };
    let metadata = root.table(v1::GRAPH_METADATA)?;
    let mut structure = Structure {
        format: GraphFormat::FbsV1,
        root,
        operators,
        vars,
        outputs,
        dumped: Dumped {
            mge_version: root.u32(v1::GRAPH_MGB_VERSION)?,
            model_version: None,
            ..metadata_of(metadata, 3, 2)?
        },
    };
    dtypes_from_params(&mut structure)?;
    Ok(structure)
}

/// An operator whose parameter is a dtype (`TypeCvt`'s, with a quantized
/// one's scale) gives its outputs that dtype where the graph stores none for
/// them: MegEngine stores a `TypeCvt`'s output without its scale.
fn dtypes_from_params(structure: &mut Structure) -> Result<()> {
    for operator in &structure.operators {
        let Some(param) = operator.params.first().filter(|param| param.tag == DTYPE_PARAM) else {
            continue;
        };
        let (converted, quantized) = (dtype(Some(param.table))?, quantization(Some(param.table))?);
        for &id in &operator.outputs {
            if let Some(var) = structure.vars.get_mut(id as usize) {
                var.quantization = var.quantization.or(quantized);
                var.dtype = var.dtype.or(converted);
            }
        }
    }
    Ok(())
}

/// Operator `index` of an FBS v1 graph, whose vars are numbered in the
/// order the operators write them: the vars it writes are added to `vars`,
/// and it may read only those written before.
fn read_v1_operator<'a>(
    index: usize,
    table: Table<'a>,
    vars: &mut Vec<Var<'a>>,
    tensor_data: &'a [u8],
    cursor: &mut usize,
) -> Result<Operator<'a>> {
    let id = table.u64(v1::TYPE_ID)?.unwrap_or(0);
    let op_type = type_names::type_name(id).map_or_else(|| format!("type {id:#018x}"), String::from);
    let names = table.strings(v1::OUTPUT_NAME)?;
    let tensor_count = table.tables(v1::TENSORS)?.len();
    let output_dtype = dtype(table.table(v1::OUTPUT_DTYPE)?)?;
    let first = vars.len() as u32;
    let count = v1_output_count(&op_type, &names, tensor_count);
    let quantized = quantization(table.table(v1::OUTPUT_DTYPE)?)?;
    vars.extend((0..count).map(|at| Var {
        name: names.get(at).copied(),
        shape: None,
        dtype: output_dtype,
        quantization: quantized,
    }));
    let inputs = table.u32s(v1::INPUTS)?;
    if let Some(id) = inputs.iter().find(|&&id| id >= first) {
        bail!("operator {index} ({op_type}) reads var {id}, which no operator before it wrote");
    }
    let tensors = v1_tensors(index, &op_type, table, tensor_data, cursor)?;
    Ok(Operator {
        table,
        name: table.string(v1::NAME)?,
        op_type,
        inputs,
        outputs: (first..vars.len() as u32).collect(),
        params: params(
            table,
            [v1::PARAM_TYPE, v1::PARAM],
            [v1::ADDITIONAL_PARAM_TYPES, v1::ADDITIONAL_PARAMS],
        )?,
        tensors,
    })
}

/// The tensors FBS v1 operator `index` holds. Their values lie one after
/// another in `tensor_data`: each is taken at `cursor`, which moves past it.
fn v1_tensors<'a>(
    index: usize,
    op_type: &str,
    table: Table<'a>,
    tensor_data: &'a [u8],
    cursor: &mut usize,
) -> Result<Vec<Tensor<'a>>> {
    let mut tensors = Vec::new();
    for value in table.tables(v1::TENSORS)? {
        let size = value.u32(v1::TENSOR_DATA_SIZE)?.unwrap_or(0) as usize;
        let offset = value.u32(v1::TENSOR_OFFSET)?.unwrap_or(0) as usize;
        let data = match size {
            0 => &[][..],
            _ => {
                let start = cursor.saturating_add(offset);
                let end = cursor.saturating_add(size);
                *cursor = end;
                tensor_data.get(start..end).with_context(|| {
                    format!(
                        "operator {index} ({op_type}) holds a tensor at bytes {start}..{end} of the graph's {} bytes of values",
                        tensor_data.len()
                    )
                })?
            }
        };
        tensors.push(tensor_layout(value, data)?);
    }
    Ok(tensors)
}

/// A constant's and an input's tensor give their var's shape, dtype and
/// (an input's, unless the file names its var) name.
fn v1_vars_from_tensors<'a>(operators: &[Operator<'a>], vars: &mut [Var<'a>]) {
    for operator in operators {
        if let ([id], [tensor]) = (operator.outputs.as_slice(), operator.tensors.as_slice()) {
            let var = &mut vars[*id as usize];
            var.shape = Some(tensor.shape.clone());
            var.dtype = var.dtype.or(tensor.dtype);
            if operator.is_input() {
                var.name = var.name.or(tensor.name);
            }
        }
    }
}

/// How many vars an FBS v1 operator writes. The file names them only where
/// it was dumped with `keep_var_name` 2, or for the graph's outputs (1, the
/// default): elsewhere, one var, or one per tensor a holder of many holds.
fn v1_output_count(op_type: &str, names: &[&str], tensors: usize) -> usize {
    match names.len() {
        0 if op_type.starts_with("MultipleDeviceTensor") => tensors,
        0 => 1,
        named => named,
    }
}

/// A tensor's shape and dtype, with its value's bytes.
fn tensor_layout<'a>(value: Table<'a>, data: &'a [u8]) -> Result<Tensor<'a>> {
    Ok(Tensor {
        name: value.string(tensor::NAME)?,
        shape: value.u32s(tensor::SHAPE)?.into_iter().map(|dim| dim as usize).collect(),
        dtype: dtype(value.table(tensor::DTYPE)?)?,
        quantization: quantization(value.table(tensor::DTYPE)?)?,
        data,
    })
}

/// `DType.type`, megdnn's `DTypeEnum` (Float32 when left at its default).
fn dtype(table: Option<Table>) -> Result<Option<u8>> {
    table.map(|dtype| Ok(dtype.u8(0)?.unwrap_or(0))).transpose()
}

impl Structure<'_> {
    /// Each var's quantization where the graph stores it: in the var's
    /// dtype, or in the constant's tensor that holds it.
    pub fn quantizations(&self) -> Vec<Option<Quantization>> {
        let mut found: Vec<Option<Quantization>> = self.vars.iter().map(|var| var.quantization).collect();
        for operator in &self.operators {
            if let ([tensor], [id]) = (operator.tensors.as_slice(), operator.outputs.as_slice()) {
                if let Some(slot) = found.get_mut(*id as usize) {
                    *slot = slot.or(tensor.quantization);
                }
            }
        }
        found
    }
}

/// `DType.param` where it is a `LinearQuantizationParam` (the union's one
/// member, tag 1): `scale` (a float), `zero_point` (a byte).
fn quantization(table: Option<Table>) -> Result<Option<Quantization>> {
    let Some(dtype) = table else {
        return Ok(None);
    };
    if dtype.u8(1)? != Some(1) {
        return Ok(None);
    }
    let Some(param) = dtype.table(2)? else {
        return Ok(None);
    };
    Ok(Some(Quantization {
        scale: param.f32(0)?.unwrap_or(0.0),
        zero_point: param.u8(1)?,
    }))
}

/// An operator's parameter (its union's type and value at `main`), then its
/// additional ones (a vector of types and one of values at `additional`).
fn params<'a>(table: Table<'a>, main: [usize; 2], additional: [usize; 2]) -> Result<Vec<Param<'a>>> {
    let mut params = Vec::new();
    if let (Some(tag), Some(value)) = (table.u8(main[0])?, table.table(main[1])?) {
        params.push(Param { tag, table: value });
    }
    let tags = match table.bytes(additional[0])? {
        Some(range) => table.buffer()[range].to_vec(),
        None => Vec::new(),
    };
    for (tag, value) in tags.into_iter().zip(table.tables(additional[1])?) {
        params.push(Param { tag, table: value });
    }
    Ok(params)
}

/// `Metadata` (absent: its defaults), its `optimize_options` and `user_info`
/// at the given fields.
fn metadata_of(metadata: Option<Table>, optimize_options: usize, user_info: usize) -> Result<Dumped> {
    let Some(metadata) = metadata else {
        return Ok(Dumped::default());
    };
    Ok(Dumped {
        optimize_options: metadata.u64(optimize_options)?,
        graph_modified: metadata.u8(METADATA_GRAPH_MODIFIED)?.unwrap_or(0) != 0,
        user_info_bytes: metadata.bytes(user_info)?.map(|range| range.len()),
        ..Dumped::default()
    })
}

/// The type without the registry's version suffix: `MatrixMulV2` is a `MatrixMul`.
pub fn type_name(registered: &str) -> &str {
    match registered.rfind('V') {
        Some(at) if at > 0 && registered.len() > at + 1 && registered[at + 1..].bytes().all(|b| b.is_ascii_digit()) => {
            &registered[..at]
        }
        _ => registered,
    }
}
