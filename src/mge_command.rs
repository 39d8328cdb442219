//! The command lines of child `mge` processes, built from typed parts: the one
//! place that spells `mge`'s options for another process (a check worker, a
//! supervised re-run, a candidate of `tune`) or for the user to copy.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::compare::{Rules, Tolerance};
use crate::feeds::FeedOptions;
use crate::options::EngineOption;
use crate::runtime::{self, Choice, Located};
use crate::text::shell_line;

/// Names the folder a supervised child records into (`supervise::repro_record`).
pub const RECORD_ENV: &str = "MGE_REPRO_RECORD";

/// A command line of `mge`. Every value goes in the word of its option
/// (`--io=DIR`, `-i=SPEC`) and the models after `--`, so that a value or a
/// path that starts with `-` is never read as an option.
#[derive(Clone, Debug)]
pub struct MgeCommand {
    /// The options before the subcommand (`--quiet`, `--verbose`).
    global: Vec<OsString>,
    /// The subcommand and its options.
    command: Vec<OsString>,
    /// The subcommand's positional arguments (its models), after `--`.
    positionals: Vec<OsString>,
    /// Variables added to the child's environment, for the engine and the runtime's look-up.
    env: Vec<(OsString, OsString)>,
    /// Variables the user's line sets (`env NAME=VALUE mge ...`).
    user_env: Vec<(OsString, OsString)>,
    /// The folder a child runs in, where its relative paths lead (a reproducer's).
    folder: Option<PathBuf>,
}

/// The engine's switch for megdnn's naive reference kernels on the CPU
/// (`CompNodeEnv`'s MegDNN handle debug level: 0 optimized, 1 fallback, 2 naive).
const NAIVE_KERNELS_ENV: (&str, &str) = ("MGB_USE_MEGDNN_DBG", "2");

/// The engine's spin of an idle worker thread, in loop turns before it sleeps
/// (`SCQueueSynchronizer::max_spin`: some 5 ms of spinning unless set; 0 is
/// read as unset).
const WORKER_SPIN_ENV: (&str, &str) = ("MGB_WORKER_MAX_SPIN", "1");

/// `FLAG=VALUE`, one word.
fn valued(flag: &str, value: impl AsRef<OsStr>) -> OsString {
    let mut word = OsString::from(flag);
    word.push("=");
    word.push(value);
    word
}

impl MgeCommand {
    /// `mge run MODEL`.
    pub fn run(model: &Path) -> MgeCommand {
        MgeCommand::new(["run".into()]).models(&[model.to_path_buf()])
    }

    /// `mge profile MODEL --json -o TRACE --by opr --top N`: its operators'
    /// times, every one of `top` in its report, the trace in `trace`.
    pub fn profile_operators(model: &Path, trace: &Path, top: usize) -> MgeCommand {
        MgeCommand::new([
            "profile".into(),
            "--json".into(),
            valued("-o", trace),
            valued("--by", "opr"),
            valued("--top", top.to_string()),
        ])
        .models(&[model.to_path_buf()])
    }

    /// `mge dump MODEL --io IO --outputs OUTPUTS`: every var of one run, and its outputs.
    pub fn dump_io(model: &Path, io: &Path, outputs: &Path) -> MgeCommand {
        MgeCommand::new(["dump".into(), valued("--io", io), valued("--outputs", outputs)])
            .models(&[model.to_path_buf()])
    }

    /// `mge info MODEL --json`: the model's inputs and outputs, for a program to read.
    pub fn info(model: &Path) -> MgeCommand {
        MgeCommand::new(["info".into(), "--json".into()]).models(&[model.to_path_buf()])
    }

    /// `mge check --worker`: a worker that takes the models' indices on stdin.
    pub fn check_worker() -> MgeCommand {
        MgeCommand::check().arg("--worker")
    }

    /// `mge runtime info --probe`: the supervised child that loads the runtime
    /// handed down to it (`runtime`) and says what the engine reports of it.
    pub fn runtime_probe() -> MgeCommand {
        MgeCommand::new(["runtime".into(), "info".into(), "--probe".into()])
    }

    /// `mge check`.
    pub fn check() -> MgeCommand {
        MgeCommand::new(["check".into()])
    }

    /// `mge compare`, its models or tensors to follow (`models`).
    pub fn compare() -> MgeCommand {
        MgeCommand::new(["compare".into()])
    }

    /// This process's own command line, to run it again supervised.
    pub fn this_process() -> MgeCommand {
        MgeCommand::new(std::env::args_os().skip(1))
    }

    fn new(command: impl IntoIterator<Item = OsString>) -> MgeCommand {
        MgeCommand {
            global: Vec::new(),
            command: command.into_iter().collect(),
            positionals: Vec::new(),
            env: Vec::new(),
            user_env: Vec::new(),
            folder: None,
        }
    }

    /// The child runs in `folder`, where the command's relative paths lead.
    pub fn in_folder(mut self, folder: &Path) -> MgeCommand {
        self.folder = Some(folder.to_path_buf());
        self
    }

    /// The folder the child runs in, if not this process's.
    pub fn folder(&self) -> Option<&Path> {
        self.folder.as_deref()
    }

    /// The outcome of this process's look-up of the runtime, handed down: the
    /// child loads that library (or says why there is none) without looking again.
    pub fn runtime(mut self, lookup: Result<&Located, &anyhow::Error>) -> MgeCommand {
        self.env.extend(runtime::hand_down(lookup));
        self
    }

    /// The child records what it feeds the engine in `dir`, for the parent's
    /// reproducer (`supervise::repro_record`).
    pub fn record_for_repro(mut self, dir: &Path) -> MgeCommand {
        self.env.push((RECORD_ENV.into(), dir.into()));
        self
    }

    /// The runtime the user chose, for a line the user runs (a child is
    /// handed the runtime down instead): `--lite-lib=PATH` (made absolute),
    /// else `--runtime-version=VERSION`, else nothing (the newest installed).
    pub fn user_runtime(self, choice: &Choice) -> std::io::Result<MgeCommand> {
        Ok(match (&choice.lite_lib, &choice.version) {
            (Some(library), _) => self.arg(valued("--lite-lib", std::path::absolute(library)?)),
            (None, Some(version)) => self.arg(valued("--runtime-version", version)),
            (None, None) => self,
        })
    }

    /// Variables a line the user runs sets, in front of it: `env NAME=VALUE ... mge ...`.
    pub fn user_env(mut self, vars: Vec<(OsString, OsString)>) -> MgeCommand {
        self.user_env = vars;
        self
    }

    /// `--verbose`, or `--quiet`: the child's notes are not for the user.
    pub fn verbose(mut self, verbose: bool) -> MgeCommand {
        self.global.push(if verbose { "--verbose" } else { "--quiet" }.into());
        self
    }

    /// `-i SPEC` for each of `inputs`, `--seed N` and `--resize-input`.
    pub fn feeds(mut self, inputs: &[String], options: &FeedOptions) -> MgeCommand {
        for spec in inputs {
            self = self.arg(valued("-i", spec));
        }
        self = self.arg(valued("--seed", options.seed.to_string()));
        match options.resize_input {
            true => self.arg("--resize-input"),
            false => self,
        }
    }

    pub fn engine<'a>(self, options: impl IntoIterator<Item = &'a EngineOption>) -> MgeCommand {
        options
            .into_iter()
            .fold(self, |command, option| match option.flag_and_value() {
                (flag, Some(value)) => command.arg(valued(flag, value)),
                (flag, None) => command.arg(flag),
            })
    }

    /// The comparison rules as `--maxerr [NAME:]X` (or compare's `--atol` and
    /// `--rtol`), `--stat`, `--allow-outliers` and `--topk`; nothing for `None`.
    pub fn rules(mut self, rules: Option<&Rules>) -> MgeCommand {
        let Some(rules) = rules else {
            return self;
        };
        match rules.tolerance {
            Some(Tolerance::AssertEqual { maxerr }) => self = self.arg(valued("--maxerr", maxerr.to_string())),
            Some(Tolerance::Close { atol, rtol }) => {
                self = self
                    .arg(valued("--atol", atol.to_string()))
                    .arg(valued("--rtol", rtol.to_string()))
            }
            None => {}
        }
        for named in &rules.by_name {
            self = self.arg(valued("--maxerr", format!("{}:{}", named.name, named.maxerr)));
        }
        self = self.arg(valued("--stat", rules.stat.name()));
        self = self.arg(valued("--allow-outliers", rules.allow_outliers.to_string()));
        match rules.topk {
            Some(k) => self.arg(valued("--topk", k.to_string())),
            None => self,
        }
    }

    /// The engine runs megdnn's naive reference kernels instead of the optimized ones.
    pub fn naive_kernels(mut self) -> MgeCommand {
        let (name, value) = NAIVE_KERNELS_ENV;
        self.env.push((name.into(), value.into()));
        self
    }

    /// The engine's CPU worker thread sleeps as soon as it has no task, where
    /// by default it spins: a run's CPU time is then its work
    /// (`runner::rounds::Measure::Cpu`).
    pub fn workers_sleep_when_idle(mut self) -> MgeCommand {
        let (name, value) = WORKER_SPIN_ENV;
        self.env.push((name.into(), value.into()));
        self
    }

    /// `--no-testcase`: a container's model on feeds, with its real outputs.
    pub fn no_testcase(self) -> MgeCommand {
        self.arg("--no-testcase")
    }

    /// `--json --warmup N --iter N --max-duration S`: a measured run, its
    /// statistics in its report, for a program to read.
    pub fn measured(self, warmup: usize, iterations: u64, time_limit: Duration) -> MgeCommand {
        self.json()
            .runs(warmup, iterations)
            .seconds("--max-duration", Some(time_limit))
    }

    /// `--json --warmup N --iter 1 --duration S`: a run measured for S at
    /// least, whatever a run takes, its statistics in its report.
    pub fn measured_for(self, warmup: usize, duration: Duration) -> MgeCommand {
        self.json().runs(warmup, 1).seconds("--duration", Some(duration))
    }

    /// `--json`: the report as one JSON document, for a program to read.
    pub fn json(self) -> MgeCommand {
        self.arg("--json")
    }

    /// `--outputs DIR`: a run's outputs, `NAME.npy` each.
    pub fn outputs(self, dir: &Path) -> MgeCommand {
        self.arg(valued("--outputs", dir))
    }

    /// `--warmup N --iter N`.
    pub fn runs(self, warmup: usize, iterations: u64) -> MgeCommand {
        self.arg(valued("--warmup", warmup.to_string()))
            .arg(valued("--iter", iterations.to_string()))
    }

    /// `FLAG=SECONDS` (`--timeout`, `--duration`, `--max-duration`), when given.
    pub fn seconds(self, flag: &str, seconds: Option<Duration>) -> MgeCommand {
        match seconds {
            Some(seconds) => self.arg(valued(flag, seconds.as_secs_f64().to_string())),
            None => self,
        }
    }

    /// `--instances N` (and `--share-runtime-memory`), for more than one.
    pub fn instances(self, count: usize, share_memory: bool) -> MgeCommand {
        match (count > 1, share_memory) {
            (false, _) => self,
            (true, false) => self.arg(valued("--instances", count.to_string())),
            (true, true) => self
                .arg(valued("--instances", count.to_string()))
                .arg("--share-runtime-memory"),
        }
    }

    /// `--extra-output VAR` for each of `vars`.
    pub fn extra_outputs(self, vars: &[String]) -> MgeCommand {
        vars.iter()
            .fold(self, |command, var| command.arg(valued("--extra-output", var)))
    }

    /// `--expect SPEC` for each of `specs`.
    pub fn expect(self, specs: &[String]) -> MgeCommand {
        specs
            .iter()
            .fold(self, |command, spec| command.arg(valued("--expect", spec)))
    }

    /// `--profile FILE`, when given.
    pub fn profile(self, trace: Option<&Path>) -> MgeCommand {
        match trace {
            Some(trace) => self.arg(valued("--profile", trace)),
            None => self,
        }
    }

    /// Compare's `--a-options WORDS` or `--b-options WORDS` (`side`: `a` or
    /// `b`): the side's engine options, quoted as compare splits them (`shlex`).
    /// The side's own runtime library (`lite_lib`), where it has one, ends the words.
    pub fn side_options(self, side: &str, options: &[EngineOption], lite_lib: Option<&Path>) -> MgeCommand {
        let mut words: Vec<String> = options.iter().flat_map(EngineOption::args).collect();
        if let Some(path) = lite_lib {
            words.extend(["--lite-lib".to_string(), path.to_string_lossy().into_owned()]);
        }
        let joined = shlex::try_join(words.iter().map(String::as_str)).expect("no argument holds a NUL");
        self.arg(valued(&format!("--{side}-options"), joined))
    }

    /// Compare's `--a-runtime VERSION` or `--b-runtime VERSION` (`side`: `a` or `b`).
    pub fn side_runtime(self, side: &str, version: &str) -> MgeCommand {
        self.arg(valued(&format!("--{side}-runtime"), version))
    }

    /// Compare's `--no-timing`: the outputs alone.
    pub fn no_timing(self) -> MgeCommand {
        self.arg("--no-timing")
    }

    /// Compare's `--b-naive`, when `on`.
    pub fn b_naive(self, on: bool) -> MgeCommand {
        match on {
            true => self.arg("--b-naive"),
            false => self,
        }
    }

    /// `--check-finite`, when `on`.
    pub fn check_finite(self, on: bool) -> MgeCommand {
        match on {
            true => self.arg("--check-finite"),
            false => self,
        }
    }

    /// `MODEL...`, after `--`.
    pub fn models(mut self, models: &[PathBuf]) -> MgeCommand {
        self.positionals
            .extend(models.iter().map(|model| model.as_os_str().to_os_string()));
        self
    }

    fn arg(mut self, arg: impl Into<OsString>) -> MgeCommand {
        self.command.push(arg.into());
        self
    }

    /// The variables to add to the child's environment.
    pub fn env(&self) -> impl Iterator<Item = &(OsString, OsString)> {
        self.env.iter()
    }

    /// The subcommand's words: its options, then `--` and its models.
    fn subcommand(&self) -> impl Iterator<Item = &OsStr> {
        let separator = (!self.positionals.is_empty()).then_some(OsStr::new("--"));
        let options = self.command.iter().map(OsString::as_os_str);
        options
            .chain(separator)
            .chain(self.positionals.iter().map(OsString::as_os_str))
    }

    /// The arguments to start `mge` with.
    pub fn args(&self) -> impl Iterator<Item = &OsStr> {
        self.global.iter().map(OsString::as_os_str).chain(self.subcommand())
    }

    /// `mge` and the subcommand's words as the user would type them, quoted
    /// for a shell to run as given (a path's every byte kept), after the
    /// variables it sets (`env NAME=VALUE`).
    pub fn shell_line(&self) -> String {
        let assignments: Vec<OsString> = self
            .user_env
            .iter()
            .map(|(name, value)| {
                let mut assignment = name.clone();
                assignment.push("=");
                assignment.push(value);
                assignment
            })
            .collect();
        let env = (!assignments.is_empty()).then_some(OsStr::new("env"));
        let words = env
            .into_iter()
            .chain(assignments.iter().map(OsString::as_os_str))
            .chain(std::iter::once(OsStr::new("mge")))
            .chain(self.subcommand());
        shell_line(words)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStringExt;

    use super::*;

    /// Values stay in their option's word and the model comes after `--`,
    /// whatever they start with; global options stay out of the user's line.
    #[test]
    fn no_value_or_path_is_read_as_an_option() {
        let feeds = FeedOptions {
            seed: 3,
            resize_input: true,
        };
        let model = PathBuf::from(OsString::from_vec(b"-m \xff.mge".to_vec()));
        // Handed down in the environment, never on the command line.
        let located = Located {
            path: "lite.so".into(),
            origin: crate::runtime::Origin::Option,
            install: None,
        };
        let command = MgeCommand::run(&model)
            .feeds(&["-0.5".into()], &feeds)
            .engine(&[
                EngineOption::Threads(2),
                EngineOption::FastRunCache("-c".into()),
                EngineOption::FastRun,
            ])
            .runtime(Ok(&located))
            .verbose(false);
        let args: Vec<&OsStr> = command.args().collect();
        let mut expected: Vec<OsString> = [
            "--quiet",
            "run",
            "-i=-0.5",
            "--seed=3",
            "--resize-input",
            "--threads=2",
            "--fast-run-cache=-c",
            "--fast-run",
            "--",
        ]
        .map(OsString::from)
        .to_vec();
        expected.push(model.clone().into_os_string());
        assert_eq!(args, expected);
        assert_eq!(
            command.shell_line(),
            r"mge run -i=-0.5 --seed=3 --resize-input --threads=2 --fast-run-cache=-c --fast-run -- $'-m \xff.mge'"
        );
        let worker = MgeCommand::check_worker();
        let args: Vec<&OsStr> = worker.args().collect();
        assert_eq!(args, ["check", "--worker"], "no `--` without models");
    }
}
