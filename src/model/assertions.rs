//! The AssertEqual operators `trace.dump(input_data=...)` adds to a model: which
//! output each checks and with what tolerance. The engine does not report the
//! tolerance, so it is read from the graph (schemas `schema.fbs` for FBS v1 and
//! `schema_v2.fbs` for FBS v2 in MegEngine's `src/serialization/impl/`).

use anyhow::Result;

use super::flatbuffer::Table;
use super::GraphFormat;

/// `param.AssertEqual` in the `OperatorParam` union of both schemas.
const ASSERT_EQUAL_PARAM: u8 = 56;
/// `param.AssertEqual`'s default tolerance (`mgb_opr_param_defs.py`): the
/// engine's own, and so the tool's wherever it takes `--maxerr`.
pub const DEFAULT_MAXERR: f64 = 1e-4;

/// Field indices (a union takes two: its type, then its value).
pub(super) struct Schema {
    /// `oprs: [Operator]` of the root table.
    pub oprs: usize,
    /// `output_vars_idx: [OutputVar]` of the root table.
    pub output_vars: usize,
    param_type: usize,
    param: usize,
    /// `Operator.inputs: [uint]`, the ids of its input vars.
    pub inputs: usize,
    pub output_names: OutputNames,
}

/// Where an operator's output var is named.
pub(super) enum OutputNames {
    /// `Operator.output_name: [string]` (FBS v1).
    InOperator(usize),
    /// `Operator.outputs: [uint]` indexing `Model.middle_tensors`, whose
    /// first field is the name (FBS v2).
    InMiddleTensors { outputs: usize, middle_tensors: usize },
}

const FBS_V1: Schema = Schema {
    oprs: 3,
    output_vars: 4,
    param_type: 1,
    param: 2,
    inputs: 3,
    output_names: OutputNames::InOperator(5),
};

const FBS_V2: Schema = Schema {
    oprs: 2,
    output_vars: 4,
    param_type: 3,
    param: 4,
    inputs: 7,
    output_names: OutputNames::InMiddleTensors {
        outputs: 8,
        middle_tensors: 3,
    },
};

#[derive(Clone, Debug, PartialEq)]
pub struct Assertion {
    /// The name of the operator's output var, `assert_eq(<out>:expect,<out>)`
    /// for trace.dump's.
    pub var: String,
    pub maxerr: f64,
    /// Whether the engine prints `AssertEqual: err=...` on every run.
    pub verbose: bool,
}

impl Assertion {
    /// The output this assertion checks: `<out>` of `assert_eq(<out>:expect,<out>)`,
    /// else the var's own name.
    pub fn output(&self) -> &str {
        checked_output(&self.var).unwrap_or(&self.var)
    }
}

/// `<out>` of an engine name `assert_eq(<out>:expect,<out>)`, with or without
/// the `[id]` the engine appends at run time.
pub fn checked_output(name: &str) -> Option<&str> {
    let inner = name.strip_prefix("assert_eq(")?;
    let inner = match inner.rfind(")[") {
        Some(end) if inner.ends_with(']') => &inner[..end],
        _ => inner.strip_suffix(')')?,
    };
    // `<out>:expect,<out>`: the output is the second half.
    let separator = ":expect,";
    let out_len = inner.len().checked_sub(separator.len())? / 2;
    let (expect, out) = inner.split_at(inner.len() - out_len);
    (expect.strip_suffix(separator) == Some(out)).then_some(out)
}

pub(super) fn schema(format: GraphFormat) -> &'static Schema {
    match format {
        GraphFormat::FbsV1 => &FBS_V1,
        GraphFormat::FbsV2 => &FBS_V2,
    }
}

pub fn read(format: GraphFormat, flatbuffer: &[u8]) -> Result<Vec<Assertion>> {
    Ok(operators(format, Table::root(flatbuffer)?)?
        .into_iter()
        .map(|(_, assertion)| assertion)
        .collect())
}

/// The AssertEqual operators of `graph`, in file order, each with what it checks.
pub(super) fn operators<'a>(format: GraphFormat, graph: Table<'a>) -> Result<Vec<(Table<'a>, Assertion)>> {
    let schema = schema(format);
    let mut found = Vec::new();
    for operator in graph.tables(schema.oprs)? {
        if operator.u8(schema.param_type)? != Some(ASSERT_EQUAL_PARAM) {
            continue;
        }
        let (maxerr, verbose) = match operator.table(schema.param)? {
            Some(param) => (param.f32(0)?, param.u8(1)?),
            None => (None, None),
        };
        let var = match schema.output_names {
            OutputNames::InOperator(field) => operator.strings(field)?.first().copied(),
            OutputNames::InMiddleTensors {
                outputs,
                middle_tensors,
            } => match operator.u32s(outputs)?.first() {
                Some(&index) => match graph.tables(middle_tensors)?.get(index as usize) {
                    Some(tensor) => tensor.string(0)?,
                    None => None,
                },
                None => None,
            },
        };
        let assertion = Assertion {
            var: var.unwrap_or_default().to_string(),
            // The shortest decimal of the stored f32: 1e-4, not 9.99999974e-5.
            maxerr: maxerr.unwrap_or(DEFAULT_MAXERR as f32).to_string().parse()?,
            verbose: verbose.unwrap_or(0) != 0,
        };
        found.push((operator, assertion));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_checked_output() {
        assert_eq!(checked_output("assert_eq(feat:expect,feat)"), Some("feat"));
        assert_eq!(checked_output("assert_eq(feat:expect,feat)[86]"), Some("feat"));
        assert_eq!(checked_output("assert_eq(a,b:expect,a,b)[3]"), Some("a,b"));
        assert_eq!(checked_output("assert_eq(x,y)"), None);
        assert_eq!(checked_output("relu(x)"), None);
        let custom = Assertion {
            var: "my_check".into(),
            maxerr: 1e-3,
            verbose: false,
        };
        assert_eq!(custom.output(), "my_check");
    }
}
