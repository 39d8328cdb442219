//! Engine options as plain values, each as `mge run` takes it: what a command
//! builds its network from, what `tune` tries, and what a child `mge` is given.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::engine::{AlgoSearch, Device, GraphLayout, NetworkOptions};
use crate::model::Method;

/// One engine option with its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineOption {
    Device(Device),
    CpuInplace,
    FastRun,
    Reproducible,
    WeightPreprocess,
    FusePreprocess,
    ConstShape,
    FakeFirst,
    NoSanityCheck,
    TensorRt,
    Threads(u64),
    /// The runtime's, not the network's: read before loading and written after the runs.
    FastRunCache(PathBuf),
    RecordCompSeq(i32),
    GraphOptLevel(i32),
    AsyncLevel(i32),
    Jit(i32),
    WorkspaceLimit(usize),
    Layout(GraphLayout),
    LayoutTransform(TransformTarget),
    FullRun,
    FastRunSharedBatchSize(u32),
    BinaryEqualBetweenBatch,
    /// The runtime's: read before loading and written after the runs.
    TensorRtCache(PathBuf),
    /// The runtime's: the key of the model's methods, as given (`HEX` or `@FILE`).
    ModelKey(String),
    /// The method of a bare encrypted model.
    ModelDecryption(Method),
    /// The runtime's: an extern operator library loaded before the model.
    COprLib(PathBuf),
    /// The cores the engine's worker threads are pinned to, in the order they take them.
    CpuCores(Vec<usize>),
}

/// The device `--layout-transform` optimizes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransformTarget {
    /// The device the model runs on.
    Auto,
    Cpu,
    Cuda,
}

/// `--layout`'s values.
pub const LAYOUTS: [(GraphLayout, &str); 7] = [
    (GraphLayout::Nchw44, "nchw44"),
    (GraphLayout::Nchw44Dot, "nchw44-dot"),
    (GraphLayout::Nchw88, "nchw88"),
    (GraphLayout::Nhwcd4, "nhwcd4"),
    (GraphLayout::Nchw4, "nchw4"),
    (GraphLayout::Nchw32, "nchw32"),
    (GraphLayout::Nchw64, "nchw64"),
];

pub fn layout_name(layout: GraphLayout) -> &'static str {
    LAYOUTS
        .iter()
        .find_map(|(known, name)| (*known == layout).then_some(*name))
        .expect("every layout has a name")
}

impl EngineOption {
    /// The option's flag, and its value where it takes one, exact (a path as it is).
    pub fn flag_and_value(&self) -> (&'static str, Option<OsString>) {
        let shown = |value: &dyn ToString| Some(OsString::from(value.to_string()));
        let path = |path: &PathBuf| Some(path.as_os_str().to_os_string());
        match self {
            EngineOption::Device(device) => ("--device", shown(device)),
            EngineOption::CpuInplace => ("--cpu-inplace", None),
            EngineOption::FastRun => ("--fast-run", None),
            EngineOption::Reproducible => ("--reproducible", None),
            EngineOption::WeightPreprocess => ("--weight-preprocess", None),
            EngineOption::FusePreprocess => ("--fuse-preprocess", None),
            EngineOption::ConstShape => ("--const-shape", None),
            EngineOption::FakeFirst => ("--fake-first", None),
            EngineOption::NoSanityCheck => ("--no-sanity-check", None),
            EngineOption::TensorRt => ("--tensorrt", None),
            EngineOption::Threads(n) => ("--threads", shown(n)),
            EngineOption::FastRunCache(file) => ("--fast-run-cache", path(file)),
            EngineOption::RecordCompSeq(level) => ("--record-comp-seq", shown(level)),
            EngineOption::GraphOptLevel(level) => ("--graph-opt-level", shown(level)),
            EngineOption::AsyncLevel(level) => ("--async-level", shown(level)),
            EngineOption::Jit(level) => ("--jit", shown(level)),
            EngineOption::WorkspaceLimit(bytes) => ("--workspace-limit", shown(bytes)),
            EngineOption::Layout(layout) => ("--layout", shown(&layout_name(*layout))),
            EngineOption::LayoutTransform(TransformTarget::Auto) => ("--layout-transform", None),
            EngineOption::LayoutTransform(TransformTarget::Cpu) => ("--layout-transform", shown(&"cpu")),
            EngineOption::LayoutTransform(TransformTarget::Cuda) => ("--layout-transform", shown(&"cuda")),
            EngineOption::FullRun => ("--full-run", None),
            EngineOption::FastRunSharedBatchSize(n) => ("--fast-run-shared-batch-size", shown(n)),
            EngineOption::BinaryEqualBetweenBatch => ("--binary-equal-between-batch", None),
            EngineOption::TensorRtCache(file) => ("--tensorrt-cache", path(file)),
            EngineOption::ModelKey(key) => ("--model-key", shown(key)),
            EngineOption::ModelDecryption(method) => ("--model-decryption", shown(method)),
            EngineOption::COprLib(library) => ("--c-opr-lib", path(library)),
            EngineOption::CpuCores(cores) => {
                let list: Vec<String> = cores.iter().map(usize::to_string).collect();
                ("--cpu-cores", shown(&list.join(",")))
            }
        }
    }

    /// The option on a command line, as words of text (for messages and
    /// files of text; `supervise::command` gives a child the exact value).
    pub fn args(&self) -> Vec<String> {
        let (flag, value) = self.flag_and_value();
        std::iter::once(flag.to_string())
            .chain(value.map(|value| value.to_string_lossy().into_owned()))
            .collect()
    }

    /// Sets the option in `network` (the runtime's options are left out).
    pub fn apply(&self, network: &mut NetworkOptions) {
        match *self {
            EngineOption::CpuCores(ref cores) => network.cpu_cores = Some(cores.clone()),
            EngineOption::Device(device) => network.device = device,
            EngineOption::CpuInplace => network.cpu_inplace = true,
            EngineOption::FastRun => network.algo_search = AlgoSearch::FastRun,
            EngineOption::Reproducible => network.reproducible = true,
            EngineOption::WeightPreprocess => network.weight_preprocess = true,
            EngineOption::FusePreprocess => network.fuse_preprocess = true,
            EngineOption::ConstShape => network.const_shape = true,
            EngineOption::FakeFirst => network.fake_first = true,
            EngineOption::NoSanityCheck => network.no_sanity_check = true,
            EngineOption::TensorRt => network.tensorrt = true,
            EngineOption::Threads(n) => network.threads = Some(n as usize),
            EngineOption::FastRunCache(_)
            | EngineOption::TensorRtCache(_)
            | EngineOption::ModelKey(_)
            | EngineOption::COprLib(_) => {}
            EngineOption::RecordCompSeq(level) => network.record_comp_seq = Some(level),
            EngineOption::GraphOptLevel(level) => network.graph_opt_level = Some(level),
            EngineOption::AsyncLevel(level) => network.async_level = Some(level),
            EngineOption::Jit(level) => network.jit_level = Some(level),
            EngineOption::WorkspaceLimit(bytes) => network.workspace_limit = Some(bytes),
            EngineOption::Layout(layout) => network.layout = Some(layout),
            EngineOption::LayoutTransform(_) => network.layout_transform = true,
            EngineOption::FullRun => network.algo_search = AlgoSearch::FullRun,
            EngineOption::FastRunSharedBatchSize(n) => network.shared_batch_size = Some(n),
            EngineOption::BinaryEqualBetweenBatch => network.binary_equal_between_batch = true,
            EngineOption::ModelDecryption(method) => network.bare_model_decryption = Some(method.name()),
        }
    }

    /// Two options that set one thing (or things that exclude each other):
    /// a candidate of `tune` never holds both, and an option the user gave
    /// keeps `tune` from trying any that clashes with it.
    pub fn clashes_with(&self, other: &EngineOption) -> bool {
        use EngineOption::*;
        let group = |option: &EngineOption| match option {
            // Kernels on the calling thread make the thread count moot.
            Threads(_) | CpuInplace => Some(0),
            FastRun | FullRun => Some(1),
            WeightPreprocess => Some(2),
            FusePreprocess => Some(3),
            // The first run is what comp-seq recording records.
            RecordCompSeq(_) | FakeFirst => Some(4),
            // The global transform chooses the layouts the static ones fix.
            LayoutTransform(_) | Layout(_) => Some(5),
            GraphOptLevel(_) => Some(6),
            _ => None,
        };
        group(self).is_some_and(|group_of_self| group(other) == Some(group_of_self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_each_option_as_run_takes_it() {
        assert_eq!(EngineOption::Threads(2).args(), ["--threads", "2"]);
        assert_eq!(EngineOption::Device(Device::Cuda(1)).args(), ["--device", "cuda:1"]);
        assert_eq!(
            EngineOption::Layout(GraphLayout::Nchw44Dot).args(),
            ["--layout", "nchw44-dot"]
        );
        assert_eq!(
            EngineOption::LayoutTransform(TransformTarget::Auto).args(),
            ["--layout-transform"]
        );
        assert_eq!(EngineOption::CpuCores(vec![0, 2]).args(), ["--cpu-cores", "0,2"]);
        assert!(EngineOption::FakeFirst.clashes_with(&EngineOption::RecordCompSeq(1)));
        assert!(!EngineOption::Reproducible.clashes_with(&EngineOption::Reproducible));
    }
}
