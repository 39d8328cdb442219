//! The engine options `mge tune` tries: each alone against the baseline, then
//! the winners combined into candidates.

use std::fmt;

use crate::engine::{Device, GraphLayout};
use crate::options::{EngineOption, TransformTarget};

/// The options to try one by one against the baseline, cheapest to try first
/// (fast-run's profiling can take minutes, so it comes last); none that
/// clashes with one the user gave, which the baseline keeps.
pub fn singles(user: &[EngineOption], device: Device, cores: usize) -> Vec<EngineOption> {
    let mut options: Vec<EngineOption> = Vec::new();
    if device == Device::Cpu {
        options.extend((2..=cores as u64).map(EngineOption::Threads));
        options.push(EngineOption::CpuInplace);
    }
    options.push(EngineOption::LayoutTransform(TransformTarget::Auto));
    let layouts: &[GraphLayout] = match device {
        Device::Cpu => &[GraphLayout::Nchw44, GraphLayout::Nchw88],
        Device::Cuda(_) => &[GraphLayout::Nchw4, GraphLayout::Nchw32, GraphLayout::Nchw64],
    };
    options.extend(layouts.iter().copied().map(EngineOption::Layout));
    options.extend([
        EngineOption::WeightPreprocess,
        EngineOption::FusePreprocess,
        EngineOption::RecordCompSeq(1),
        EngineOption::RecordCompSeq(2),
        EngineOption::GraphOptLevel(0),
        EngineOption::FastRun,
    ]);
    options.retain(|option| !user.iter().any(|given| given.clashes_with(option)));
    options
}

/// A set of options, shown as they are written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Candidate(pub Vec<EngineOption>);

impl Candidate {
    pub fn args(&self) -> Vec<String> {
        self.0.iter().flat_map(EngineOption::args).collect()
    }

    pub fn has(&self, option: &EngineOption) -> bool {
        self.0.contains(option)
    }

    /// Does the engine profile kernels while loading it (fast-run, the global layout transform)?
    pub fn profiles_at_load(&self) -> bool {
        self.has(&EngineOption::FastRun) || self.has(&EngineOption::LayoutTransform(TransformTarget::Auto))
    }

    /// This candidate with `option` added, unless it clashes with one it has.
    pub fn with(&self, option: EngineOption) -> Option<Candidate> {
        if self.0.iter().any(|have| have.clashes_with(&option)) {
            return None;
        }
        let mut options = self.0.clone();
        options.push(option);
        Some(Candidate(options))
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
