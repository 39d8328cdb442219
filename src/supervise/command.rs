//! The command lines of child `mge` processes, built from typed parts: the one
//! place that spells `mge`'s options for another process (a check worker, a
//! supervised re-run, a candidate of `tune`) or for the user to copy.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::compare::{Rules, Tolerance};
use crate::feeds::FeedOptions;
use crate::options::EngineOption;
use crate::runtime::{self, Located};

#[derive(Clone, Debug)]
pub struct MgeCommand {
    /// The options before the subcommand (`--quiet`, `--verbose`).
    global: Vec<OsString>,
    /// The subcommand and its arguments.
    command: Vec<OsString>,
    /// Variables added to the child's environment, for the engine and the runtime's look-up.
    env: Vec<(OsString, OsString)>,
}

/// The engine's switch for megdnn's naive reference kernels on the CPU
/// (`CompNodeEnv`'s MegDNN handle debug level: 0 optimized, 1 fallback, 2 naive).
const NAIVE_KERNELS_ENV: (&str, &str) = ("MGB_USE_MEGDNN_DBG", "2");

impl MgeCommand {
    /// `mge run MODEL`.
    pub fn run(model: &Path) -> MgeCommand {
        MgeCommand::new(["run".into(), model.into()])
    }

    /// `mge dump MODEL --io IO --outputs OUTPUTS`: every var of one run, and its outputs.
    pub fn dump_io(model: &Path, io: &Path, outputs: &Path) -> MgeCommand {
        MgeCommand::new([
            "dump".into(),
            model.into(),
            "--io".into(),
            io.into(),
            "--outputs".into(),
            outputs.into(),
        ])
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
            self = self.arg("-i").arg(spec);
        }
        self = self.arg("--seed").arg(options.seed.to_string());
        match options.resize_input {
            true => self.arg("--resize-input"),
            false => self,
        }
    }

    pub fn engine<'a>(self, options: impl IntoIterator<Item = &'a EngineOption>) -> MgeCommand {
        options
            .into_iter()
            .flat_map(EngineOption::args)
            .fold(self, MgeCommand::arg)
    }

    /// The comparison rules as `--maxerr [NAME:]X`, `--stat`, `--allow-outliers`
    /// and `--topk`; nothing for `None`. (`--atol/--rtol` are compare's alone,
    /// which starts no child with them.)
    pub fn rules(mut self, rules: Option<&Rules>) -> MgeCommand {
        let Some(rules) = rules else {
            return self;
        };
        if let Some(Tolerance::AssertEqual { maxerr }) = rules.tolerance {
            self = self.arg("--maxerr").arg(maxerr.to_string());
        }
        for named in &rules.by_name {
            self = self.arg("--maxerr").arg(format!("{}:{}", named.name, named.maxerr));
        }
        self = self.arg("--stat").arg(rules.stat.name());
        self = self.arg("--allow-outliers").arg(rules.allow_outliers.to_string());
        match rules.topk {
            Some(k) => self.arg("--topk").arg(k.to_string()),
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

    /// `--json --warmup N --iter N --max-duration S --outputs DIR`:
    /// a measured run, its statistics in its report, for a program to read.
    pub fn measured(self, warmup: usize, iterations: u64, time_limit: Duration, outputs: &Path) -> MgeCommand {
        self.arg("--json")
            .arg("--warmup")
            .arg(warmup.to_string())
            .arg("--iter")
            .arg(iterations.to_string())
            .arg("--max-duration")
            .arg(time_limit.as_secs_f64().to_string())
            .arg("--outputs")
            .arg(outputs)
    }

    /// `--check-finite`, when `on`.
    pub fn check_finite(self, on: bool) -> MgeCommand {
        match on {
            true => self.arg("--check-finite"),
            false => self,
        }
    }

    /// `-- MODEL...`
    pub fn models(self, models: &[PathBuf]) -> MgeCommand {
        models.iter().fold(self.arg("--"), |command, model| command.arg(model))
    }

    fn arg(mut self, arg: impl Into<OsString>) -> MgeCommand {
        self.command.push(arg.into());
        self
    }

    /// The variables to add to the child's environment.
    pub fn env(&self) -> impl Iterator<Item = &(OsString, OsString)> {
        self.env.iter()
    }

    /// The arguments to start `mge` with.
    pub fn args(&self) -> impl Iterator<Item = &OsString> {
        self.global.iter().chain(&self.command)
    }

    /// `mge` and the subcommand's arguments, as the user would type them.
    pub fn words(&self) -> Vec<String> {
        let command = self.command.iter().map(|arg| arg.to_string_lossy().into_owned());
        std::iter::once("mge".to_string()).chain(command).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_options_come_before_the_subcommand_and_stay_out_of_its_words() {
        let feeds = FeedOptions {
            seed: 3,
            resize_input: true,
        };
        let command = MgeCommand::run(Path::new("m.mge"))
            .feeds(&["x:#rand(0,1)".into()], &feeds)
            .engine(&[EngineOption::Threads(2)])
            .verbose(false);
        let args: Vec<&OsString> = command.args().collect();
        assert_eq!(
            args,
            [
                "--quiet",
                "run",
                "m.mge",
                "-i",
                "x:#rand(0,1)",
                "--seed",
                "3",
                "--resize-input",
                "--threads",
                "2"
            ]
        );
        let words = command.words();
        assert_eq!(words[..3], ["mge", "run", "m.mge"]);
        assert!(words[3..]
            .iter()
            .map(String::as_str)
            .eq(args[3..].iter().map(|arg| arg.to_str().unwrap())));
    }
}
