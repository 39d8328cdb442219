//! The JSON file of MegEngine's graph profiler (`GraphProfiler::to_json_full`),
//! read into the typed records of one execution.
//!
//! `profiler.host[opr][thread]` holds `{start, kern, end}` in seconds of the
//! host's wall clock since the profiler was created; `profiler.device[opr][comp
//! node]` the same from the comp node's events, in seconds since the first
//! operator of the first execution started. `kern` is when the first kernel
//! started (-1 on the host when none ran). `opr_footprint[opr]` holds shapes,
//! bytes moved and FLOPs (`computation`, null where the engine cannot tell).
//! The engine overwrites these entries on each execution and never removes
//! one, so an operator that did not run keeps the times of an earlier run.

use std::collections::{BTreeMap, HashMap};

use anyhow::{Context, Result};
use serde::Deserialize;

use super::OperatorRun;
use crate::iodump::IndexVar;
use crate::model::{engine_dtype_name, EngineNames};

#[derive(Deserialize)]
pub struct EngineProfile {
    profiler: Profiler,
    graph_exec: GraphExec,
}

#[derive(Deserialize)]
struct Profiler {
    #[serde(default)]
    host: BTreeMap<String, BTreeMap<String, Times>>,
    #[serde(default)]
    device: BTreeMap<String, BTreeMap<String, Times>>,
    #[serde(default)]
    opr_footprint: HashMap<String, Footprint>,
}

#[derive(Deserialize, Clone, Copy)]
struct Times {
    start: f64,
    kern: f64,
    end: f64,
}

#[derive(Deserialize)]
struct GraphExec {
    comp_seq: Vec<String>,
    operator: HashMap<String, Operator>,
    #[serde(default)]
    var: HashMap<String, Var>,
}

#[derive(Deserialize)]
struct Operator {
    name: String,
    #[serde(rename = "type")]
    op_type: String,
    #[serde(default)]
    input: Vec<String>,
    #[serde(default)]
    output: Vec<String>,
}

#[derive(Deserialize)]
struct Var {
    name: String,
    mem_plan: Option<MemPlan>,
    #[serde(default)]
    flag: Vec<String>,
}

impl Var {
    /// A workspace or similar scratch var, whose content means nothing after its operator ran.
    fn is_scratch(&self) -> bool {
        self.flag.iter().any(|flag| flag == "VOLATILE_CONTENT")
    }
}

#[derive(Deserialize)]
struct MemPlan {
    layout: VarLayout,
}

#[derive(Deserialize, Clone)]
struct VarLayout {
    dtype: String,
    shape: Vec<usize>,
}

#[derive(Deserialize, Default)]
struct Footprint {
    #[serde(default)]
    in_shapes: Vec<Vec<usize>>,
    #[serde(default)]
    out_shapes: Vec<Vec<usize>>,
    memory: Option<u64>,
    computation: Option<u64>,
}

/// One operator's times on one track (a host thread or a comp node), in seconds
/// of that track's clock.
#[derive(Clone, Debug)]
pub struct RawSpan {
    pub track: String,
    pub start: f64,
    /// When the first kernel started, if one did.
    pub kernel_start: Option<f64>,
    pub end: f64,
}

impl EngineProfile {
    pub fn parse(bytes: &[u8]) -> Result<EngineProfile> {
        serde_json::from_slice(bytes).context("the engine's profile is not the JSON MegEngine's profiler writes")
    }

    /// Every operator with times, in execution order: the compiled sequence,
    /// then any other profiled operator by id; named as the model names them
    /// (the engine knew `names` under placeholders).
    pub fn operators(&self, names: &EngineNames) -> Result<Vec<OperatorRun<RawSpan>>> {
        let mut order: Vec<&str> = self.graph_exec.comp_seq.iter().map(String::as_str).collect();
        let mut others: Vec<&str> = self
            .profiler
            .host
            .keys()
            .chain(self.profiler.device.keys())
            .map(String::as_str)
            .filter(|id| !order.contains(id))
            .collect();
        others.sort_by_key(|id| id.parse::<u64>().unwrap_or(u64::MAX));
        others.dedup();
        order.extend(others);
        order
            .into_iter()
            .filter(|id| self.profiler.host.contains_key(*id) || self.profiler.device.contains_key(*id))
            .map(|id| self.operator(id, names))
            .collect()
    }

    /// The vars of the compiled sequence's operators, in execution order
    /// (without scratch vars such as workspaces), with the layout the engine
    /// planned for each: the entries of an io dump's index, named as `operators` names.
    pub fn vars(&self, names: &EngineNames) -> Result<Vec<IndexVar>> {
        let number = |id: &str| {
            id.parse::<u64>()
                .with_context(|| format!("the engine's profile has id '{id}', not a number"))
        };
        let var_name = |id: &str| {
            self.graph_exec
                .var
                .get(id)
                .map_or_else(|| format!("var{id}"), |var| names.restore(&var.name).into_owned())
        };
        let mut vars = Vec::new();
        for id in &self.graph_exec.comp_seq {
            let entry =
                self.graph_exec.operator.get(id).with_context(|| {
                    format!("the engine's profile runs operator {id}, which its graph does not list")
                })?;
            let inputs: Vec<String> = entry.input.iter().map(|var| var_name(var)).collect();
            for var in &entry.output {
                let described = self.graph_exec.var.get(var);
                if described.is_some_and(Var::is_scratch) {
                    continue;
                }
                let layout = described.and_then(|v| v.mem_plan.as_ref()).map(|plan| &plan.layout);
                vars.push(IndexVar {
                    name: var_name(var),
                    id: number(var)?,
                    operator: names.restore(&entry.name).into_owned(),
                    op_type: entry.op_type.clone(),
                    inputs: inputs.clone(),
                    shape: layout.map(|layout| layout.shape.clone()),
                    dtype: layout.map(|layout| engine_dtype_name(&layout.dtype)),
                    scale: None,
                    zero_point: None,
                    file: None,
                });
            }
        }
        Ok(vars)
    }

    /// The dtype of an operator's first output that is not scratch, as the
    /// engine laid it out.
    fn output_dtype(&self, entry: &Operator) -> Option<String> {
        let var = entry
            .output
            .iter()
            .filter_map(|id| self.graph_exec.var.get(id))
            .find(|var| !var.is_scratch())?;
        Some(engine_dtype_name(&var.mem_plan.as_ref()?.layout.dtype))
    }

    fn operator(&self, id: &str, names: &EngineNames) -> Result<OperatorRun<RawSpan>> {
        let entry = self
            .graph_exec
            .operator
            .get(id)
            .with_context(|| format!("the engine's profile times operator {id}, which its graph does not list"))?;
        let footprint = self.profiler.opr_footprint.get(id);
        let spans = |by_track: &BTreeMap<String, BTreeMap<String, Times>>| -> Vec<RawSpan> {
            by_track
                .get(id)
                .into_iter()
                .flatten()
                .map(|(track, times)| RawSpan {
                    track: track.clone(),
                    start: times.start,
                    kernel_start: (times.kern >= 0.0).then_some(times.kern),
                    end: times.end,
                })
                .collect()
        };
        Ok(OperatorRun {
            id: id
                .parse()
                .with_context(|| format!("the engine's profile has operator id '{id}', not a number"))?,
            name: names.restore(&entry.name).into_owned(),
            op_type: entry.op_type.clone(),
            host: spans(&self.profiler.host),
            device: spans(&self.profiler.device),
            in_shapes: footprint.map(|f| f.in_shapes.clone()).unwrap_or_default(),
            out_shapes: footprint.map(|f| f.out_shapes.clone()).unwrap_or_default(),
            dtype: self.output_dtype(entry),
            memory_bytes: footprint.and_then(|f| f.memory),
            flops: footprint.and_then(|f| f.computation),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of a real file (conv_float.mge), trimmed to two operators.
    const SAMPLE: &str = r#"{
      "profiler": {
        "host": {
          "4": {"unnamed_thread(1)": {"start": 0.002923, "kern": 0.002934, "end": 0.003447}},
          "51": {"unnamed_thread(1)": {"start": 0.003931, "kern": -1, "end": 0.003942}}
        },
        "device": {
          "4": {"CompNode(\"cpu0:0\" from \"cpu0:0\")": {"start": 3e-06, "kern": 1.4e-05, "end": 1.5e-05}}
        },
        "opr_footprint": {
          "4": {"param": {}, "in_shapes": [[1, 3, 16, 16], [8, 3, 3, 3]], "out_shapes": [[1, 8, 16, 16]],
                "memory": 9216, "computation": 55296}
        },
        "opr_internal_pf": {}
      },
      "graph_exec": {
        "comp_seq": ["51", "4"],
        "operator": {
          "4": {"name": "conv(data,w)[4]", "type": "ConvolutionForward", "id": "4"},
          "51": {"name": "callback(feat)[51]", "type": "ComputingGraphImpl::CallbackCaller", "id": "51"},
          "27": {"name": "data", "type": "Host2DeviceCopy", "id": "27"}
        },
        "var": {}, "mem_chunk": {}
      }
    }"#;

    #[test]
    fn reads_operators_in_execution_order_with_their_footprint() {
        let operators = EngineProfile::parse(SAMPLE.as_bytes())
            .unwrap()
            .operators(&EngineNames::none())
            .unwrap();
        let ids: Vec<u64> = operators.iter().map(|o| o.id).collect();
        assert_eq!(ids, [51, 4]);
        let conv = &operators[1];
        assert_eq!(conv.op_type, "ConvolutionForward");
        assert_eq!(conv.flops, Some(55296));
        assert_eq!(conv.out_shapes, [vec![1, 8, 16, 16]]);
        assert_eq!(conv.device[0].start, 3e-6);
        assert_eq!(conv.host[0].kernel_start, Some(0.002934));
        assert_eq!(operators[0].host[0].kernel_start, None);
        assert_eq!(operators[0].flops, None);
    }

    #[test]
    fn rejects_other_json() {
        assert!(EngineProfile::parse(b"{\"profiler\": {}}").is_err());
    }
}
