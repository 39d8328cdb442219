//! A profile as a Chrome trace (Trace Event Format, JSON object form), for
//! Perfetto and chrome://tracing: the tool's phases on one track, each engine
//! host thread and each comp node on tracks of their own, one complete event
//! per operator execution on each track that recorded it.

use std::path::Path;

use anyhow::Result;
use serde_json::{json, Value};

use crate::engine::Device;
use crate::output_files::write_atomically;
use crate::profile::{OperatorRun, Profile, Span};

const PID: u32 = 1;
const PHASE_TID: u32 = 1;

/// What the trace says about where it came from.
pub struct TraceSource {
    title: String,
    model: String,
    device: String,
    engine: String,
    profiled: &'static str,
    clock: &'static str,
}

impl TraceSource {
    /// A run of `model` here, by the engine of `version`.
    pub fn run(model: &Path, device: Device, version: (i32, i32, i32)) -> TraceSource {
        let (major, minor, patch) = version;
        TraceSource {
            title: format!("mge profile {}", model.display()),
            model: model.display().to_string(),
            device: device.to_string(),
            engine: format!("MegEngine Lite {major}.{minor}.{patch}"),
            profiled: "operators of every timed iteration; load and warm-up runs appear as phases only",
            clock: "microseconds since profiling began; engine host times placed by the instant its profiler started, device times by taking the first operator's device start in the first run as its host start",
        }
    }

    /// The execution an engine profile `file` written elsewhere holds, on `device`.
    pub fn recorded(file: &Path, device: &str) -> TraceSource {
        TraceSource {
            title: format!("mge profile --analyze {}", file.display()),
            model: file.display().to_string(),
            device: device.to_string(),
            engine: "the MegEngine that wrote the profile".to_string(),
            profiled: "the one execution the engine's profile file holds",
            clock: "microseconds since the engine's profiler was created; device times placed so that no operator starts on the device before its host start",
        }
    }
}

/// Trace timestamps are microseconds; nanoseconds are the finest worth keeping.
fn micros(value: f64) -> f64 {
    (value * 1e3).round() / 1e3
}

fn complete(name: &str, category: &str, tid: u32, start_us: f64, end_us: f64, args: Value) -> Value {
    let (start, end) = (micros(start_us), micros(end_us));
    json!({
        "name": name,
        "cat": category,
        "ph": "X",
        "pid": PID,
        "tid": tid,
        "ts": start,
        "dur": micros(end - start),
        "args": args,
    })
}

fn metadata(name: &str, tid: u32, args: Value) -> Value {
    json!({"name": name, "ph": "M", "pid": PID, "tid": tid, "args": args})
}

/// `CompNode("cpu0:0" from "cpu0:0")` names the comp node `cpu0:0`.
pub fn comp_node_name(track: &str) -> &str {
    track.split('"').nth(1).unwrap_or(track)
}

/// Tracks in order of first appearance: host threads, then comp nodes.
struct Tracks {
    names: Vec<String>,
}

impl Tracks {
    fn tid(&mut self, name: String) -> u32 {
        let index = match self.names.iter().position(|n| *n == name) {
            Some(index) => index,
            None => {
                self.names.push(name);
                self.names.len() - 1
            }
        };
        PHASE_TID + 1 + index as u32
    }
}

fn operator_args(operator: &OperatorRun, iteration: u64, span: &Span) -> Value {
    json!({
        "id": operator.id,
        "type": operator.op_type,
        "iteration": iteration,
        "in_shapes": operator.in_shapes,
        "out_shapes": operator.out_shapes,
        "dtype": operator.dtype,
        "flops": operator.flops,
        "memory_bytes": operator.memory_bytes,
        "kernel_us": span.kernel_us().map(micros),
    })
}

/// Writes the trace of `profile` to `trace`.
pub fn write_trace(trace: &Path, profile: &Profile, source: &TraceSource) -> Result<()> {
    write_atomically(trace, &serde_json::to_vec(&chrome_trace(profile, source))?)
}

pub fn chrome_trace(profile: &Profile, source: &TraceSource) -> Value {
    let mut tracks = Tracks { names: Vec::new() };
    let mut events = Vec::new();
    for phase in &profile.phases {
        events.push(complete(
            &phase.name,
            "mge",
            PHASE_TID,
            phase.start_us,
            phase.end_us,
            json!({"operators_recorded": phase.profiled}),
        ));
    }
    for iteration in &profile.iterations {
        for operator in &iteration.operators {
            let host = operator.host.iter().map(|span| (format!("host {}", span.track), span));
            let device = operator
                .device
                .iter()
                .map(|span| (format!("device {}", comp_node_name(&span.track)), span));
            for (track, span) in host.chain(device) {
                let tid = tracks.tid(track);
                events.push(complete(
                    &operator.name,
                    &operator.op_type,
                    tid,
                    span.start_us,
                    span.end_us,
                    operator_args(operator, iteration.number, span),
                ));
            }
        }
    }
    let mut header = vec![
        metadata("process_name", PHASE_TID, json!({"name": source.title})),
        metadata("thread_name", PHASE_TID, json!({"name": "mge phases"})),
        metadata("thread_sort_index", PHASE_TID, json!({"sort_index": 0})),
    ];
    for (index, name) in tracks.names.iter().enumerate() {
        let tid = PHASE_TID + 1 + index as u32;
        header.push(metadata("thread_name", tid, json!({"name": name})));
        header.push(metadata("thread_sort_index", tid, json!({"sort_index": tid})));
    }
    header.extend(events);
    json!({
        "traceEvents": header,
        "displayTimeUnit": "ms",
        "otherData": {
            "model": source.model,
            "device": source.device,
            "engine": source.engine,
            "tool": concat!("mge ", env!("CARGO_PKG_VERSION")),
            "profiled": match profile.separate {
                true => "operators of separate profiled runs of a weight-sharing copy of the network, after the timed runs; the timed runs, load and warm-up runs appear as phases only",
                false => source.profiled,
            },
            "clock": source.clock,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{PhaseSpan, ProfiledIteration};

    #[test]
    fn one_event_per_span_on_named_tracks() {
        let span = |track: &str, start_us: f64| Span {
            track: track.into(),
            start_us,
            kernel_start_us: Some(start_us + 1.0),
            end_us: start_us + 5.0,
        };
        let profile = Profile {
            phases: vec![PhaseSpan {
                name: "iteration 1".into(),
                start_us: 0.0,
                end_us: 20.0,
                profiled: true,
            }],
            iterations: vec![ProfiledIteration {
                number: 1,
                start_us: 0.0,
                end_us: 20.0,
                operators: vec![OperatorRun {
                    id: 7,
                    name: "conv[7]".into(),
                    op_type: "ConvolutionForward".into(),
                    host: vec![span("unnamed_thread(1)", 2.0)],
                    device: vec![span("CompNode(\"cpu0:0\" from \"cpu0:0\")", 2.5)],
                    in_shapes: vec![vec![1, 3]],
                    out_shapes: vec![vec![1, 8]],
                    dtype: Some("float32".into()),
                    memory_bytes: None,
                    flops: Some(48),
                }],
            }],
            separate: false,
        };
        let source = TraceSource::run(Path::new("m.mge"), Device::Cpu, (1, 13, 0));
        let trace = chrome_trace(&profile, &source);
        let events = trace["traceEvents"].as_array().unwrap();
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["mge phases", "host unnamed_thread(1)", "device cpu0:0"]);
        let conv: Vec<&Value> = events.iter().filter(|e| e["name"] == "conv[7]").collect();
        assert_eq!(conv.len(), 2);
        assert_eq!(conv[1]["cat"], "ConvolutionForward");
        assert_eq!(conv[1]["ts"], 2.5);
        assert_eq!(conv[1]["dur"], 5.0);
        assert_eq!(conv[1]["tid"], 3);
        assert_eq!(conv[1]["args"]["kernel_us"], 4.0);
        assert_eq!(conv[1]["args"]["flops"], 48);
        assert_eq!(conv[1]["args"]["dtype"], "float32");
    }
}
