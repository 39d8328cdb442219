//! Command-line definitions. Parsing only: commands turn these into plain options.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::builder::RangedU64ValueParser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches, Parser, Subcommand, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::input_files;
use crate::model::DEFAULT_MAXERR;
use crate::options::{Definition, EngineOption, Heading, OptionKind, Takes, DEFINITIONS};

// `--help` groups each command's options under these headings, as ripgrep
// does; an option keeps its heading in every command that takes it. The
// global options and `--help` stay under clap's plain "Options". A shared
// struct's `next_help_heading` stays in force after its flatten, so each
// field of a command's own struct names its heading.
const INPUT: &str = "Input options";
const ENGINE: &str = "Engine options";
const FAST_RUN: &str = "Fast-run options";
const LOADING: &str = "Model loading options";
const TIMING: &str = "Timing options";
const OUTPUT: &str = "Output options";
const CHECKS: &str = "Check options";
const SUPERVISION: &str = "Supervision options";
/// `profile`'s table: which operators it lists, and how.
const TABLE: &str = "Table options";
/// `tune`'s search.
const SEARCH: &str = "Search options";
/// `compare`'s options of one run only.
const TWO_RUNS: &str = "Two runs (A and B models)";

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

    /// The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it
    #[arg(long, global = true, env = "MGE_RUNTIME_VERSION", value_name = "VERSION")]
    pub runtime_version: Option<String>,

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
    Check(Box<CheckArgs>),
    /// Run with the engine's profiler: top operators by time and a Chrome trace
    Profile(Box<ProfileArgs>),
    /// Write tensors out: outputs, every intermediate var, embedded testcases, the layout-transformed model
    Dump(Box<DumpArgs>),
    /// Compare tensors (.npy, .npz, folders, io dumps), or two runs of models to the first diverging operator
    Compare(Box<CompareArgs>),
    /// Find the fastest engine options that keep the outputs, each tried in its own process
    Tune(Box<TuneArgs>),
    /// Run a model on feeds and write a testcase container: the feeds, and the outputs as expectations its AssertEqual operators check
    PackTestcases(Box<PackTestcasesArgs>),
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

/// A model, its feeds and the engine options to run it under: what run,
/// profile, dump and tune share (check shares the engine options). The model
/// is required but where a command reads something else instead (`profile
/// --analyze`, `dump --convert`).
#[derive(Args, Debug)]
pub struct ModelArgs {
    /// The model (.mge), plain or a testcase container
    #[arg(required = true)]
    pub model: Option<PathBuf>,

    #[command(flatten)]
    pub feeds: FeedArgs,

    #[command(flatten)]
    pub engine: EngineArgs,
}

/// `--outputs DIR`, of run and dump.
#[derive(Args, Debug)]
#[command(next_help_heading = OUTPUT)]
pub struct OutputsArg {
    /// Write each output to DIR/NAME.npy (DIR/INDEX/NAME.npy per embedded testcase)
    #[arg(id = "outputs", long = "outputs", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `--repro DIR`, of run, check and compare.
#[derive(Args, Debug)]
#[command(next_help_heading = OUTPUT)]
pub struct ReproArg {
    /// For each model that crashed, hung, exited or failed its outputs, write a folder DIR/NAME
    /// that reproduces it: the model, its exact feeds, the options, the runtime, the CPU, the
    /// engine's messages and the command line (a bug report in a folder)
    #[arg(id = "repro", long = "repro", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `--reduce`, of run and check.
#[derive(Args, Debug)]
#[command(next_help_heading = OUTPUT)]
pub struct ReduceArg {
    /// With --repro: also write reduced.mge into each folder, the smallest part of the model found
    /// to fail alike (a crash, exit or hang: the shortest prefix of its operators, by bisection; NaN
    /// or infinities under --check-finite: up to the first var holding them), which command.sh runs
    #[arg(long, requires = "repro")]
    pub reduce: bool,
}

/// `--check-finite`, of run, check and dump.
#[derive(Args, Debug)]
#[command(next_help_heading = CHECKS)]
pub struct FiniteArg {
    /// Fail (exit 1) when an output holds NaN or an infinity (said on stderr either way)
    #[arg(long)]
    pub check_finite: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub model: ModelArgs,

    /// Run a testcase container with feeds (--input or #rand) instead of its embedded testcases
    #[arg(long, help_heading = INPUT)]
    pub no_testcase: bool,

    #[command(flatten)]
    pub iterations: IterationArgs,

    #[command(flatten)]
    pub outputs: OutputsArg,

    /// Compare output NAME with FILE.npy (a model's one output: FILE.npy alone), every output with
    /// the array of its name in FILE.npz, or with DIR/NAME.npy as --outputs DIR wrote it (repeatable);
    /// checked against the model's outputs before any run
    #[arg(long, value_name = "NAME:FILE.npy|FILE.npz|DIR", help_heading = CHECKS)]
    pub expect: Vec<String>,

    /// How --expect judges
    #[command(flatten)]
    pub comparison: ComparisonArgs,

    /// Print one JSON document on stdout instead of the report
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,

    /// Write a Chrome trace of separate profiled runs, after the timed ones, to FILE
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub profile: Option<PathBuf>,

    /// Also write the timed runs' median and its 95% interval to FILE in Bencher Metric Format (`latency`, in nanoseconds)
    #[arg(long, value_name = "FILE", help_heading = OUTPUT, conflicts_with_all = ["sweep", "repro"])]
    pub bmf: Option<PathBuf>,

    /// Also write the summary (inputs, outputs, timing) as GitHub-flavoured markdown tables to FILE (`-`: stdout, after the report)
    #[arg(long, value_name = "FILE", help_heading = OUTPUT, conflicts_with_all = ["sweep", "repro"])]
    pub markdown: Option<PathBuf>,

    #[command(flatten)]
    pub deadline: DeadlineArgs,

    /// Make the internal var VAR an output too, by its name in `mge dump --io`'s index (repeatable)
    #[arg(long = "extra-output", alias = "output", value_name = "VAR", help_heading = OUTPUT)]
    pub extra_outputs: Vec<String>,

    #[command(flatten)]
    pub concurrency: ConcurrencyArgs,

    #[command(flatten)]
    pub finite: FiniteArg,

    #[command(flatten)]
    pub repro: ReproArg,

    #[command(flatten)]
    pub reduce: ReduceArg,

    /// Run input NAME at each SHAPE (e.g. data:1x3x224x224,8x3x224x224), each in a process of its
    /// own, and report a row per shape; repeated for several inputs, which vary together
    #[arg(long, value_name = "NAME:SHAPE[,SHAPE...]", help_heading = INPUT)]
    pub sweep: Vec<String>,
}

/// `--instances N`: copies of the network running at once.
#[derive(Args, Debug)]
#[command(next_help_heading = TIMING)]
pub struct ConcurrencyArgs {
    /// Run N copies of the network at once, each on a thread and an engine worker of its own, sharing weights
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::engine::PIN_SLOTS as u64))]
    pub instances: u64,

    /// Let the instances share runtime memory; they then take turns, as the engine requires
    #[arg(long)]
    pub share_runtime_memory: bool,
}

/// The help of MODEL where a container without --input runs on its first testcase.
const FIRST_TESTCASE_MODEL: &str = "The model (.mge); a testcase container without --input runs on its first testcase";

#[derive(Args, Debug)]
#[command(mut_arg("model", |model| model.help(FIRST_TESTCASE_MODEL).required(false).required_unless_present("analyze")))]
pub struct ProfileArgs {
    #[command(flatten)]
    pub model: ModelArgs,

    #[command(flatten)]
    pub iterations: IterationArgs,

    /// Feed a testcase container #rand instead of its first testcase when there is no --input
    #[arg(long, help_heading = INPUT)]
    pub no_testcase: bool,

    /// Write the Chrome trace to FILE [default: <model stem>.trace.json; with --analyze, none]
    #[arg(short = 'o', long = "trace", alias = "output", value_name = "FILE", help_heading = OUTPUT)]
    pub trace: Option<PathBuf>,

    /// Rows to list, largest time first
    #[arg(long, default_value_t = 20, value_name = "N", help_heading = TABLE)]
    pub top: usize,

    /// One row per operator or per operator type
    #[arg(long, value_enum, default_value = "opr", help_heading = TABLE)]
    pub by: ProfileBy,

    /// Print one JSON document on stdout instead of the table
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,

    #[command(flatten)]
    pub deadline: DeadlineArgs,

    /// Read an engine profile written elsewhere (load_and_run --profile, megenginelite) instead of running a model
    #[arg(long, value_name = "FILE.json", conflicts_with = "model", help_heading = INPUT)]
    pub analyze: Option<PathBuf>,

    #[command(flatten)]
    pub filters: ProfileFilterArgs,
}

/// Which operators `profile` lists, as MegEngine's profile_analyze filters them.
#[derive(Args, Debug)]
#[command(next_help_heading = TABLE)]
pub struct ProfileFilterArgs {
    /// Only operators of type T, e.g. ConvolutionForward (repeatable)
    #[arg(long = "type", value_name = "T")]
    pub types: Vec<String>,

    /// Only operators whose name matches REGEX from its start (Python's re.match)
    #[arg(long, value_name = "REGEX", value_parser = parse_name_regex)]
    pub opr_name: Option<regex::Regex>,

    /// Sort rows by time or FLOPs (largest first), or by name
    #[arg(long, value_enum, default_value = "time")]
    pub order_by: ProfileOrder,

    /// Only operator executions that took at least MS milliseconds
    #[arg(long, value_name = "MS")]
    pub min_time: Option<f64>,

    /// One row per operator type, its operators combined by FUNC [default: sum]
    #[arg(long, value_enum, value_name = "FUNC", num_args = 0..=1, default_missing_value = "sum")]
    pub aggregate: Option<ProfileAggregate>,
}

fn parse_name_regex(text: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(text).map_err(|err| format!("not a regular expression: {err}"))
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileOrder {
    Time,
    Flops,
    Name,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileAggregate {
    Sum,
    Mean,
    Max,
    Min,
}

/// What `mge tune --save` writes and `--options FILE` reads.
#[derive(Serialize, Deserialize)]
pub struct SavedOptions {
    /// Engine options, as on the command line.
    pub args: Vec<String>,
    /// The fast-run cache saved beside the file (a name in its folder), when fast-run won.
    pub fast_run_cache: Option<String>,
}

impl Cli {
    /// Parses the command line; `--options FILE` adds the options the file
    /// holds. A usage error is one line and its hint, as every error is
    /// (`usage_error`); `--help` and `--version` print as clap prints them.
    pub fn parse_with_saved_options() -> Result<Cli, String> {
        let args: Vec<OsString> = std::env::args_os().collect();
        let cli = match Cli::try_parse_from(&args) {
            Ok(cli) => cli,
            Err(err) if prints_and_exits(&err) => err.exit(),
            Err(err) => return Err(usage_error(&err, &args)),
        };
        let Some(file) = cli.options_file() else {
            return Ok(cli);
        };
        let text = input_files::read_text(file, &input_files::OPTIONS)
            .map_err(|err| format!("--options {}: {}", file.display(), err.root_cause()))?;
        let saved: SavedOptions = serde_json::from_str(&text)
            .map_err(|err| format!("--options {}: not a file of `mge tune --save` ({err})", file.display()))?;
        let mut expanded = args;
        expanded.extend(saved.args.into_iter().map(OsString::from));
        if let Some(cache) = saved.fast_run_cache {
            let beside = file.parent().unwrap_or(Path::new("")).join(cache);
            expanded.extend([OsString::from("--fast-run-cache"), beside.into()]);
        }
        Cli::try_parse_from(expanded).map_err(|err| format!("--options {}: {}", file.display(), one_line(&err)))
    }

    fn options_file(&self) -> Option<&Path> {
        let engine = match &self.command {
            Command::Run(args) => &args.model.engine,
            Command::Profile(args) => &args.model.engine,
            Command::Dump(args) => &args.model.engine,
            Command::Tune(args) => &args.model.engine,
            Command::PackTestcases(args) => &args.model.engine,
            Command::Check(args) => &args.engine,
            Command::Compare(args) => &args.runs.engine,
            _ => return None,
        };
        engine.options_file.as_deref()
    }
}

/// What clap prints on stdout and exits with itself: `--help`, `--version`,
/// and the help of a command given without its subcommand (`mge runtime`).
fn prints_and_exits(err: &clap::Error) -> bool {
    matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    )
}

/// A clap error as one line, without its `error: `: its message, with the
/// lines clap indents under it (the missing arguments, the possible values)
/// joined on, and neither its usage nor its tips.
fn one_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let mut words: Vec<String> = Vec::new();
    for line in rendered.lines().take_while(|line| !line.trim().is_empty()) {
        let line = line.trim().trim_start_matches("error: ");
        words.push(match line.strip_prefix('[').and_then(|line| line.strip_suffix(']')) {
            Some(values) => format!("({values})"),
            None => line.to_string(),
        });
    }
    words.join(" ")
}

/// A usage error as `mge` says every error: one line, then a hint: the
/// option meant (`better_name`) or clap's own tip where there is one, and
/// the help of the command the arguments name (`mge run --help`).
fn usage_error(err: &clap::Error, args: &[OsString]) -> String {
    let (path, command) = named_command(args);
    let help = format!("see '{path} --help'");
    let better = match err.kind() {
        ErrorKind::UnknownArgument => better_name(err, &command),
        _ => clap_tip(err),
    };
    let hint = match better {
        Some(better) => format!("{better}; {help}"),
        None => help,
    };
    format!("{}\nhint: {hint}", one_line(err))
}

/// The command the arguments name, such as `mge runtime install` (the
/// subcommands among them, in order), and its definition.
fn named_command(args: &[OsString]) -> (String, clap::Command) {
    let mut command = <Cli as clap::CommandFactory>::command();
    command.build();
    let mut path = vec![command.get_name().to_string()];
    for arg in args.iter().skip(1).filter_map(|arg| arg.to_str()) {
        let Some(subcommand) = command.find_subcommand(arg).cloned() else {
            continue;
        };
        path.push(subcommand.get_name().to_string());
        command = subcommand;
    }
    (path.join(" "), command)
}

/// Names other tools (load_and_run, trtexec, polygraphy, hyperfine) give
/// options, with what `mge` calls them: the option (where `command` has it)
/// and the hint. Looked up before clap's similar names, which would lead a
/// `--output-dir` to `--output`, run's old spelling of `--extra-output`.
const OTHER_TOOLS_NAMES: &[(&[&str], &str, &str)] = &[
    (
        &[
            "output-dir",
            "output_dir",
            "out-dir",
            "outdir",
            "out",
            "save-dir",
            "dump-dir",
            "save-outputs",
            "output-path",
        ],
        "outputs",
        "to write the outputs as DIR/NAME.npy, use --outputs DIR",
    ),
    (
        &["model", "model-path", "model_path", "onnx", "loadEngine"],
        "",
        "the model is an argument of its own, not an option: mge COMMAND MODEL",
    ),
    (
        &["data", "input-data", "input_data", "inputs", "feed", "loadInputs"],
        "input",
        "feed an input with -i NAME:SOURCE (a .npy, .npz, image, #rand(MIN,MAX) or a JSON literal)",
    ),
    (
        &[
            "shape",
            "shapes",
            "input-shape",
            "input-shapes",
            "batch-size",
            "batch",
            "input_shape",
        ],
        "input",
        "a feed carries its shape: -i NAME:#rand(0,1,1,3,224,224), or a .npy of that shape",
    ),
    (
        &["runs", "iterations", "repeat", "loop", "number"],
        "iter",
        "to time N runs, use --iter N",
    ),
    (
        &["trace", "trace-file", "profile-file", "exportTimes", "exportProfile"],
        "profile",
        "to write a Chrome trace of profiled runs, use --profile FILE",
    ),
    (
        &["gpu", "device-id", "gpu-id", "cuda"],
        "device",
        "to run on a GPU, use --device cuda[:ID]",
    ),
];

/// For an unknown option, the one meant: an option other tools name so
/// (`OTHER_TOOLS_NAMES`; none where this command has no such option), else
/// the similar name clap found (an old spelling, a hidden alias, is named by
/// the option it stands for), else clap's tip.
fn better_name(err: &clap::Error, command: &clap::Command) -> Option<String> {
    let text = |kind| match err.get(kind) {
        Some(ContextValue::String(text)) => Some(text.as_str()),
        _ => None,
    };
    let given = text(ContextKind::InvalidArg).unwrap_or_default();
    let flag = given.trim_start_matches('-').split('=').next().unwrap_or_default();
    if let Some((_, long, hint)) = OTHER_TOOLS_NAMES.iter().find(|(names, _, _)| names.contains(&flag)) {
        let has = command.get_arguments().any(|arg| arg.get_long() == Some(long));
        return (long.is_empty() || has).then(|| hint.to_string());
    }
    let Some(similar) = text(ContextKind::SuggestedArg) else {
        return clap_tip(err);
    };
    let similar = similar.trim_start_matches('-');
    let option = command.get_arguments().find(|arg| {
        arg.get_long() == Some(similar) || arg.get_all_aliases().is_some_and(|aliases| aliases.contains(&similar))
    })?;
    Some(format!("a similar option exists: '--{}'", option.get_long()?))
}

/// clap's tip: a similar subcommand, or what to do; not one that would make
/// an option a value (`-- --x`), where an option was meant.
fn clap_tip(err: &clap::Error) -> Option<String> {
    match (
        err.get(ContextKind::SuggestedSubcommand),
        err.get(ContextKind::SuggestedValue),
    ) {
        (Some(ContextValue::Strings(names)), _) if !names.is_empty() => {
            return Some(format!("a similar subcommand exists: '{}'", names.join("', '")));
        }
        (_, Some(ContextValue::String(value))) => return Some(format!("a similar value exists: '{value}'")),
        _ => {}
    }
    let Some(ContextValue::StyledStrs(tips)) = err.get(ContextKind::Suggested) else {
        return None;
    };
    tips.iter()
        .map(ToString::to_string)
        .find(|tip| !tip.starts_with("to pass "))
}

#[derive(Args, Debug)]
#[command(mut_arg("model", |model| model.help("The model (.mge); a container is tuned on feeds, not on its testcases")))]
pub struct TuneArgs {
    /// The baseline: engine options given here are kept fixed and not tuned
    #[command(flatten)]
    pub model: ModelArgs,

    /// Seconds to spend on the search
    #[arg(long, default_value = "120", value_name = "SECONDS", value_parser = parse_seconds, help_heading = SEARCH)]
    pub budget: Duration,

    /// Measure every candidate anew, not the record of the last search of this model with these settings
    #[arg(long, help_heading = SEARCH)]
    pub search_again: bool,

    /// How a candidate's outputs are held against the baseline's
    #[command(flatten)]
    pub comparison: ComparisonArgs,

    /// Print one JSON document on stdout instead of the table
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,

    /// Save the best options to FILE (and its fast-run cache beside it) for `--options FILE`
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub save: Option<PathBuf>,

    /// Write a Lite packed model to OUT.mge: the model with the best options and the fast-run cache it used, for `mge run OUT.mge` and MegEngine Lite
    #[arg(long, value_name = "OUT.mge", help_heading = OUTPUT)]
    pub save_model: Option<PathBuf>,
}

#[derive(Args, Debug)]
#[command(mut_arg("model", |model| model.help("The plain model (.mge, FBS v2) to run and pack")))]
pub struct PackTestcasesArgs {
    /// The model, the feeds of its one testcase, and the engine options the expected outputs are computed under
    #[command(flatten)]
    pub model: ModelArgs,

    /// The testcase container to write (.mge)
    #[arg(short, long, value_name = "OUT.mge", help_heading = OUTPUT)]
    pub output: PathBuf,

    /// The largest AssertEqual error the container's assertions accept
    #[arg(long, default_value_t = DEFAULT_MAXERR, value_name = "X", help_heading = CHECKS)]
    pub maxerr: f64,

    /// Print one JSON document on stdout instead of the summary
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,

    #[command(flatten)]
    pub deadline: DeadlineArgs,
}

#[derive(Args, Debug)]
#[command(next_help_heading = SUPERVISION)]
pub struct DeadlineArgs {
    /// Stop the engine's work (loading, running) after SECONDS and fail
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("what").required(true).multiple(true)
    .args(["outputs", "io", "testcases", "layout_transform_model"])))]
#[command(mut_arg("model", |model| model.help(FIRST_TESTCASE_MODEL).required(false).required_unless_present("convert")))]
#[command(mut_arg("outputs", |outputs| outputs.help("Write each output to DIR/NAME.npy, as `run --outputs` does")))]
#[command(mut_arg("check_finite", |check| check.help("Fail (exit 1) when an output, or with --io any var, holds NaN or an infinity (said on stderr either way)")))]
pub struct DumpArgs {
    #[command(flatten)]
    pub model: ModelArgs,

    /// Feed a testcase container #rand instead of its first testcase when there is no --input
    #[arg(long, help_heading = INPUT)]
    pub no_testcase: bool,

    #[command(flatten)]
    pub outputs: OutputsArg,

    /// Write every var of one run through the engine's io dump, with DIR/index.json
    #[arg(long, value_name = "DIR", help_heading = OUTPUT)]
    pub io: Option<PathBuf>,

    /// bin: a .npy per var; txt: the engine's text dump (DIR/io.txt)
    #[arg(long, value_enum, default_value = "bin", requires = "io", help_heading = OUTPUT)]
    pub io_format: IoFormat,

    /// Write each embedded testcase's tensors to DIR/INDEX/INPUT.npy (expectations as OUTPUT.expect.npy)
    #[arg(long, value_name = "DIR", help_heading = OUTPUT)]
    pub testcases: Option<PathBuf>,

    /// Write the model after the engine's global layout transform to FILE
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub layout_transform_model: Option<PathBuf>,

    /// Convert the raw io dump in RAW_DIR (load_and_run --bin-io-dump, megenginelite's io_bin_dump) to --io DIR instead of running a model
    #[arg(long, value_name = "RAW_DIR", requires = "io", conflicts_with_all = ["model", "outputs", "testcases", "layout_transform_model"], help_heading = INPUT)]
    pub convert: Option<PathBuf>,

    #[command(flatten)]
    pub deadline: DeadlineArgs,

    #[command(flatten)]
    pub finite: FiniteArg,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoFormat {
    Bin,
    Txt,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A .npy file, a .npz archive, a folder of them, an io dump (`mge dump --io`, or a raw one
    /// from load_and_run --bin-io-dump or megenginelite), or a model to run
    pub a: PathBuf,

    /// The reference, of the same kind as A; left out, model A runs twice (--a-options, --b-options, --b-naive)
    pub b: Option<PathBuf>,

    #[command(flatten)]
    pub comparison: ComparisonArgs,

    /// Accept |a-b| <= ATOL + RTOL*|b| instead of the AssertEqual error (NumPy's allclose)
    #[arg(long, value_name = "X", help_heading = CHECKS)]
    pub atol: Option<f64>,

    /// See --atol
    #[arg(long, value_name = "Y", help_heading = CHECKS)]
    pub rtol: Option<f64>,

    /// Print one JSON document on stdout instead of the table
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,

    /// Also write a JUnit XML report to FILE (models): outputs that differ and a slowdown beyond --max-slowdown are failures
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub junit: Option<PathBuf>,

    /// Also write the summary as GitHub-flavoured markdown tables to FILE (`-`: stdout), models: appended to $GITHUB_STEP_SUMMARY where it is set
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub markdown: Option<PathBuf>,

    /// Also write B's median over the rounds and its 95% interval to FILE in Bencher Metric Format (`latency`, in nanoseconds; models, timed)
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub bmf: Option<PathBuf>,

    /// Run the outputs of N pairs of models at a time (folders of models); timing runs one pair at a time
    #[arg(short, long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = SUPERVISION)]
    pub jobs: u64,

    /// Compare only slice K of N (from 1) of two folders of models: paths sorted, every Nth; for CI matrices
    #[arg(long, value_name = "K/N", value_parser = parse_shard, help_heading = INPUT)]
    pub shard: Option<Shard>,

    /// Compare the two models' graphs from their files alone (operators, parameters, MACs, inputs, outputs); no engine runs; exit 1 when they differ
    #[arg(long, help_heading = TWO_RUNS)]
    pub structure: bool,

    #[command(flatten)]
    pub runs: TwoRunArgs,
}

/// How `compare` runs models A and B: the same feeds, the run options of
/// both, and each side's own.
#[derive(Args, Debug)]
#[command(mut_arg("timeout", |timeout| timeout.help("Stop a run of A or B (each run, and each timed process) after SECONDS and fail")))]
pub struct TwoRunArgs {
    #[command(flatten)]
    pub feeds: FeedArgs,

    /// Engine options of both runs
    #[command(flatten)]
    pub engine: EngineArgs,

    /// Engine options of run A only, as `mge run` takes them, e.g. '--threads 1'
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true, help_heading = TWO_RUNS)]
    pub a_options: Option<String>,

    /// Engine options of run B only, e.g. '--layout nchw44' or '--fast-run'
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true, help_heading = TWO_RUNS)]
    pub b_options: Option<String>,

    /// Run B on megdnn's naive reference kernels (CPU; not timed)
    #[arg(long, help_heading = TWO_RUNS)]
    pub b_naive: bool,

    /// Run A on the runtime of MegEngine VERSION installed in the cache folder
    #[arg(long, value_name = "VERSION", help_heading = TWO_RUNS)]
    pub a_runtime: Option<String>,

    /// Run B on the runtime of MegEngine VERSION installed in the cache folder
    #[arg(long, value_name = "VERSION", help_heading = TWO_RUNS)]
    pub b_runtime: Option<String>,

    /// Do not time the two runs: compare their outputs only
    #[arg(long, help_heading = TIMING)]
    pub no_timing: bool,

    /// Time A and B in exactly N rounds, each side in a fresh process per round (A B, B A, ...); without it, rounds are added until the verdict is decided or --timing-budget is spent
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(6..=MAX_ROUNDS), conflicts_with_all = ["no_timing", "timing_budget"], help_heading = TIMING)]
    pub rounds: Option<u64>,

    /// The most seconds the rounds of a pair may take, when --rounds does not fix them [default: 60]
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, conflicts_with = "no_timing", help_heading = TIMING)]
    pub timing_budget: Option<Duration>,

    /// The smallest difference in speed that counts: B/A's 95% interval within ±PCT% is `same`, wholly beyond it `faster` or `slower`, else `undecided`; the pair's verdict and each operator's of --by-op [default: 2]
    #[arg(long, value_name = "PCT", value_parser = parse_min_effect, conflicts_with = "no_timing", help_heading = TIMING)]
    pub min_effect: Option<f64>,

    /// Where the time went: profile both sides in rounds of their own and list the N operators whose time changed most, and those on one side only
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10", value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "no_timing", help_heading = TIMING)]
    pub by_op: Option<u64>,

    /// Pair the vars of two graphs of one network by topology (float against int8, fp32 against fp16, before and after a graph change) and give each pair's SQNR, cosine similarity and largest difference, naming the layer where the SQNR falls most
    #[arg(long, help_heading = TWO_RUNS)]
    pub by_layer: bool,

    /// Fail (exit 1) when B is `slower` than A by more than PCT percent, with the whole 95% interval of B/A above it
    #[arg(long, value_name = "PCT", value_parser = parse_percent, conflicts_with = "no_timing", help_heading = CHECKS)]
    pub max_slowdown: Option<f64>,

    /// Keep both runs' io dumps and outputs in DIR/a and DIR/b (a new or empty folder)
    #[arg(long, value_name = "DIR", help_heading = OUTPUT)]
    pub keep: Option<PathBuf>,

    /// Feed a testcase container #rand instead of its first testcase when there is no --input
    #[arg(long, help_heading = INPUT)]
    pub no_testcase: bool,

    #[command(flatten)]
    pub deadline: DeadlineArgs,

    #[command(flatten)]
    pub repro: ReproArg,
}

/// The most rounds `compare --rounds` takes: each is two processes.
pub const MAX_ROUNDS: u64 = 1000;

/// A percentage: a finite number, 0 or more.
fn parse_percent(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|percent| percent.is_finite() && *percent >= 0.0)
        .ok_or_else(|| format!("'{text}' is not a percentage (a number, 0 or more)"))
}

/// `--min-effect`: a percentage below 100 (B/A within ±100% would hold every slowdown up to 2x).
fn parse_min_effect(text: &str) -> Result<f64, String> {
    parse_percent(text)?;
    text.parse::<f64>()
        .ok()
        .filter(|percent| *percent < 100.0)
        .ok_or_else(|| format!("'{text}' is not a percentage below 100"))
}

/// One side's words of `compare` (`--a-options`, `--b-options`): engine
/// options, and the runtime library of that side alone.
#[derive(Parser, Debug)]
#[command(name = "options", no_binary_name = true)]
pub struct SideWords {
    #[command(flatten)]
    pub engine: EngineArgs,

    /// The MegEngine Lite library this side runs on
    #[arg(long, value_name = "PATH")]
    pub lite_lib: Option<PathBuf>,
}

/// Splits `text` as a shell would and reads it as one side's words, the
/// engine options by the same definitions as the command line.
pub fn parse_side_options(text: &str) -> Result<SideWords, String> {
    let words = shlex::split(text).ok_or_else(|| format!("'{text}': unbalanced quotes"))?;
    let side = SideWords::try_parse_from(words).map_err(|err| format!("'{text}': {}", one_line(&err)))?;
    no_options_file(&side.engine).map_err(|err| format!("'{text}': {err}"))?;
    Ok(side)
}

/// How two sets of tensors are held against each other: run's `--expect`,
/// compare, tune, and check when given.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = CHECKS)]
pub struct ComparisonArgs {
    /// The largest AssertEqual error |a-b| / max(min(|a|,|b|), 1) accepted [default: 1e-4];
    /// NAME:X for tensor NAME only (repeatable)
    #[arg(long, value_name = "[NAME:]X", value_parser = parse_maxerr)]
    pub maxerr: Vec<Maxerr>,

    /// The statistic of a tensor's element errors held against --maxerr
    #[arg(long, value_enum, default_value = "max")]
    pub stat: StatArg,

    /// The fraction of a tensor's elements whose errors may exceed the tolerance (e.g. 0.001)
    #[arg(long, value_name = "RATIO", default_value_t = 0.0, value_parser = parse_ratio)]
    pub allow_outliers: f64,

    /// Judge each tensor by its K largest indices along the last axis instead of its values (classifiers)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub topk: Option<u64>,
}

/// `--maxerr X` or `--maxerr NAME:X`.
#[derive(Clone, Debug, PartialEq)]
pub struct Maxerr {
    pub name: Option<String>,
    pub maxerr: f64,
}

/// `X`, or `NAME:X` (the last `:` ends the name, which may hold others, as `feat:expect`).
fn parse_maxerr(text: &str) -> Result<Maxerr, String> {
    let number = |value: &str| {
        value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| *x >= 0.0)
            .ok_or_else(|| format!("'{value}' is not an error bound (a number, at least 0)"))
    };
    match text.rsplit_once(':') {
        Some((name, value)) if !name.is_empty() => Ok(Maxerr {
            name: Some(name.to_string()),
            maxerr: number(value)?,
        }),
        _ => Ok(Maxerr {
            name: None,
            maxerr: number(text)?,
        }),
    }
}

fn parse_ratio(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|ratio| (0.0..1.0).contains(ratio))
        .ok_or_else(|| format!("'{text}' is not a fraction of the elements (at least 0, below 1)"))
}

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatArg {
    /// Every element within the bound (the engine's AssertEqual)
    #[default]
    Max,
    /// The mean element error
    Mean,
    /// The median element error
    Median,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ProfileBy {
    Opr,
    Type,
}

#[derive(Args, Debug)]
#[command(next_help_heading = INPUT)]
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

/// The most runs `--iter` and `--warmup` ask for, and `--duration` makes: each
/// timed run's time is kept (8 bytes), and a run of a million is hours already.
pub const MAX_RUNS: u64 = 1_000_000;

#[derive(Args, Debug)]
#[command(next_help_heading = TIMING)]
pub struct IterationArgs {
    /// Untimed runs before measuring
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(0..=MAX_RUNS))]
    pub warmup: usize,

    /// Timed runs (at least this many with --duration, at most as many as fit in --max-duration)
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_RUNS))]
    pub iter: u64,

    /// Keep running timed runs until they took SECONDS in all (at most 1000000 runs)
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub duration: Option<Duration>,

    /// Stop the timed runs once they took SECONDS, even short of --iter
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, conflicts_with = "duration")]
    pub max_duration: Option<Duration>,

    /// With --json, list every timed run's time under timing_ms.iterations_ms
    #[arg(long, help_heading = OUTPUT)]
    pub all_times: bool,
}

/// The longest `--timeout`, `--duration` and `--budget`: 30 days.
pub const MAX_SECONDS: f64 = 30.0 * 24.0 * 3600.0;

/// A positive number of seconds, at most `MAX_SECONDS`.
fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if seconds > MAX_SECONDS {
        return Err(format!("{text} seconds is more than 30 days ({MAX_SECONDS} s)"));
    }
    Some(seconds)
        .filter(|seconds| *seconds > 0.0)
        .map(Duration::from_secs_f64)
        .filter(|duration| !duration.is_zero())
        .ok_or_else(|| format!("'{text}' is not a positive number of seconds"))
}

/// The engine options a command takes, as the definitions in `options` read
/// them, in the order the command line gives them; and `--options FILE`.
#[derive(Debug)]
pub struct EngineArgs {
    pub given: Vec<EngineOption>,
    pub options_file: Option<PathBuf>,
}

/// How a model file is opened (its decryption, the extern operators it
/// needs): the engine options of the loading heading, which every command
/// that loads a model takes.
#[derive(Debug)]
pub struct LoadArgs {
    pub given: Vec<EngineOption>,
}

const OPTIONS_FILE: &str = "options_file";

impl Args for EngineArgs {
    fn augment_args(mut cmd: clap::Command) -> clap::Command {
        cmd = cmd.next_help_heading(ENGINE);
        for definition in DEFINITIONS.iter().filter(|definition| !is_loading(definition)) {
            cmd = cmd.arg(engine_arg(definition));
            // `--help` lists it here, where it has always been.
            if definition.kind == OptionKind::TensorRt {
                cmd = cmd.arg(
                    Arg::new(OPTIONS_FILE)
                        .long("options")
                        .value_name("FILE")
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("Add the engine options saved by `mge tune --save FILE`"),
                );
            }
        }
        LoadArgs::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        EngineArgs::augment_args(cmd)
    }
}

impl FromArgMatches for EngineArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<EngineArgs, clap::Error> {
        Ok(EngineArgs {
            given: given_options(matches, DEFINITIONS.iter()),
            options_file: matches.get_one::<PathBuf>(OPTIONS_FILE).cloned(),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = EngineArgs::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for LoadArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let loading = DEFINITIONS.iter().filter(|definition| is_loading(definition));
        loading.fold(cmd.next_help_heading(LOADING), |cmd, definition| {
            cmd.arg(engine_arg(definition))
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        LoadArgs::augment_args(cmd)
    }
}

impl FromArgMatches for LoadArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<LoadArgs, clap::Error> {
        let loading = DEFINITIONS.iter().filter(|definition| is_loading(definition));
        Ok(LoadArgs {
            given: given_options(matches, loading),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = LoadArgs::from_arg_matches(matches)?;
        Ok(())
    }
}

fn is_loading(definition: &Definition) -> bool {
    definition.heading == Heading::Loading
}

/// The argument of an engine option, by its definition.
fn engine_arg(definition: &Definition) -> Arg {
    let heading = match definition.heading {
        Heading::Engine => ENGINE,
        Heading::FastRun => FAST_RUN,
        Heading::Loading => LOADING,
    };
    let mut arg = Arg::new(definition.name())
        .long(definition.name())
        .help(definition.help)
        .help_heading(heading);
    arg = match definition.takes {
        Takes::Nothing(_) => arg.action(ArgAction::SetTrue),
        Takes::Value { name, parser, hint } => {
            let action = match definition.repeatable {
                true => ArgAction::Append,
                false => ArgAction::Set,
            };
            arg.value_name(name)
                .value_parser(parser())
                .value_hint(hint)
                .action(action)
        }
    };
    if let Some(value) = definition.default {
        arg = arg.default_value(value);
    }
    if let Some(value) = definition.value_when_alone {
        arg = arg.num_args(0..=1).default_missing_value(value);
    }
    if let Some(other) = definition.conflicts_with {
        arg = arg.conflicts_with(other.definition().name());
    }
    if let Some(other) = definition.requires {
        arg = arg.requires(other.definition().name());
    }
    arg
}

/// The options of `definitions` that the command line gives, in its order;
/// one given at its default (`--device cpu`) is as if not given.
fn given_options<'a>(matches: &ArgMatches, definitions: impl Iterator<Item = &'a Definition>) -> Vec<EngineOption> {
    let mut given: Vec<(usize, EngineOption)> = Vec::new();
    for definition in definitions {
        let name = definition.name();
        if matches.value_source(name) != Some(ValueSource::CommandLine) {
            continue;
        }
        let indices = matches.indices_of(name).into_iter().flatten();
        match definition.takes {
            Takes::Nothing(option) => given.extend(indices.map(|index| (index, option()))),
            Takes::Value { .. } => {
                let values = matches.get_many::<EngineOption>(name).into_iter().flatten().cloned();
                // A default said is kept: it overrides what other words set
                // (compare's common options under `--a-options '--device cpu'`).
                given.extend(indices.zip(values));
            }
        }
    }
    given.sort_by_key(|(index, _)| *index);
    given.into_iter().map(|(_, option)| option).collect()
}

/// Engine options alone, as words: what `compare --a-options` holds and a
/// packed model's `extra_info` carries.
#[derive(Parser, Debug)]
#[command(name = "options", no_binary_name = true)]
struct EngineWords {
    #[command(flatten)]
    engine: EngineArgs,
}

/// Reads `words` (as on the command line: `--layout`, `nchw44`) as engine
/// options, by the same definitions as the command line.
pub fn parse_engine_words(words: impl IntoIterator<Item = String>) -> Result<Vec<EngineOption>, String> {
    let parsed = EngineWords::try_parse_from(words).map_err(|err| one_line(&err))?;
    no_options_file(&parsed.engine)?;
    Ok(parsed.engine.given)
}

/// Words hold engine options themselves, not `--options FILE`.
fn no_options_file(engine: &EngineArgs) -> Result<(), String> {
    match engine.options_file {
        Some(_) => Err("--options FILE is not read here: give the options it holds".to_string()),
        None => Ok(()),
    }
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The model (.mge)
    pub model: PathBuf,

    /// Print one JSON document on stdout
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,

    #[command(flatten)]
    pub load: LoadArgs,

    /// Also list the operators by type with their parameters, MACs and FLOPs, read from the graph
    #[arg(long, help_heading = OUTPUT)]
    pub ops: bool,
}

#[derive(Args, Debug)]
#[command(mut_arg("timeout", |timeout| timeout.help("Stop a model's check after SECONDS: the model fails and the others go on")))]
pub struct CheckArgs {
    /// Testcase containers (.mge dumped with input_data), or folders to search for *.mge
    #[arg(required_unless_present = "worker")]
    pub models: Vec<PathBuf>,

    /// Check N models at a time, each batch in its own worker process
    #[arg(short, long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = SUPERVISION)]
    pub jobs: u64,

    /// Print one JSON document on stdout instead of a line per testcase
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,

    /// Also write a JUnit XML report to FILE
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub junit: Option<PathBuf>,

    /// Also write the summary as GitHub-flavoured markdown tables to FILE (`-`: stdout); appended to $GITHUB_STEP_SUMMARY where it is set
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub markdown: Option<PathBuf>,

    /// Check only slice K of N (from 1): models sorted by path, every Nth; for CI matrices
    #[arg(long, value_name = "K/N", value_parser = parse_shard, help_heading = INPUT)]
    pub shard: Option<Shard>,

    /// The engine options to check under (default: kernels on the calling thread)
    #[command(flatten)]
    pub engine: EngineArgs,

    #[command(flatten)]
    pub deadline: DeadlineArgs,

    /// Judge the outputs by these rules against the expectations instead of the model's AssertEqual operators
    #[command(flatten)]
    pub comparison: ComparisonArgs,

    #[command(flatten)]
    pub finite: FiniteArg,

    /// Fail (exit 1) for a plain model, which embeds no testcases, rather than report it as having none
    #[arg(long, help_heading = CHECKS)]
    pub require_testcases: bool,

    #[command(flatten)]
    pub repro: ReproArg,

    #[command(flatten)]
    pub reduce: ReduceArg,

    /// Serve as a worker process of `check`: indices into MODELS on stdin, results on stdout
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
    /// Keep MegEngine's runtime libraries in the cache folder, beside other versions: copied from the active virtualenv's or python3's MegEngine where one has the version, else downloaded with pip (or from a wheel you have)
    Install {
        /// MegEngine version, a release or a build of it (1.13.2+cu118) [default: --runtime-version's, else 1.13.0; for --wheel, the wheel's]
        #[arg(long)]
        version: Option<String>,
        /// Install from this wheel (MegEngine-*.whl), downloaded by other means
        #[arg(long, value_name = "FILE", conflicts_with_all = ["find_links", "from_python"])]
        wheel: Option<PathBuf>,
        /// Copy the runtime of the MegEngine this Python has installed (its megenginelite/libs and megengine/core/lib), without downloading
        #[arg(long, value_name = "PYTHON", conflicts_with = "find_links")]
        from_python: Option<PathBuf>,
        /// Let pip look for the wheel on this page or in this folder too, such as MegEngine's own index of CUDA builds
        #[arg(long, value_name = "URL|DIR")]
        find_links: Option<String>,
        /// Reinstall even when present
        #[arg(long)]
        force: bool,
    },
    /// Show which runtime is used (path, version, devices, CUDA architectures, GPUs) and which are installed
    Info {
        /// Print one JSON document on stdout
        #[arg(long)]
        json: bool,
        /// Serve as the supervised child that loads the runtime for `runtime info` and `runtime install`: its version and device counts, as one JSON line on stdout
        #[arg(long, hide = true)]
        probe: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `--timeout` says what it stops in each command that takes it.
    #[test]
    fn timeout_says_what_it_stops_in_each_command() {
        let mut cli = Cli::command();
        cli.build();
        let help = |command: &str| {
            let command = cli.find_subcommand(command).unwrap();
            let timeout = command.get_arguments().find(|arg| arg.get_id() == "timeout").unwrap();
            timeout.get_help().unwrap().to_string()
        };
        assert!(help("check").starts_with("Stop a model's check"), "{}", help("check"));
        assert!(
            help("compare").starts_with("Stop a run of A or B"),
            "{}",
            help("compare")
        );
        for command in ["run", "profile", "dump", "pack-testcases"] {
            assert_eq!(
                help(command),
                "Stop the engine's work (loading, running) after SECONDS and fail"
            );
        }
    }

    #[test]
    fn a_command_that_groups_its_options_groups_them_all() {
        let mut cli = Cli::command();
        cli.build();
        for command in cli.get_subcommands() {
            let options: Vec<&clap::Arg> = command
                .get_arguments()
                .filter(|arg| !arg.is_positional() && !arg.is_global_set() && !arg.is_hide_set())
                .filter(|arg| arg.get_id() != "help")
                .collect();
            if options.iter().any(|arg| arg.get_help_heading().is_some()) {
                for arg in options {
                    assert!(
                        arg.get_help_heading().is_some(),
                        "mge {} --help lists {} under no heading",
                        command.get_name(),
                        arg.get_id()
                    );
                }
            }
        }
    }
}
