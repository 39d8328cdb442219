//! The command lines of child `mge` processes, built from typed parts: the one
//! place that spells `mge`'s options for another process (a check worker, a
//! supervised re-run, a candidate of `tune`) or for the user to copy.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::compare::{Rules, Tolerance};
use crate::feeds::FeedOptions;
use crate::options::EngineOption;
use crate::runtime::{self, Located};
use crate::text::shell_line;

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
}

/// The engine's switch for megdnn's naive reference kernels on the CPU
/// (`CompNodeEnv`'s MegDNN handle debug level: 0 optimized, 1 fallback, 2 naive).
const NAIVE_KERNELS_ENV: (&str, &str) = ("MGB_USE_MEGDNN_DBG", "2");

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

    /// `mge dump MODEL --io IO --outputs OUTPUTS`: every var of one run, and its outputs.
    pub fn dump_io(model: &Path, io: &Path, outputs: &Path) -> MgeCommand {
        MgeCommand::new(["dump".into(), valued("--io", io), valued("--outputs", outputs)])
            .models(&[model.to_path_buf()])
    }

    /// `mge check --worker`: a worker that takes the models' indices on stdin.
    pub fn check_worker() -> MgeCommand {
        MgeCommand::new(["check".into(), "--worker".into()])
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
        }
    }

    /// The outcome of this process's look-up of the runtime, handed down: the
    /// child loads that library (or says why there is none) without looking again.
    pub fn runtime(mut self, lookup: Result<&Located, &anyhow::Error>) -> MgeCommand {
        self.env.extend(runtime::hand_down(lookup));
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

    /// The comparison rules as `--maxerr [NAME:]X`, `--stat`, `--allow-outliers`
    /// and `--topk`; nothing for `None`. (`--atol/--rtol` are compare's alone,
    /// which starts no child with them.)
    pub fn rules(mut self, rules: Option<&Rules>) -> MgeCommand {
        let Some(rules) = rules else {
            return self;
        };
        if let Some(Tolerance::AssertEqual { maxerr }) = rules.tolerance {
            self = self.arg(valued("--maxerr", maxerr.to_string()));
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

    /// `--no-testcase`: a container's model on feeds, with its real outputs.
    pub fn no_testcase(self) -> MgeCommand {
        self.arg("--no-testcase")
    }

    /// `--json --warmup N --iter N --max-duration S`: a measured run, its
    /// statistics in its report, for a program to read.
    pub fn measured(self, warmup: usize, iterations: u64, time_limit: Duration) -> MgeCommand {
        self.arg("--json")
            .arg(valued("--warmup", warmup.to_string()))
            .arg(valued("--iter", iterations.to_string()))
            .arg(valued("--max-duration", time_limit.as_secs_f64().to_string()))
    }

    /// `--outputs DIR`: a run's outputs, `NAME.npy` each.
    pub fn outputs(self, dir: &Path) -> MgeCommand {
        self.arg(valued("--outputs", dir))
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
    /// for a shell to run as given (a path's every byte kept).
    pub fn shell_line(&self) -> String {
        shell_line(std::iter::once(OsStr::new("mge")).chain(self.subcommand()))
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
