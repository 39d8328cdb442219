//! Command-line definitions. Parsing only: commands turn these into plain options.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "mge",
    version,
    about = "Run, check and profile MegEngine models on the MegEngine Lite runtime"
)]
pub struct Cli {
    /// The MegEngine Lite shared library to use instead of the installed runtime
    #[arg(long, global = true, env = "MGE_LITE_LIB", value_name = "PATH")]
    pub lite_lib: Option<PathBuf>,

    /// Show engine logs and backtraces
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// Print no notes or progress on stderr
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Load a model, feed it, run it and report outputs and timing
    Run(Box<RunArgs>),
    /// Show a model's format, inputs, outputs and testcases
    Info(InfoArgs),
    /// Run every testcase embedded in each model and report pass or fail
    Check(CheckArgs),
    /// Run with the engine's profiler: top operators by time and a Chrome trace
    Profile(Box<ProfileArgs>),
    /// Install or inspect the MegEngine Lite runtime
    #[command(subcommand)]
    Runtime(RuntimeCommand),
    /// Print shell completions
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write manual pages (mge.1 and one per subcommand) into DIR
    Man {
        /// The folder to write into, e.g. ~/.local/share/man/man1
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The model (.mge), plain or a testcase container
    pub model: PathBuf,

    #[command(flatten)]
    pub feeds: FeedArgs,

    /// Run a testcase container with feeds (--input or #rand) instead of its embedded testcases
    #[arg(long)]
    pub no_testcase: bool,

    #[command(flatten)]
    pub iterations: IterationArgs,

    #[command(flatten)]
    pub engine: EngineArgs,

    /// Write each output to DIR/NAME.npy (DIR/INDEX/NAME.npy per embedded testcase)
    #[arg(long, value_name = "DIR")]
    pub outputs: Option<PathBuf>,

    /// Compare output NAME with FILE.npy using the engine's AssertEqual error (repeatable)
    #[arg(long, value_name = "NAME:FILE.npy")]
    pub expect: Vec<String>,

    /// The largest error --expect accepts
    #[arg(long, default_value_t = 1e-4, value_name = "X")]
    pub maxerr: f64,

    /// Print one JSON document on stdout instead of the report
    #[arg(long)]
    pub json: bool,

    /// Profile the timed iterations and write a Chrome trace to FILE
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// The model (.mge); a testcase container without --input runs on its first testcase
    pub model: PathBuf,

    #[command(flatten)]
    pub feeds: FeedArgs,

    #[command(flatten)]
    pub iterations: IterationArgs,

    #[command(flatten)]
    pub engine: EngineArgs,

    /// Write the Chrome trace to FILE [default: <model stem>.trace.json]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Rows to list, largest time first
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub top: usize,

    /// One row per operator or per operator type
    #[arg(long, value_enum, default_value = "opr")]
    pub by: ProfileBy,

    /// Print one JSON document on stdout instead of the table
    #[arg(long)]
    pub json: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ProfileBy {
    Opr,
    Type,
}

#[derive(Args, Debug)]
pub struct FeedArgs {
    /// Input feed: [NAME:]SOURCE with SOURCE one of #rand(MIN,MAX[,SHAPE]), FILE.npy,
    /// FILE.npz[:KEY], an image or a JSON literal; several joined by ';'; @FILE reads one per line
    #[arg(short, long = "input", value_name = "SPEC")]
    pub inputs: Vec<String>,

    /// Seed for #rand feeds
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Resize images to the input's height and width
    #[arg(long)]
    pub resize_input: bool,
}

#[derive(Args, Debug)]
pub struct IterationArgs {
    /// Untimed runs before measuring
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,

    /// Timed runs (at least this many with --duration)
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub iter: u64,

    /// Keep running timed runs until they took SECONDS in all
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub duration: Option<std::time::Duration>,

    /// With --json, list every timed run's time under timing_ms.iterations_ms
    #[arg(long)]
    pub all_times: bool,
}

/// A positive, finite number of seconds.
fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    std::time::Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|duration| !duration.is_zero())
        .ok_or_else(|| format!("'{text}' is not a positive number of seconds"))
}

#[derive(Args, Debug)]
pub struct EngineArgs {
    /// Device to run on: cpu, cuda or cuda:ID
    #[arg(long, default_value = "cpu", value_name = "DEVICE")]
    pub device: String,

    /// CPU worker threads
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,

    /// Run CPU kernels on the calling thread
    #[arg(long)]
    pub cpu_inplace: bool,

    /// Pick algorithms by profiling them (fast-run)
    #[arg(long)]
    pub fast_run: bool,

    /// Use only reproducible algorithms
    #[arg(long)]
    pub reproducible: bool,

    /// Read and update the fast-run algorithm cache in FILE
    #[arg(long, value_name = "FILE")]
    pub fast_run_cache: Option<PathBuf>,

    /// Preprocess constant weights once at load
    #[arg(long)]
    pub weight_preprocess: bool,

    /// Fuse preprocessing patterns (astype + pad_channel + dimshuffle)
    #[arg(long)]
    pub fuse_preprocess: bool,

    /// Assume input shapes never change (saves memory)
    #[arg(long)]
    pub const_shape: bool,

    /// Make the first execution only allocate (an extra untimed run)
    #[arg(long)]
    pub fake_first: bool,

    /// Skip the var sanity check of the first run
    #[arg(long)]
    pub no_sanity_check: bool,

    /// Record the kernel sequence on the first run: 1, or 2 to also free extra memory
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(i32).range(0..=2))]
    pub record_comp_seq: Option<i32>,

    /// Graph optimization level (0 to 3)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub graph_opt_level: Option<i32>,

    /// Asynchronous dispatch level
    #[arg(long, value_name = "N")]
    pub async_level: Option<i32>,

    /// JIT level (CUDA only): 1 elemwise, 2 also reductions
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(i32).range(0..=2))]
    pub jit: Option<i32>,

    /// Workspace limit for operators with several algorithms
    #[arg(long, value_name = "BYTES")]
    pub workspace_limit: Option<usize>,

    /// Convert the graph to this memory layout
    #[arg(long, value_enum, value_name = "LAYOUT")]
    pub layout: Option<LayoutArg>,

    /// Let the engine choose the best layout for the whole graph
    #[arg(long, value_enum, value_name = "TARGET", num_args = 0..=1, default_missing_value = "auto")]
    pub layout_transform: Option<LayoutTransformTarget>,

    /// Run through TensorRT (CUDA only)
    #[arg(long)]
    pub tensorrt: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum LayoutArg {
    Nchw44,
    #[value(name = "nchw44-dot")]
    Nchw44Dot,
    Nchw88,
    Nhwcd4,
    Nchw4,
    Nchw32,
    Nchw64,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutTransformTarget {
    /// The device the model runs on
    Auto,
    Cpu,
    Cuda,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The model (.mge)
    pub model: PathBuf,

    /// Print one JSON document on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Testcase containers (.mge dumped with input_data), or folders to search for *.mge
    #[arg(required_unless_present = "worker")]
    pub models: Vec<PathBuf>,

    /// Check N models at a time, each batch in its own worker process
    #[arg(short, long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: u64,

    /// Print one JSON document on stdout instead of a line per testcase
    #[arg(long)]
    pub json: bool,

    /// Also write a JUnit XML report to FILE
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Check only slice K of N (from 1): models sorted by path, every Nth; for CI matrices
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,

    /// Serve as a worker of `check -j`: model paths on stdin, results on stdout
    #[arg(long, hide = true)]
    pub worker: bool,
}

/// `--shard K/N`: slice `index` (from 1) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    let numbers = text
        .split_once('/')
        .and_then(|(index, count)| Some((index.trim().parse().ok()?, count.trim().parse().ok()?)));
    match numbers {
        Some((index, count)) if (1..=count).contains(&index) => Ok(Shard { index, count }),
        _ => Err(format!("'{text}' is not K/N with 1 <= K <= N, e.g. 2/4")),
    }
}

#[derive(Subcommand, Debug)]
pub enum RuntimeCommand {
    /// Download MegEngine's wheel with pip and keep its runtime libraries in the cache folder
    Install {
        /// MegEngine version
        #[arg(long, default_value = crate::runtime::DEFAULT_VERSION)]
        version: String,
        /// Reinstall even when present
        #[arg(long)]
        force: bool,
    },
    /// Show which runtime is used: path, version, devices
    Info {
        /// Print one JSON document on stdout
        #[arg(long)]
        json: bool,
    },
}
