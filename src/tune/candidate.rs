//! The engine options `mge tune` tries: each alone against the baseline, then
//! the winners combined into candidates.

use std::fmt;

use crate::engine::{Device, GraphLayout};
use crate::options::{EngineOption, TransformTarget};

/// The options to try one by one against the baseline, likeliest winners
/// first (where fast-run goes is the search's: its profiling can take
/// minutes); none that clashes with one the user gave, which the baseline keeps.
pub fn singles(user: &[EngineOption], device: Device, cores: usize) -> Vec<EngineOption> {
    let mut options: Vec<EngineOption> = Vec::new();
    if device == Device::Cpu {
        options.extend((2..=cores as u64).map(EngineOption::Threads));
    }
    options.extend([
        EngineOption::FastRun,
        EngineOption::RecordCompSeq(2),
        EngineOption::RecordCompSeq(1),
        EngineOption::WeightPreprocess,
        EngineOption::LayoutTransform(TransformTarget::Auto),
    ]);
    let layouts: &[GraphLayout] = match device {
        Device::Cpu => &[GraphLayout::Nchw44, GraphLayout::Nchw88],
        Device::Cuda(_) => &[GraphLayout::Nchw4, GraphLayout::Nchw32, GraphLayout::Nchw64],
    };
    options.extend(layouts.iter().copied().map(EngineOption::Layout));
    options.push(EngineOption::FusePreprocess);
    if device == Device::Cpu {
        options.push(EngineOption::CpuInplace);
    }
    options.push(EngineOption::GraphOptLevel(0));
    options.retain(|option| !user.iter().any(|given| given.clashes_with(option)));
    options
}

/// Options whose gain with fast-run its gain alone does not tell: fast-run
/// picks other kernels for another thread count or layout, and recording the
/// kernel sequence or preprocessing weights acts on the kernels it picked.
pub fn interacts_with_fast_run(option: &EngineOption) -> bool {
    matches!(
        option,
        EngineOption::RecordCompSeq(_)
            | EngineOption::WeightPreprocess
            | EngineOption::Threads(_)
            | EngineOption::Layout(_)
    )
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

    /// This candidate with `option`, in place of any option it clashes with.
    pub fn with_replacing(&self, option: &EngineOption) -> Candidate {
        let mut options: Vec<EngineOption> = self
            .0
            .iter()
            .filter(|have| *have != option && !have.clashes_with(option))
            .cloned()
            .collect();
        options.push(option.clone());
        Candidate(options)
    }

    /// The same options, in whatever order.
    pub fn same_options(&self, other: &Candidate) -> bool {
        self.0.len() == other.0.len() && self.0.iter().all(|option| other.has(option))
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
