//! Engine options, each defined once, here: its flag, help and heading as
//! `--help` lists it, how its value is read from words and written back as
//! words, what it sets in the network (or the runtime), what it clashes
//! with, and whether a Lite packed model may carry it. The command line (`cli`), `compare --a-options`, a pack's
//! `extra_info` and a child's command line are all read by these
//! definitions; `tune`, `packed_options` and the child command lines write options
//! by them.
//!
//! A new option is a variant of `EngineOption`, an entry of `DEFINITIONS`,
//! an arm of `EngineOption::value` and of `EngineOption::apply` (the compiler
//! points to each: the table's length, the matches), and an example in the
//! test at the end, which does not compile without it. A pack never carries
//! it until its definition says where (`in_device_info`, `in_options_info`,
//! `in_extra_info`).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::builder::{
    PathBufValueParser, PossibleValue, PossibleValuesParser, StringValueParser, TypedValueParser, ValueHint,
    ValueParser,
};
use clap::value_parser;

use crate::engine::{AlgoSearch, Device, GraphLayout, NetworkOptions};
use crate::model::Method;

/// Declares `EngineOption` and, from its one list of variants, `OptionKind`
/// (each variant without its value), `OptionKind::ALL` and `EngineOption::kind`.
macro_rules! engine_options {
    (
        $(#[$meta:meta])*
        pub enum EngineOption { $($(#[$doc:meta])* $kind:ident $(($value:ty))?,)* }
    ) => {
        $(#[$meta])*
        pub enum EngineOption { $($(#[$doc])* $kind $(($value))?,)* }

        /// An engine option without its value.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum OptionKind { $($kind,)* }

        impl OptionKind {
            /// Every kind, in the order `--help` lists them.
            pub const ALL: &'static [OptionKind] = &[$(OptionKind::$kind),*];
        }

        impl EngineOption {
            pub fn kind(&self) -> OptionKind {
                match self { $(EngineOption::$kind { .. } => OptionKind::$kind,)* }
            }
        }
    };
}

engine_options! {
    /// One engine option with its value.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum EngineOption {
        Device(Device),
        Threads(u64),
        CpuInplace,
        FastRun,
        Reproducible,
        /// The runtime's, not the network's: read before loading and written after the runs.
        FastRunCache(PathBuf),
        WeightPreprocess,
        FusePreprocess,
        ConstShape,
        FakeFirst,
        NoSanityCheck,
        RecordCompSeq(i32),
        GraphOptLevel(i32),
        AsyncLevel(i32),
        Jit(i32),
        WorkspaceLimit(usize),
        Layout(GraphLayout),
        LayoutTransform(TransformTarget),
        TensorRt,
        FullRun,
        FastRunSharedBatchSize(u32),
        BinaryEqualBetweenBatch,
        /// The runtime's: read before loading and written after the runs.
        TensorRtCache(PathBuf),
        /// The cores the engine's worker threads are pinned to, in the order they take them.
        CpuCores(Vec<usize>),
        /// The runtime's: the key of the model's methods, as given (`HEX` or `@FILE`).
        ModelKey(String),
        /// The method of a bare encrypted model.
        ModelDecryption(Method),
        /// The runtime's: an extern operator library loaded before the model.
        COprLib(PathBuf),
        /// The runtime's: fast-run neither reads nor keeps the algorithm cache.
        NoAlgoCache,
    }
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

/// The most CPU worker threads: more than the cores of any CPU the engine runs on.
pub const MAX_THREADS: u64 = 1024;

/// Where `--help` lists an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heading {
    Engine,
    FastRun,
    /// How a model file is opened: the options `info` takes too.
    Loading,
}

/// What an option sets, as `tune` sees it: two options that set one thing
/// (or things that exclude each other) clash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// Kernels on the calling thread make the thread count moot.
    Placement,
    AlgoSearch,
    WeightPreprocess,
    FusePreprocess,
    /// The first run is what comp-seq recording records.
    FirstRun,
    /// The global transform chooses the layouts the static ones fix.
    Layout,
    GraphOptLevel,
}

/// How the command line reads an option.
#[derive(Clone, Copy)]
pub enum Takes {
    /// No value: the flag is the option.
    Nothing(fn() -> EngineOption),
    /// A value, named `name` in `--help`, which `parser` reads into the option;
    /// `hint` tells shell completions what it is (a path).
    Value {
        name: &'static str,
        parser: fn() -> ValueParser,
        hint: ValueHint,
    },
}

/// Everything the command line knows of one kind of option.
#[derive(Clone, Copy)]
pub struct Definition {
    pub kind: OptionKind,
    /// `--flag`.
    pub flag: &'static str,
    pub help: &'static str,
    pub heading: Heading,
    pub takes: Takes,
    /// The value `--help` names as the default: given or not, the option at
    /// it is not among those given.
    pub default: Option<&'static str>,
    /// The value of the flag given alone, for a value that may be left out.
    pub value_when_alone: Option<&'static str>,
    /// Each time the flag is given is one more option.
    pub repeatable: bool,
    /// The option it cannot be given with, and the one it needs.
    pub conflicts_with: Option<OptionKind>,
    pub requires: Option<OptionKind>,
    /// What it sets, for `tune`.
    pub setting: Option<Setting>,
    /// Whether a Lite packed model may carry it, and where.
    pub in_pack: InPack,
}

/// Whether a Lite packed model may carry an option, and where. A model
/// chooses how the engine computes; it never names a file, a library or a
/// cache of the machine that runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InPack {
    /// In Lite's info, which the engine applies while it loads the model.
    LiteInfo(InfoKey),
    /// In `mge`'s options in the info's `extra_info`, which Lite stores and
    /// ignores and `mge` applies.
    ExtraInfo,
    /// Never, for this reason: a pack that carries it is refused.
    Never(&'static str),
}

/// Where Lite's info holds an option (`LITE_default`'s keys, MegEngine
/// 1.13's `default_parse.h`): `object.key`, holding `value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InfoKey {
    /// `device` or `options`.
    pub object: &'static str,
    pub key: &'static str,
    pub value: InfoValue,
}

/// How Lite's info holds an option's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoValue {
    /// A switch: on where the key holds this boolean.
    Switch(bool),
    /// The option's number, which Lite applies from `least` on (below it,
    /// Lite keeps its default).
    Number { least: i64 },
    /// `cuda:ID`: the id, with the device's `type` CUDA (a CPU is Lite's default).
    CudaId,
}

/// Any number, for `InfoValue::Number`.
const ANY_NUMBER: InfoValue = InfoValue::Number { least: i64::MIN };

/// Every engine option's definition, in the order of `OptionKind::ALL`: its
/// flag and help, how its value is read, its heading and what it clashes
/// with. The parsers are functions because clap builds its parsers at run
/// time; each makes `EngineOption`s.
pub static DEFINITIONS: [Definition; OptionKind::ALL.len()] = {
    use EngineOption as O;
    use Heading::{FastRun, Loading};
    use OptionKind as K;
    [
        valued(
            K::Device,
            "--device",
            "DEVICE",
            || parser(parse_device),
            "Device to run on: cpu, cuda or cuda:ID",
        )
        .in_device_info("device_id", InfoValue::CudaId)
        .default("cpu"),
        valued(
            K::Threads,
            "--threads",
            "N",
            || parser(value_parser!(u64).range(1..=MAX_THREADS).map(O::Threads)),
            "CPU worker threads",
        )
        // Lite keeps its one thread for fewer.
        .in_device_info("number_threads", InfoValue::Number { least: 2 })
        .setting(Setting::Placement),
        switch(
            K::CpuInplace,
            "--cpu-inplace",
            || O::CpuInplace,
            "Run CPU kernels on the calling thread",
        )
        .in_device_info("enable_inplace_model", InfoValue::Switch(true))
        .setting(Setting::Placement),
        switch(
            K::FastRun,
            "--fast-run",
            || O::FastRun,
            "Pick each operator's algorithm by profiling the optimized ones on the first run (load_and_run's fast-run)",
        )
        .in_extra_info()
        .heading(FastRun)
        .setting(Setting::AlgoSearch),
        switch(
            K::Reproducible,
            "--reproducible",
            || O::Reproducible,
            "Use only reproducible algorithms",
        )
        .in_extra_info()
        .heading(FastRun),
        path(
            K::FastRunCache,
            "--fast-run-cache",
            "FILE",
            || parser(PathBufValueParser::new().map(O::FastRunCache)),
            "The fast-run algorithm cache: alone, only read (nothing is profiled; the heuristic picks what it \
            lacks); with --fast-run or --full-run, read and updated with what was profiled",
        )
        .heading(FastRun),
        switch(
            K::WeightPreprocess,
            "--weight-preprocess",
            || O::WeightPreprocess,
            "Preprocess constant weights once at load",
        )
        .in_options_info("weight_preprocess", InfoValue::Switch(true))
        .setting(Setting::WeightPreprocess),
        switch(
            K::FusePreprocess,
            "--fuse-preprocess",
            || O::FusePreprocess,
            "Fuse preprocessing patterns (astype + pad_channel + dimshuffle)",
        )
        .in_options_info("fuse_preprocess", InfoValue::Switch(true))
        .setting(Setting::FusePreprocess),
        switch(
            K::ConstShape,
            "--const-shape",
            || O::ConstShape,
            "Assume input shapes never change (saves memory)",
        )
        .in_options_info("const_shape", InfoValue::Switch(true)),
        switch(
            K::FakeFirst,
            "--fake-first",
            || O::FakeFirst,
            "Make the first execution only allocate (an extra untimed run)",
        )
        .in_options_info("fake_next_exec", InfoValue::Switch(true))
        .setting(Setting::FirstRun),
        switch(
            K::NoSanityCheck,
            "--no-sanity-check",
            || O::NoSanityCheck,
            "Skip the var sanity check of the first run",
        )
        .in_options_info("var_sanity_check_first_run", InfoValue::Switch(false)),
        valued(
            K::RecordCompSeq,
            "--record-comp-seq",
            "LEVEL",
            || parser(value_parser!(i32).range(0..=2).map(O::RecordCompSeq)),
            "Record the kernel sequence on the first run: 1, or 2 to also free extra memory",
        )
        .in_options_info("comp_node_seq_record_level", ANY_NUMBER)
        .setting(Setting::FirstRun),
        valued(
            K::GraphOptLevel,
            "--graph-opt-level",
            "N",
            || parser(value_parser!(i32).range(0..=3).map(O::GraphOptLevel)),
            "Graph optimization level (0 to 3)",
        )
        .in_options_info("graph_opt_level", ANY_NUMBER)
        .setting(Setting::GraphOptLevel),
        valued(
            K::AsyncLevel,
            "--async-level",
            "N",
            || parser(value_parser!(i32).map(O::AsyncLevel)),
            "Asynchronous dispatch level",
        )
        .in_options_info("async_exec_level", ANY_NUMBER),
        valued(
            K::Jit,
            "--jit",
            "LEVEL",
            || parser(value_parser!(i32).range(0..=2).map(O::Jit)),
            "JIT level (CUDA only): 1 elemwise, 2 also reductions",
        )
        .in_options_info("jit_level", ANY_NUMBER),
        valued(
            K::WorkspaceLimit,
            "--workspace-limit",
            "BYTES",
            || parser(|text: &str| text.parse().map(O::WorkspaceLimit)),
            "Workspace limit for operators with several algorithms",
        )
        .in_extra_info(),
        valued(
            K::Layout,
            "--layout",
            "LAYOUT",
            || parser(layout_parser()),
            "Convert the graph to this memory layout",
        )
        .in_extra_info()
        .setting(Setting::Layout),
        valued(
            K::LayoutTransform,
            "--layout-transform",
            "TARGET",
            || parser(transform_target_parser()),
            "Let the engine choose the best layout for the whole graph",
        )
        .in_extra_info()
        .value_when_alone("auto")
        .setting(Setting::Layout),
        switch(
            K::TensorRt,
            "--tensorrt",
            || O::TensorRt,
            "Run through TensorRT (CUDA only)",
        )
        .in_device_info("use_tensorrt", InfoValue::Switch(true)),
        switch(
            K::FullRun,
            "--full-run",
            || O::FullRun,
            "Profile every algorithm of each operator, not only the optimized ones (load_and_run's full-run)",
        )
        .in_extra_info()
        .heading(FastRun)
        .conflicts_with(K::FastRun)
        .setting(Setting::AlgoSearch),
        valued(
            K::FastRunSharedBatchSize,
            "--fast-run-shared-batch-size",
            "N",
            || parser(value_parser!(u32).range(1..).map(O::FastRunSharedBatchSize)),
            "Profile with this batch size whatever the model's (fast-run's shared batch size)",
        )
        .in_extra_info()
        .heading(FastRun),
        switch(
            K::BinaryEqualBetweenBatch,
            "--binary-equal-between-batch",
            || O::BinaryEqualBetweenBatch,
            "Only pick algorithms whose outputs are binary equal between batches (implies reproducible algorithms)",
        )
        .in_extra_info()
        .heading(FastRun),
        path(
            K::TensorRtCache,
            "--tensorrt-cache",
            "FILE",
            || parser(PathBufValueParser::new().map(O::TensorRtCache)),
            "Read and update TensorRT's engine cache in FILE (with --tensorrt)",
        )
        .requires(K::TensorRt),
        valued(
            K::CpuCores,
            "--cpu-cores",
            "LIST",
            || parser(|text: &str| parse_core_list(text).map(O::CpuCores)),
            "Pin the engine's CPU worker threads to these cores, one core per thread in turn (e.g. 0,1 or 0-3)",
        )
        .never_packed("names cores of this machine"),
        valued(
            K::ModelKey,
            "--model-key",
            "HEX|@FILE",
            || parser(StringValueParser::new().map(O::ModelKey)),
            "The key of an encrypted model, for the methods it names: hex digits, or @FILE holding the raw key",
        )
        .never_packed("is the key that unlocks it")
        .heading(Loading),
        valued(
            K::ModelDecryption,
            "--model-decryption",
            "METHOD",
            || parser(decryption_parser()),
            "The method a bare encrypted model was encrypted with (a packed model names its own)",
        )
        .never_packed("is for a bare encrypted model; a pack names its own methods")
        .heading(Loading),
        path(
            K::COprLib,
            "--c-opr-lib",
            "PATH",
            || parser(PathBufValueParser::new().map(O::COprLib)),
            "Load an extern C operator library (MegEngine's extern_c_opr.h) before the model; repeatable",
        )
        .never_packed("names a library of this machine to load")
        .heading(Loading)
        .repeatable(),
        switch(
            K::NoAlgoCache,
            "--no-algo-cache",
            || O::NoAlgoCache,
            "Fast-run neither loads nor keeps the algorithm cache of the cache folder (also MGE_NO_ALGO_CACHE=1): it profiles every time",
        )
        .heading(FastRun),
    ]
};

// A kind finds its definition by its number: the table is in the order of
// `OptionKind::ALL`, or the crate does not compile.
const _: () = {
    let mut index = 0;
    while index < DEFINITIONS.len() {
        assert!(
            DEFINITIONS[index].kind as usize == index,
            "DEFINITIONS is not in the order of OptionKind::ALL"
        );
        index += 1;
    }
};

/// A flag that is the option `option` makes.
const fn switch(kind: OptionKind, flag: &'static str, option: fn() -> EngineOption, help: &'static str) -> Definition {
    Definition::new(kind, flag, help, Takes::Nothing(option))
}

/// A flag with a value named `name`, which `parser` reads.
const fn valued(
    kind: OptionKind,
    flag: &'static str,
    name: &'static str,
    parser: fn() -> ValueParser,
    help: &'static str,
) -> Definition {
    let hint = ValueHint::Unknown;
    Definition::new(kind, flag, help, Takes::Value { name, parser, hint })
}

/// A flag with a path named `name`, which `parser` reads.
const fn path(
    kind: OptionKind,
    flag: &'static str,
    name: &'static str,
    parser: fn() -> ValueParser,
    help: &'static str,
) -> Definition {
    let hint = ValueHint::AnyPath;
    Definition::new(kind, flag, help, Takes::Value { name, parser, hint }).never_packed(NAMES_A_FILE)
}

/// Why a pack never carries an option whose value is a path.
const NAMES_A_FILE: &str = "names a file of this machine";

/// A parser that makes engine options (`get_many::<EngineOption>` reads them).
fn parser(parser: impl TypedValueParser<Value = EngineOption>) -> ValueParser {
    ValueParser::new(parser)
}

impl Definition {
    const fn new(kind: OptionKind, flag: &'static str, help: &'static str, takes: Takes) -> Definition {
        Definition {
            kind,
            flag,
            help,
            heading: Heading::Engine,
            takes,
            default: None,
            value_when_alone: None,
            repeatable: false,
            conflicts_with: None,
            requires: None,
            setting: None,
            in_pack: InPack::Never(NOT_A_MODEL_S),
        }
    }

    const fn heading(self, heading: Heading) -> Definition {
        Definition { heading, ..self }
    }

    const fn setting(self, setting: Setting) -> Definition {
        Definition {
            setting: Some(setting),
            ..self
        }
    }

    const fn default(self, value: &'static str) -> Definition {
        Definition {
            default: Some(value),
            ..self
        }
    }

    const fn value_when_alone(self, value: &'static str) -> Definition {
        Definition {
            value_when_alone: Some(value),
            ..self
        }
    }

    const fn repeatable(self) -> Definition {
        Definition {
            repeatable: true,
            ..self
        }
    }

    const fn conflicts_with(self, kind: OptionKind) -> Definition {
        Definition {
            conflicts_with: Some(kind),
            ..self
        }
    }

    const fn requires(self, kind: OptionKind) -> Definition {
        Definition {
            requires: Some(kind),
            ..self
        }
    }

    /// Lite's info holds it in its `device` object.
    const fn in_device_info(self, key: &'static str, value: InfoValue) -> Definition {
        let in_pack = InPack::LiteInfo(InfoKey {
            object: "device",
            key,
            value,
        });
        Definition { in_pack, ..self }
    }

    /// Lite's info holds it in its `options` object.
    const fn in_options_info(self, key: &'static str, value: InfoValue) -> Definition {
        let in_pack = InPack::LiteInfo(InfoKey {
            object: "options",
            key,
            value,
        });
        Definition { in_pack, ..self }
    }

    /// A pack carries it in `mge`'s part of the info's `extra_info`.
    const fn in_extra_info(self) -> Definition {
        Definition {
            in_pack: InPack::ExtraInfo,
            ..self
        }
    }

    /// A pack never carries it, for `reason`.
    const fn never_packed(self, reason: &'static str) -> Definition {
        Definition {
            in_pack: InPack::Never(reason),
            ..self
        }
    }
}

/// Why a pack never carries an option that says nothing else: it is not one
/// of those that choose how the engine computes.
const NOT_A_MODEL_S: &str = "is not one a model chooses";

impl Definition {
    /// The flag without its `--`: the option's name on the command line.
    pub fn name(&self) -> &'static str {
        self.flag.strip_prefix("--").unwrap_or(self.flag)
    }
}

impl OptionKind {
    pub fn definition(self) -> &'static Definition {
        &DEFINITIONS[self as usize]
    }
}

/// What the runtime takes besides the network's options: the caches it reads
/// before loading and updates after the runs, the model's key, and the extern
/// operators loaded before the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeOptions {
    pub fast_run_cache: Option<PathBuf>,
    pub tensorrt_cache: Option<PathBuf>,
    /// `--model-key` as given: hex digits or `@FILE`.
    pub model_key: Option<String>,
    pub c_opr_libs: Vec<PathBuf>,
    /// `--no-algo-cache`.
    pub no_algo_cache: bool,
}

/// Whether runs with options `a` and with `b` run alike in what their CPU
/// time cannot see: both on the CPU, with the same worker threads and the
/// same `--cpu-inplace`. Then the CPU time of a run compares their work; a
/// device's kernels, or work spread over more threads, change the wait
/// without changing the CPU time alike.
pub fn cpu_time_fair(a: &[EngineOption], b: &[EngineOption]) -> bool {
    let parallelism = |options: &[EngineOption]| {
        let on_cpu = options.iter().all(|option| match option {
            EngineOption::Device(device) => *device == Device::Cpu,
            EngineOption::TensorRt => false,
            _ => true,
        });
        let threads = options.iter().rev().find_map(|option| match option {
            EngineOption::Threads(n) => Some(*n),
            _ => None,
        });
        let inplace = options.contains(&EngineOption::CpuInplace);
        on_cpu.then_some((threads.unwrap_or(1), inplace))
    };
    let a = parallelism(a);
    a.is_some() && a == parallelism(b)
}

impl EngineOption {
    /// The option's value as the command line writes it (a path exact); none
    /// where the flag alone is the option.
    fn value(&self) -> Option<OsString> {
        use EngineOption as O;
        let text = |value: &dyn ToString| Some(OsString::from(value.to_string()));
        let path = |path: &PathBuf| Some(path.clone().into_os_string());
        match self {
            O::Device(device) => text(device),
            O::Threads(n) => text(n),
            O::FastRunCache(file) | O::TensorRtCache(file) | O::COprLib(file) => path(file),
            O::RecordCompSeq(level) | O::GraphOptLevel(level) | O::AsyncLevel(level) | O::Jit(level) => text(level),
            O::WorkspaceLimit(bytes) => text(bytes),
            O::Layout(layout) => text(&layout_name(*layout)),
            // The flag alone stands for the device the model runs on.
            O::LayoutTransform(TransformTarget::Auto) => None,
            O::LayoutTransform(target) => text(&target.name()),
            O::FastRunSharedBatchSize(n) => text(n),
            O::CpuCores(cores) => text(&cores.iter().map(usize::to_string).collect::<Vec<_>>().join(",")),
            O::ModelKey(key) => text(key),
            O::ModelDecryption(method) => text(method),
            O::CpuInplace
            | O::FastRun
            | O::Reproducible
            | O::WeightPreprocess
            | O::FusePreprocess
            | O::ConstShape
            | O::FakeFirst
            | O::NoSanityCheck
            | O::TensorRt
            | O::FullRun
            | O::BinaryEqualBetweenBatch
            | O::NoAlgoCache => None,
        }
    }

    /// The option's flag, and its value where it takes one, exact (a path as it is).
    pub fn flag_and_value(&self) -> (&'static str, Option<OsString>) {
        (self.kind().definition().flag, self.value())
    }

    /// The option on a command line, as words of text (for messages and
    /// files of text; `mge_command` gives a child the exact value).
    /// A value that starts with `-` joins its flag (`--async-level=-1`),
    /// where it cannot be taken for an option.
    pub fn args(&self) -> Vec<String> {
        let (flag, value) = self.flag_and_value();
        match value.map(|value| value.to_string_lossy().into_owned()) {
            Some(value) if value.starts_with('-') => vec![format!("{flag}={value}")],
            Some(value) => vec![flag.to_string(), value],
            None => vec![flag.to_string()],
        }
    }

    /// The option as words for a message or a report, which get shared (logs,
    /// bug reports): as `args`, but a key given in hex shows as `(a key)`.
    pub fn shown(&self) -> Vec<String> {
        match self {
            EngineOption::ModelKey(key) if !key.starts_with('@') => {
                vec![self.kind().definition().flag.to_string(), "(a key)".to_string()]
            }
            _ => self.args(),
        }
    }

    /// Sets what the option sets: in the network, or in what the runtime takes.
    pub fn apply(&self, network: &mut NetworkOptions, runtime: &mut RuntimeOptions) {
        use EngineOption as O;
        match *self {
            O::Device(device) => network.device = device,
            O::Threads(n) => network.threads = Some(n as usize),
            O::CpuInplace => network.cpu_inplace = true,
            O::FastRun => network.algo_search = AlgoSearch::FastRun,
            O::Reproducible => network.reproducible = true,
            O::FastRunCache(ref file) => runtime.fast_run_cache = Some(file.clone()),
            O::WeightPreprocess => network.weight_preprocess = true,
            O::FusePreprocess => network.fuse_preprocess = true,
            O::ConstShape => network.const_shape = true,
            O::FakeFirst => network.fake_first = true,
            O::NoSanityCheck => network.no_sanity_check = true,
            O::RecordCompSeq(level) => network.record_comp_seq = Some(level),
            O::GraphOptLevel(level) => network.graph_opt_level = Some(level),
            O::AsyncLevel(level) => network.async_level = Some(level),
            O::Jit(level) => network.jit_level = Some(level),
            O::WorkspaceLimit(bytes) => network.workspace_limit = Some(bytes),
            O::Layout(layout) => network.layout = Some(layout),
            O::LayoutTransform(_) => network.layout_transform = true,
            O::TensorRt => network.tensorrt = true,
            O::FullRun => network.algo_search = AlgoSearch::FullRun,
            O::FastRunSharedBatchSize(n) => network.shared_batch_size = Some(n),
            O::BinaryEqualBetweenBatch => network.binary_equal_between_batch = true,
            O::TensorRtCache(ref file) => runtime.tensorrt_cache = Some(file.clone()),
            O::CpuCores(ref cores) => network.cpu_cores = Some(cores.clone()),
            O::ModelKey(ref key) => runtime.model_key = Some(key.clone()),
            O::ModelDecryption(method) => network.bare_model_decryption = Some(method.name()),
            O::COprLib(ref library) => runtime.c_opr_libs.push(library.clone()),
            O::NoAlgoCache => runtime.no_algo_cache = true,
        }
    }

    /// Two options that set one thing (or things that exclude each other):
    /// a candidate of `tune` never holds both, and an option the user gave
    /// keeps `tune` from trying any that clashes with it.
    pub fn clashes_with(&self, other: &EngineOption) -> bool {
        let setting = |option: &EngineOption| option.kind().definition().setting;
        setting(self).is_some_and(|setting_of_self| setting(other) == Some(setting_of_self))
    }
}

/// An algorithm attribute the engine's chooser requires (`with`) or leaves out
/// (`without`) because an option told it to: the option, whether a network
/// was given it, and what that option does to the choice.
struct AttributeRule {
    attribute: &'static str,
    excluded: bool,
    option: &'static str,
    given: fn(&NetworkOptions) -> bool,
    does: &'static str,
}

/// As the engine's `extract_algo_attribute` (src/rdnn/impl/algo_chooser.cpp) turns
/// the strategy and the fast-run settings into attributes.
const ATTRIBUTE_RULES: [AttributeRule; 5] = [
    AttributeRule {
        attribute: "NAIVE",
        excluded: true,
        option: "--fast-run",
        given: |network| network.algo_search == AlgoSearch::FastRun,
        does: "profiles only the optimized algorithms, not the naive ones, which --full-run profiles too",
    },
    AttributeRule {
        attribute: "REPRODUCIBLE",
        excluded: false,
        option: "--reproducible",
        given: |network| network.reproducible,
        does: "takes reproducible algorithms only",
    },
    AttributeRule {
        attribute: "REPRODUCIBLE",
        excluded: false,
        option: "--binary-equal-between-batch",
        given: |network| network.binary_equal_between_batch,
        does: "takes reproducible algorithms only, whose outputs do not depend on the batch",
    },
    AttributeRule {
        attribute: "ACCURACY_DEPEND_ON_BATCH",
        excluded: true,
        option: "--binary-equal-between-batch",
        given: |network| network.binary_equal_between_batch,
        does: "takes reproducible algorithms only, whose outputs do not depend on the batch",
    },
    AttributeRule {
        attribute: "USABLE_DEPEND_ON_SHAPE",
        excluded: true,
        option: "--fast-run-shared-batch-size",
        given: |network| network.shared_batch_size.is_some(),
        does: "takes only algorithms usable at every batch size",
    },
];

/// Where the engine found no algorithm that the options of `network` allow
/// (its words in `engine_text`: `require algorithm with attribute(P) and
/// without attribute(N), but ...`, or `no usable OPERATOR algorithm ...
/// without attribute(N)`), what to put before its message: the options that
/// asked for those attributes, what each does, and the operator where the
/// engine's words name it. `None` for any other failure.
pub fn algorithm_refusal(engine_text: &str, network: &NetworkOptions) -> Option<String> {
    let (required, excluded) = required_attributes(engine_text)?;
    let mut blamed: Vec<&AttributeRule> = Vec::new();
    for rule in ATTRIBUTE_RULES.iter().filter(|rule| (rule.given)(network)) {
        let named = match rule.excluded {
            true => &excluded,
            false => &required,
        };
        if named.contains(&rule.attribute) && !blamed.iter().any(|other| other.option == rule.option) {
            blamed.push(rule);
        }
    }
    if blamed.is_empty() {
        return None;
    }
    let options: Vec<&str> = blamed.iter().map(|rule| rule.option).collect();
    let operator = chooser_operator(engine_text).map_or(String::new(), |name| format!(" for a {name}"));
    let does: Vec<String> = blamed
        .iter()
        .map(|rule| format!("{} {}", rule.option, rule.does))
        .collect();
    Some(format!(
        "{} left the engine no algorithm{operator} ({}): run without {}; the engine said",
        options.join(" and "),
        does.join("; "),
        match options.len() {
            1 => "it",
            _ => "them",
        }
    ))
}

/// The attributes the engine's chooser asked for, and those it left out, from
/// its clause that says so (the attributes of the algorithm it got, after it,
/// are not asked for; `without attribute(` holds no `with attribute(`).
fn required_attributes(engine_text: &str) -> Option<(Vec<&str>, Vec<&str>)> {
    let clause = match engine_text.find("require algorithm ") {
        Some(start) => {
            let clause = &engine_text[start..];
            clause.split(", but").next().unwrap_or(clause)
        }
        None => {
            let clause = &engine_text[engine_text.find("no usable ")?..];
            clause.split(" or could not meet").next().unwrap_or(clause)
        }
    };
    let listed = |marker: &str| -> Vec<&str> {
        clause
            .match_indices(marker)
            .filter_map(|(at, _)| clause[at + marker.len()..].split(')').next())
            .flat_map(|list| list.split('|').map(str::trim))
            .collect()
    };
    let (required, excluded) = (listed("with attribute("), listed("without attribute("));
    (!excluded.is_empty() || !required.is_empty()).then_some((required, excluded))
}

/// The engine's operator whose algorithm was chosen: the type its chooser's
/// frame in the backtrace names (`AlgoChooser<megdnn::ConvolutionForward>`,
/// mangled), or its `no usable OPERATOR algorithm`.
fn chooser_operator(engine_text: &str) -> Option<&str> {
    const FRAME: &str = "AlgoChooserIN6megdnn";
    if let Some(at) = engine_text.find(FRAME) {
        let rest = &engine_text[at + FRAME.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let length: usize = rest[..digits].parse().ok()?;
        return rest.get(digits..digits + length);
    }
    let rest = &engine_text[engine_text.find("no usable ")? + "no usable ".len()..];
    rest.split_once(" algorithm").map(|(name, _)| name)
}

impl TransformTarget {
    const ALL: [TransformTarget; 3] = [TransformTarget::Auto, TransformTarget::Cpu, TransformTarget::Cuda];

    pub fn name(self) -> &'static str {
        match self {
            TransformTarget::Auto => "auto",
            TransformTarget::Cpu => "cpu",
            TransformTarget::Cuda => "cuda",
        }
    }
}

/// `--layout`: one of the names the engine's layouts go by.
fn layout_parser() -> impl TypedValueParser<Value = EngineOption> {
    PossibleValuesParser::new(LAYOUTS.map(|(_, name)| name)).map(|name| {
        let layout = LAYOUTS.into_iter().find(|(_, known)| *known == name);
        EngineOption::Layout(layout.expect("one of the possible values").0)
    })
}

/// `--model-decryption`: one of the methods Lite registers.
fn decryption_parser() -> impl TypedValueParser<Value = EngineOption> {
    PossibleValuesParser::new(Method::ALL.map(Method::name))
        .map(|name| EngineOption::ModelDecryption(Method::from_name(&name).expect("one of the possible values")))
}

/// `--layout-transform`'s values, `auto` explained.
fn transform_target_parser() -> impl TypedValueParser<Value = EngineOption> {
    let values = TransformTarget::ALL.map(|target| match target {
        TransformTarget::Auto => PossibleValue::new(target.name()).help("The device the model runs on"),
        _ => PossibleValue::new(target.name()),
    });
    PossibleValuesParser::new(values).map(|name| {
        let target = TransformTarget::ALL.into_iter().find(|target| target.name() == name);
        EngineOption::LayoutTransform(target.expect("one of the possible values"))
    })
}

/// `--device`: `cpu`, `cuda` or `cuda:ID`.
fn parse_device(text: &str) -> Result<EngineOption, String> {
    let device = match text.split_once(':') {
        None if text == "cpu" => Device::Cpu,
        None if text == "cuda" => Device::Cuda(0),
        Some(("cuda", id)) => Device::Cuda(id.parse().map_err(|_| format!("'{id}' is not a device number"))?),
        _ => return Err("expected cpu, cuda or cuda:ID".to_string()),
    };
    Ok(EngineOption::Device(device))
}

/// `--cpu-cores`: `0,1`, `2-3`, `0,2-3`: numbers and ranges, as `taskset -c` reads them.
fn parse_core_list(text: &str) -> Result<Vec<usize>, String> {
    let bad = || format!("'{text}' is not a list of cores such as 0,1 or 0-3");
    let mut cores = Vec::new();
    for part in text.split(',') {
        let number = |n: &str| n.trim().parse::<usize>().map_err(|_| bad());
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last) = (number(first)?, number(last)?);
                if first > last {
                    return Err(bad());
                }
                cores.extend(first..=last);
            }
            None => cores.push(number(part)?),
        }
    }
    Ok(cores)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cli::parse_engine_words;

    pub(crate) type Effect = fn(&mut NetworkOptions, &mut RuntimeOptions);

    /// An option of each kind, and what it should set. No wildcard: a new
    /// kind does not compile until it is listed here.
    pub(crate) fn example(kind: OptionKind) -> (EngineOption, Effect) {
        use EngineOption as O;
        use OptionKind as K;
        match kind {
            K::Device => (O::Device(Device::Cuda(1)), |n, _| n.device = Device::Cuda(1)),
            K::Threads => (O::Threads(3), |n, _| n.threads = Some(3)),
            K::CpuInplace => (O::CpuInplace, |n, _| n.cpu_inplace = true),
            K::FastRun => (O::FastRun, |n, _| n.algo_search = AlgoSearch::FastRun),
            K::Reproducible => (O::Reproducible, |n, _| n.reproducible = true),
            K::FastRunCache => (O::FastRunCache("algo.cache".into()), |_, r| {
                r.fast_run_cache = Some("algo.cache".into())
            }),
            K::WeightPreprocess => (O::WeightPreprocess, |n, _| n.weight_preprocess = true),
            K::FusePreprocess => (O::FusePreprocess, |n, _| n.fuse_preprocess = true),
            K::ConstShape => (O::ConstShape, |n, _| n.const_shape = true),
            K::FakeFirst => (O::FakeFirst, |n, _| n.fake_first = true),
            K::NoSanityCheck => (O::NoSanityCheck, |n, _| n.no_sanity_check = true),
            K::RecordCompSeq => (O::RecordCompSeq(2), |n, _| n.record_comp_seq = Some(2)),
            K::GraphOptLevel => (O::GraphOptLevel(0), |n, _| n.graph_opt_level = Some(0)),
            K::AsyncLevel => (O::AsyncLevel(-1), |n, _| n.async_level = Some(-1)),
            K::Jit => (O::Jit(1), |n, _| n.jit_level = Some(1)),
            K::WorkspaceLimit => (O::WorkspaceLimit(1 << 20), |n, _| n.workspace_limit = Some(1 << 20)),
            K::Layout => (O::Layout(GraphLayout::Nchw44Dot), |n, _| {
                n.layout = Some(GraphLayout::Nchw44Dot)
            }),
            K::LayoutTransform => (O::LayoutTransform(TransformTarget::Cuda), |n, _| {
                n.layout_transform = true
            }),
            K::TensorRt => (O::TensorRt, |n, _| n.tensorrt = true),
            K::FullRun => (O::FullRun, |n, _| n.algo_search = AlgoSearch::FullRun),
            K::FastRunSharedBatchSize => (O::FastRunSharedBatchSize(8), |n, _| n.shared_batch_size = Some(8)),
            K::BinaryEqualBetweenBatch => (O::BinaryEqualBetweenBatch, |n, _| n.binary_equal_between_batch = true),
            K::TensorRtCache => (O::TensorRtCache("trt.cache".into()), |_, r| {
                r.tensorrt_cache = Some("trt.cache".into())
            }),
            K::CpuCores => (O::CpuCores(vec![2, 0]), |n, _| n.cpu_cores = Some(vec![2, 0])),
            K::ModelKey => (O::ModelKey("00ff".into()), |_, r| r.model_key = Some("00ff".into())),
            K::ModelDecryption => (O::ModelDecryption(Method::Rc4), |n, _| {
                n.bare_model_decryption = Some("RC4_default")
            }),
            K::COprLib => (O::COprLib("libopr.so".into()), |_, r| {
                r.c_opr_libs = vec!["libopr.so".into()]
            }),
            K::NoAlgoCache => (O::NoAlgoCache, |_, r| r.no_algo_cache = true),
        }
    }

    /// The words a command line needs beside `option`'s for the parser to
    /// take them (the other half of `requires`).
    pub(crate) fn with_what_it_requires(option: &EngineOption) -> Vec<EngineOption> {
        let required = option.kind().definition().requires.map(|kind| example(kind).0);
        required.into_iter().chain([option.clone()]).collect()
    }

    #[test]
    fn cpu_time_is_fair_only_between_runs_alike_in_threads_and_device() {
        use EngineOption as O;
        assert!(cpu_time_fair(&[], &[O::FastRun, O::WeightPreprocess]));
        assert!(cpu_time_fair(&[O::Threads(1)], &[]));
        assert!(cpu_time_fair(&[O::Threads(2)], &[O::Threads(1), O::Threads(2)]));
        assert!(!cpu_time_fair(&[O::Threads(2)], &[]));
        assert!(!cpu_time_fair(&[O::CpuInplace], &[]));
        assert!(!cpu_time_fair(
            &[O::Device(Device::Cuda(0))],
            &[O::Device(Device::Cuda(0))]
        ));
        assert!(!cpu_time_fair(&[O::TensorRt], &[O::TensorRt]));
    }

    #[test]
    fn every_option_reads_back_from_its_words_and_sets_what_it_should() {
        for &kind in OptionKind::ALL {
            let (option, effect) = example(kind);
            assert_eq!(option.kind(), kind);
            let options = with_what_it_requires(&option);
            let words: Vec<String> = options.iter().flat_map(EngineOption::args).collect();
            let read = parse_engine_words(words.clone()).unwrap_or_else(|err| panic!("{words:?}: {err}"));
            assert_eq!(read, options, "{words:?}");
            assert_eq!(read.iter().flat_map(EngineOption::args).collect::<Vec<_>>(), words);

            let (mut network, mut runtime) = (NetworkOptions::default(), RuntimeOptions::default());
            option.apply(&mut network, &mut runtime);
            let (mut expected_network, mut expected_runtime) = (NetworkOptions::default(), RuntimeOptions::default());
            effect(&mut expected_network, &mut expected_runtime);
            assert_eq!(
                (&network, &runtime),
                (&expected_network, &expected_runtime),
                "{option:?}"
            );
            let unchanged = (NetworkOptions::default(), RuntimeOptions::default());
            assert_ne!((network, runtime), unchanged, "{option:?} sets nothing");
        }
    }

    #[test]
    fn every_flag_is_one_kind_s_and_every_switch_its_own() {
        for (index, &kind) in OptionKind::ALL.iter().enumerate() {
            let definition = kind.definition();
            assert!(definition.flag.starts_with("--"), "{kind:?}");
            let others = &OptionKind::ALL[index + 1..];
            assert!(
                others.iter().all(|other| other.definition().flag != definition.flag),
                "{kind:?}"
            );
            if let Takes::Nothing(option) = definition.takes {
                assert_eq!(option().kind(), kind);
            }
        }
    }

    #[test]
    fn options_keep_the_order_given_and_the_flag_alone_is_auto() {
        let words = [
            "--layout-transform",
            "--threads",
            "2",
            "--c-opr-lib",
            "a.so",
            "--fast-run",
            "--c-opr-lib",
            "b.so",
        ];
        let read = parse_engine_words(words.map(String::from)).unwrap();
        assert_eq!(
            read,
            [
                EngineOption::LayoutTransform(TransformTarget::Auto),
                EngineOption::Threads(2),
                EngineOption::COprLib("a.so".into()),
                EngineOption::FastRun,
                EngineOption::COprLib("b.so".into()),
            ]
        );
        assert_eq!(read.iter().flat_map(EngineOption::args).collect::<Vec<_>>(), words);
    }

    #[test]
    fn a_value_that_starts_with_a_dash_reads_back() {
        for option in [
            EngineOption::AsyncLevel(-1),
            EngineOption::FastRunCache("-algo.cache".into()),
        ] {
            let words = option.args();
            assert_eq!(words.len(), 1, "{words:?}");
            assert_eq!(parse_engine_words(words), Ok(vec![option]));
        }
    }

    #[test]
    fn options_of_one_setting_clash() {
        assert!(EngineOption::FakeFirst.clashes_with(&EngineOption::RecordCompSeq(1)));
        assert!(EngineOption::Threads(2).clashes_with(&EngineOption::CpuInplace));
        assert!(EngineOption::GraphOptLevel(2).clashes_with(&EngineOption::GraphOptLevel(0)));
        assert!(!EngineOption::Reproducible.clashes_with(&EngineOption::Reproducible));
        assert!(!EngineOption::FastRun.clashes_with(&EngineOption::Threads(2)));
    }

    #[test]
    fn reads_devices() {
        assert_eq!(parse_device("cpu"), Ok(EngineOption::Device(Device::Cpu)));
        assert_eq!(parse_device("cuda"), Ok(EngineOption::Device(Device::Cuda(0))));
        assert_eq!(parse_device("cuda:3"), Ok(EngineOption::Device(Device::Cuda(3))));
        for bad in ["gpu", "cuda:x", "cpu:1", ""] {
            assert!(parse_device(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_core_lists_as_taskset_does() {
        assert_eq!(parse_core_list("0,1"), Ok(vec![0, 1]));
        assert_eq!(parse_core_list("0,2-4"), Ok(vec![0, 2, 3, 4]));
        assert_eq!(parse_core_list("3"), Ok(vec![3]));
        for bad in ["", "a", "1-", "3-1", "0,,1", "-1"] {
            assert!(parse_core_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_key_given_in_hex_is_never_shown() {
        let key = EngineOption::ModelKey("00ff".into());
        assert_eq!(key.shown(), ["--model-key", "(a key)"]);
        assert_eq!(key.args(), ["--model-key", "00ff"], "a child gets the key");
        let file = EngineOption::ModelKey("@user.key".into());
        assert_eq!(file.shown(), file.args());
        assert_eq!(EngineOption::Threads(2).shown(), ["--threads", "2"]);
    }

    /// The engine's words for an algorithm its chooser could not find, as
    /// MegEngine 1.13 writes them (dnn/src/common/algo_base.cpp,
    /// dnn/src/fallback/matrix_mul/opr_impl.cpp, src/rdnn/impl/algo_chooser.cpp),
    /// name the options that asked for those attributes, and only where given.
    #[test]
    fn a_missing_algorithm_names_the_options_that_asked_for_its_attributes() {
        let fast_run = NetworkOptions {
            algo_search: AlgoSearch::FastRun,
            ..NetworkOptions::default()
        };
        let assertion = "assertion `contain_attribute_all(positive_attr) && !contain_attribute_any(negative_attr)' failed\n\
            extra message: require algorithm with attribute(DEFAULT) and without attribute(NAIVE), but getalgorithm(DEFAULT) \
            with attribute(REPRODUCIBLE | NAIVE)\n\
            libmegengine_shared.so(_ZNK3mgb4rdnn11AlgoChooserIN6megdnn18ConvolutionForwardEE17AlgoChooserHelper19choose_by_heuristicE+0x2c7)";
        assert_eq!(
            algorithm_refusal(assertion, &fast_run).as_deref(),
            Some(
                "--fast-run left the engine no algorithm for a ConvolutionForward (--fast-run profiles only the \
                 optimized algorithms, not the naive ones, which --full-run profiles too): run without it; the engine said"
            )
        );
        // The attributes of the algorithm it got are not asked for; nor is a failure else.
        assert_eq!(algorithm_refusal(assertion, &NetworkOptions::default()), None);
        assert_eq!(algorithm_refusal("Unequal value of AssertEqual", &fast_run), None);

        let reproducible = NetworkOptions {
            reproducible: true,
            shared_batch_size: Some(4),
            ..NetworkOptions::default()
        };
        let matmul = "require algorithm without attribute(USABLE_DEPEND_ON_SHAPE) with attribute(REPRODUCIBLE), but can't get suitable algo.";
        let blamed = algorithm_refusal(matmul, &reproducible).unwrap();
        assert!(
            blamed.starts_with("--reproducible and --fast-run-shared-batch-size left the engine no algorithm ("),
            "{blamed}"
        );
        let unusable = "no usable PoolingForward algorithm {1,3,8,8} without attribute(ACCURACY_DEPEND_ON_BATCH) or could not meet workspace limite requirement(0)";
        let binary_equal = NetworkOptions {
            binary_equal_between_batch: true,
            ..NetworkOptions::default()
        };
        let blamed = algorithm_refusal(unusable, &binary_equal).unwrap();
        assert!(
            blamed.starts_with("--binary-equal-between-batch left the engine no algorithm for a PoolingForward ("),
            "{blamed}"
        );
    }
}
