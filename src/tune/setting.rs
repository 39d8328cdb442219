//! The engine options `mge tune` tries, one setting at a time.

use std::fmt;

use crate::cli::EngineArgs;
use crate::engine::Device;

/// One engine option with its value, as `mge run` takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    Threads(u64),
    CpuInplace,
    FastRun,
    WeightPreprocess,
    FusePreprocess,
    RecordCompSeq(i32),
    LayoutTransform,
    Layout(&'static str),
    GraphOptLevel(i32),
}

impl Setting {
    pub fn args(&self) -> Vec<String> {
        let flag = |name: &str| vec![format!("--{name}")];
        let valued = |name: &str, value: String| vec![format!("--{name}"), value];
        match *self {
            Setting::Threads(n) => valued("threads", n.to_string()),
            Setting::CpuInplace => flag("cpu-inplace"),
            Setting::FastRun => flag("fast-run"),
            Setting::WeightPreprocess => flag("weight-preprocess"),
            Setting::FusePreprocess => flag("fuse-preprocess"),
            Setting::RecordCompSeq(level) => valued("record-comp-seq", level.to_string()),
            Setting::LayoutTransform => flag("layout-transform"),
            Setting::Layout(layout) => valued("layout", layout.to_string()),
            Setting::GraphOptLevel(level) => valued("graph-opt-level", level.to_string()),
        }
    }

    /// Two settings of one option (or of options that exclude each other) never combine.
    pub fn clashes_with(&self, other: &Setting) -> bool {
        use Setting::*;
        let group = |setting: &Setting| match setting {
            // Kernels on the calling thread make the thread count moot.
            Threads(_) | CpuInplace => 0,
            FastRun => 1,
            WeightPreprocess => 2,
            FusePreprocess => 3,
            RecordCompSeq(_) => 4,
            // The global transform chooses the layouts the static ones fix.
            LayoutTransform | Layout(_) => 5,
            GraphOptLevel(_) => 6,
        };
        group(self) == group(other)
    }

    /// Has the user fixed this option? Then it is part of the baseline, not tuned.
    fn fixed_by(&self, user: &EngineArgs) -> bool {
        match self {
            Setting::Threads(_) | Setting::CpuInplace => user.threads.is_some() || user.cpu_inplace,
            Setting::FastRun => user.fast_run,
            Setting::WeightPreprocess => user.weight_preprocess,
            Setting::FusePreprocess => user.fuse_preprocess,
            Setting::RecordCompSeq(_) => user.record_comp_seq.is_some() || user.fake_first,
            Setting::LayoutTransform | Setting::Layout(_) => user.layout.is_some() || user.layout_transform.is_some(),
            Setting::GraphOptLevel(_) => user.graph_opt_level.is_some(),
        }
    }
}

/// The settings to try one by one against the baseline, cheapest to try first
/// (fast-run's profiling can take minutes, so it comes last).
pub fn singles(user: &EngineArgs, device: Device, cores: usize) -> Vec<Setting> {
    let mut settings: Vec<Setting> = Vec::new();
    if device == Device::Cpu {
        settings.extend((2..=cores as u64).map(Setting::Threads));
        settings.push(Setting::CpuInplace);
    }
    settings.push(Setting::LayoutTransform);
    let layouts: &[&'static str] = match device {
        Device::Cpu => &["nchw44", "nchw88"],
        Device::Cuda(_) => &["nchw4", "nchw32", "nchw64"],
    };
    settings.extend(layouts.iter().map(|layout| Setting::Layout(layout)));
    settings.extend([
        Setting::WeightPreprocess,
        Setting::FusePreprocess,
        Setting::RecordCompSeq(1),
        Setting::RecordCompSeq(2),
        Setting::GraphOptLevel(0),
        Setting::FastRun,
    ]);
    settings.retain(|setting| !setting.fixed_by(user));
    settings
}

/// A set of settings, shown as the options that make it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Candidate(pub Vec<Setting>);

impl Candidate {
    pub fn args(&self) -> Vec<String> {
        self.0.iter().flat_map(Setting::args).collect()
    }

    pub fn has(&self, setting: Setting) -> bool {
        self.0.contains(&setting)
    }

    /// Does the engine profile kernels while loading it (fast-run, the global layout transform)?
    pub fn profiles_at_load(&self) -> bool {
        self.has(Setting::FastRun) || self.has(Setting::LayoutTransform)
    }

    /// This candidate with `setting` added, unless it clashes with one it has.
    pub fn with(&self, setting: Setting) -> Option<Candidate> {
        if self.0.iter().any(|have| have.clashes_with(&setting)) {
            return None;
        }
        let mut settings = self.0.clone();
        settings.push(setting);
        Some(Candidate(settings))
    }
}

impl fmt::Display for Candidate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.is_empty() {
            true => f.write_str("(baseline)"),
            false => f.write_str(&self.args().join(" ")),
        }
    }
}
