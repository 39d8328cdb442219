//! An io dump of a run the engine refused part way (its orderly error, not
//! a crash): the vars it dumped before, and where it stopped. The engine
//! writes no profile then, so the vars come from its own files: the binary
//! files' titles (as a raw dump's) or the text dump's `varN produced:` lines.

use std::collections::HashSet;

use super::index::{FailedAt, IndexVar};
use crate::model::GraphOperator;

/// Where the run stopped: of the graph's `operators` none of whose outputs
/// the engine `dumped`, the first in the graph's order that the engine's
/// `message` names by an output var; else by its type (`reshape` for a
/// `Reshape`) and reading a var that was dumped (the values reached it);
/// else reading one; else the first.
pub fn failed_at(operators: &[GraphOperator], dumped: &[IndexVar], message: &str) -> FailedAt {
    let dumped: HashSet<&str> = dumped.iter().map(|var| var.name.as_str()).collect();
    let words: HashSet<String> = message
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(str::to_lowercase)
        .collect();
    let rank = |operator: &GraphOperator| {
        let names_var = operator.outputs.iter().any(|var| names(message, var));
        let names_type = words.contains(&plain_type(&operator.op_type));
        let reads_dumped = operator.inputs.iter().any(|var| dumped.contains(var.as_str()));
        (names_var, names_type && reads_dumped, reads_dumped)
    };
    let not_run = operators
        .iter()
        .filter(|operator| !operator.outputs.is_empty())
        .filter(|operator| !operator.outputs.iter().any(|var| dumped.contains(var.as_str())));
    // The first of the highest rank: `max_by_key` keeps the last of equals.
    let found = not_run.rev().max_by_key(|operator| rank(operator));
    FailedAt {
        operator: found.map(|operator| operator.name.clone().unwrap_or_else(|| operator.outputs[0].clone())),
        op_type: found.map(|operator| operator.op_type.clone()),
        var: found.map(|operator| operator.outputs[0].clone()),
        message: message.to_string(),
    }
}

/// An operator type as a message words it: `ReshapeV1` as `reshape`,
/// `ConvolutionForward` as `convolution`.
fn plain_type(op_type: &str) -> String {
    let lower = op_type.to_lowercase();
    let unversioned = lower.trim_end_matches(|c: char| c.is_ascii_digit());
    let unversioned = match unversioned.len() < lower.len() {
        true => unversioned.strip_suffix('v').unwrap_or(unversioned),
        false => unversioned,
    };
    unversioned.strip_suffix("forward").unwrap_or(unversioned).to_string()
}

/// Whether `message` holds `name` as a whole name, not inside a longer one.
fn names(message: &str, name: &str) -> bool {
    let part_of_name = |c: char| c.is_alphanumeric() || "_.[]".contains(c);
    message.match_indices(name).any(|(at, _)| {
        let before = message[..at].chars().next_back();
        let after = message[at + name.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// The vars of the engine's text dump, in the order it wrote them, from
/// its `varN produced: name=NAME layout={...} owner_opr=OPERATOR{TYPE} oprM`
/// lines and the `[iK]varN` lines under each (the vars its operator read).
pub fn text_vars(text: &str) -> Vec<IndexVar> {
    let mut vars: Vec<IndexVar> = Vec::new();
    for line in text.lines() {
        if let Some(var) = produced(line) {
            vars.push(var);
        } else if let Some(input) = line
            .trim_start()
            .strip_prefix("[i")
            .and_then(|rest| rest.split_once("]var"))
        {
            let id = input.1.split(':').next().and_then(|id| id.parse::<u64>().ok());
            let name = id
                .and_then(|id| vars.iter().find(|var| var.id == id))
                .map(|var| var.name.clone());
            if let (Some(name), Some(var)) = (name, vars.last_mut()) {
                var.inputs.push(name);
            }
        }
    }
    vars
}

/// One `varN produced:` line, read by its labels (names hold spaces and braces).
fn produced(line: &str) -> Option<IndexVar> {
    let (id, rest) = line.strip_prefix("var")?.split_once(" produced: name=")?;
    let id = id.parse().ok()?;
    let (name, rest) = rest.rsplit_once(" layout={")?;
    let (_, owner) = rest.rsplit_once(" owner_opr=")?;
    let (owner, _) = owner.rsplit_once(" opr")?;
    let (operator, op_type) = owner.strip_suffix('}')?.rsplit_once('{')?;
    Some(IndexVar {
        name: name.to_string(),
        id,
        operator: operator.to_string(),
        op_type: op_type.to_string(),
        inputs: Vec::new(),
        shape: None,
        dtype: None,
        scale: None,
        zero_point: None,
        file: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operator(name: &str, op_type: &str, inputs: &[&str]) -> GraphOperator {
        GraphOperator {
            name: Some(name.to_string()),
            op_type: op_type.to_string(),
            inputs: inputs.iter().map(|input| input.to_string()).collect(),
            outputs: vec![format!("{name}:out")],
        }
    }

    #[test]
    fn finds_the_operator_where_the_run_stopped() {
        let text = "var7 produced: name=data layout={2(768) Float32} owner_opr=h2d[6]{Host2DeviceCopy} opr6\n deps:\n \
                    val: [1, ...]\nvar18 produced: name=MUL[0] x layout={2(1) Float32} owner_opr=MUL(a,b)[17]{Elemwise} opr17\n \
                    deps:\n  [i0]var7: [1, ...] s\n";
        let dumped = text_vars(text);
        assert_eq!(dumped.len(), 2);
        assert_eq!(
            (
                dumped[1].name.as_str(),
                dumped[1].operator.as_str(),
                dumped[1].op_type.as_str()
            ),
            ("MUL[0] x", "MUL(a,b)[17]", "Elemwise")
        );
        assert_eq!(dumped[1].inputs, ["data"]);
        let graph = [
            operator("data", "Host2DeviceCopy", &[]),
            GraphOperator {
                outputs: vec!["MUL[0] x".into()],
                ..operator("mul", "Elemwise", &["data"])
            },
            operator("rows", "Reshape", &["sum"]),
            operator("big", "ReshapeV1", &["MUL[0] x"]),
            operator("after", "Elemwise", &["big:out"]),
        ];
        let message = "number of elements do not match in reshape: src={2,4} dest={1,1024}";
        let found = failed_at(&graph, &dumped, message);
        assert_eq!(
            (found.operator.as_deref(), found.op_type.as_deref()),
            (Some("big"), Some("ReshapeV1"))
        );
        // A message that names a var names its operator; a name inside a longer one does not.
        let found = failed_at(&graph, &dumped, "bad value in 'after:out'");
        assert_eq!(found.var.as_deref(), Some("after:out"));
        let found = failed_at(&graph, &dumped, "bad value in after:out2");
        assert_eq!(found.operator.as_deref(), Some("big"));
        // An unread graph names no operator, only the message.
        assert_eq!(failed_at(&[], &dumped, message).operator, None);
    }
}
