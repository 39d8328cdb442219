//! An FBS v2 graph read for its structure (`schema_v2.fbs` at MegEngine
//! 1.13): operators with the ids of the vars they read and write, and each
//! var's name and shape as dumped (the `middle_tensors`).

use anyhow::{bail, Context, Result};

use super::flatbuffer::Table;

/// Field indices of `Model`.
pub mod model {
    pub const MGE_VERSION: usize = 0;
    pub const MODEL_VERSION: usize = 1;
    pub const OPRS: usize = 2;
    pub const MIDDLE_TENSORS: usize = 3;
    pub const OUTPUT_VARS: usize = 4;
    pub const OUTPUT_ALIAS: usize = 5;
    pub const NR_SHARED_TENSOR: usize = 6;
    pub const METADATA: usize = 7;
}

/// Field indices of `Operator`.
pub mod operator {
    pub const TYPE: usize = 0;
    pub const TYPE_ID: usize = 1;
    pub const NAME: usize = 2;
    pub const PARAM_TYPE: usize = 3;
    pub const PARAM: usize = 4;
    pub const INPUTS: usize = 7;
    pub const OUTPUTS: usize = 8;
    pub const TENSORS: usize = 11;
    pub const OPR_VERSION: usize = 12;
}

/// Field indices of `Tensor` (and of `MiddleTensor`, which has its first five).
pub mod tensor {
    pub const NAME: usize = 0;
    pub const SHAPE: usize = 1;
    pub const COMP_NODE: usize = 2;
    pub const DTYPE: usize = 3;
    pub const FORMAT_TYPE: usize = 4;
    pub const FORMAT: usize = 5;
    pub const DATA: usize = 6;
}

/// Field indices of `OutputVar` and `OutputAlias`.
pub mod output {
    pub const COMPACT_ID: usize = 0;
    pub const ORIGINAL_ID: usize = 1;
    pub const ALIAS_ID: usize = 0;
    pub const ALIAS_NAME: usize = 1;
}

pub struct Operator<'a> {
    pub table: Table<'a>,
    /// The type the registry knows it by (`Convolution`, `MatrixMulV2`, ...).
    pub op_type: &'a str,
    pub inputs: Vec<u32>,
    pub outputs: Vec<u32>,
}

/// A var as the graph was dumped.
pub struct Var<'a> {
    pub name: Option<&'a str>,
    /// Its shape at dump time, where stored.
    pub shape: Option<Vec<usize>>,
}

pub struct Graph<'a> {
    pub root: Table<'a>,
    pub operators: Vec<Operator<'a>>,
    /// By id: the ids operators' inputs and outputs hold.
    pub vars: Vec<Var<'a>>,
}

impl<'a> Graph<'a> {
    /// Reads the graph of an FBS v2 flatbuffer (already verified).
    pub fn read(flatbuffer: &'a [u8]) -> Result<Graph<'a>> {
        let root = Table::root(flatbuffer)?;
        let operators = root
            .tables(model::OPRS)?
            .into_iter()
            .map(|table| {
                Ok(Operator {
                    op_type: table.string(operator::TYPE)?.context("an operator has no type")?,
                    inputs: table.u32s(operator::INPUTS)?,
                    outputs: table.u32s(operator::OUTPUTS)?,
                    table,
                })
            })
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
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Graph { root, operators, vars })
    }

    /// How many var ids the operators define: the id the next new var gets.
    /// Each id is a middle tensor too, which new vars must keep so.
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
}
