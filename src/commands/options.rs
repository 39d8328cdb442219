//! Engine options and feeds shared by the commands that run a model.

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::Global;
use crate::cli::{EngineArgs, FeedArgs, IterationArgs, LayoutArg, LayoutTransformTarget};
use crate::engine::{Device, GraphLayout, Lite, NetworkOptions};
use crate::feeds::{self, Feed, FeedOptions};
use crate::output_files::write_atomically;
use crate::runner::testcase::testcase_feeds;
use crate::runner::{Plan, Session};
use crate::runtime;
use crate::tensor::TensorInfo;
use crate::text::quoted_list;

pub fn parse_device(text: &str) -> Result<Device> {
    match text.split_once(':') {
        None if text == "cpu" => Ok(Device::Cpu),
        None if text == "cuda" => Ok(Device::Cuda(0)),
        Some(("cuda", id)) => {
            Ok(Device::Cuda(id.parse().with_context(|| {
                format!("--device {text}: '{id}' is not a device number")
            })?))
        }
        _ => bail!("--device {text}: expected cpu, cuda or cuda:ID"),
    }
}

/// The network options `args` ask for, with the pairings the engine would only
/// refuse with an assertion settled first: refused here in one line, or (the
/// sanity check that comp-seq recording excludes) turned off with a note.
pub fn network_options(args: &EngineArgs, global: &Global) -> Result<NetworkOptions> {
    let device = parse_device(&args.device)?;
    let layout_transform = match (args.layout_transform, device) {
        (None, _) => false,
        (Some(LayoutTransformTarget::Auto), _)
        | (Some(LayoutTransformTarget::Cpu), Device::Cpu)
        | (Some(LayoutTransformTarget::Cuda), Device::Cuda(_)) => true,
        (Some(target), _) => bail!("--layout-transform {target:?} does not match --device {device}; the transform targets the device the model runs on"),
    };
    if args.tensorrt && device == Device::Cpu {
        bail!("--tensorrt needs --device cuda");
    }
    if device == Device::Cpu {
        // This MegEngine build has no JIT compiler for the CPU: the engine fails, or aborts.
        if let Some(level) = args.jit.filter(|level| *level > 0) {
            bail!("--jit {level} needs --device cuda (MegEngine has no JIT compiler for the CPU)");
        }
        if args.graph_opt_level == Some(3) {
            bail!("--graph-opt-level 3 adds JIT fusion, which needs --device cuda (MegEngine has no JIT compiler for the CPU); use 2 or less");
        }
    }
    let record = args.record_comp_seq.unwrap_or(0);
    if record == 2 && args.fake_first {
        bail!("--fake-first cannot be combined with --record-comp-seq 2, which records the first run itself (use level 1, or drop --fake-first)");
    }
    let mut no_sanity_check = args.no_sanity_check;
    if !no_sanity_check && (record == 2 || (record == 1 && args.fake_first)) {
        let with = if args.fake_first { " with --fake-first" } else { "" };
        global.note(format!(
            "--record-comp-seq {record}{with} needs the first run's var sanity check off: turned off, as with --no-sanity-check"
        ));
        no_sanity_check = true;
    }
    Ok(NetworkOptions {
        device,
        threads: args.threads.map(|n| n as usize),
        cpu_inplace: args.cpu_inplace,
        fast_run: args.fast_run,
        reproducible: args.reproducible,
        workspace_limit: args.workspace_limit,
        layout_transform,
        tensorrt: args.tensorrt,
        weight_preprocess: args.weight_preprocess,
        fuse_preprocess: args.fuse_preprocess,
        fake_first: args.fake_first,
        const_shape: args.const_shape,
        no_sanity_check,
        record_comp_seq: args.record_comp_seq,
        graph_opt_level: args.graph_opt_level,
        async_level: args.async_level,
        jit_level: args.jit,
        layout: args.layout.map(|layout| match layout {
            LayoutArg::Nchw44 => GraphLayout::Nchw44,
            LayoutArg::Nchw44Dot => GraphLayout::Nchw44Dot,
            LayoutArg::Nchw88 => GraphLayout::Nchw88,
            LayoutArg::Nhwcd4 => GraphLayout::Nhwcd4,
            LayoutArg::Nchw4 => GraphLayout::Nchw4,
            LayoutArg::Nchw32 => GraphLayout::Nchw32,
            LayoutArg::Nchw64 => GraphLayout::Nchw64,
        }),
        profile_json: None,
        io_dump: None,
    })
}

/// The user's feeds, or `#rand` for every input when there are none.
pub fn resolve_feeds(specs: &[String], inputs: &[TensorInfo], args: &FeedArgs, global: &Global) -> Result<Vec<Feed>> {
    let feed_options = FeedOptions {
        seed: args.seed,
        resize_input: args.resize_input,
    };
    if specs.is_empty() {
        let defaults: Vec<String> = inputs
            .iter()
            .map(|input| format!("{}:{}", input.name, feeds::default_spec(input)))
            .collect();
        if !inputs.is_empty() {
            global.note(format!("no --input given; feeding {}", defaults.join(", ")));
        }
        return feeds::resolve(&defaults, inputs, &feed_options);
    }
    let feeds = feeds::resolve(specs, inputs, &feed_options)?;
    for feed in &feeds {
        if let Some(stored) = feed.converted_from {
            global.note(format!(
                "input '{}': {stored} values from '{}' converted to {}",
                feed.name, feed.source, feed.tensor.dtype
            ));
        }
    }
    let missing: Vec<&str> = inputs
        .iter()
        .filter(|input| !feeds.iter().any(|feed| feed.name == input.name))
        .map(|input| input.name.as_str())
        .collect();
    if !missing.is_empty() {
        bail!(
            "no feed for input {}: add -i NAME:SOURCE for each",
            quoted_list(&missing)
        );
    }
    Ok(feeds)
}

/// The user's feeds; without any, `first_testcase`'s values (a container's
/// testcase 0, with a note) when given, else `#rand` (`resolve_feeds`).
pub fn feeds_or_first_testcase(
    lite: &Lite,
    first_testcase: Option<&[u8]>,
    model_path: &Path,
    specs: &[String],
    session: &Session,
    args: &FeedArgs,
    global: &Global,
) -> Result<Vec<Feed>> {
    match first_testcase {
        Some(testcase) if specs.is_empty() => {
            global.note(format!(
                "no --input given; feeding testcase 0 of {}",
                model_path.display()
            ));
            testcase_feeds(lite, testcase, session, 0).context("testcase 0")
        }
        _ => resolve_feeds(specs, &session.inputs, args, global),
    }
}

/// The runtime, with the device `engine` names checked, using the fast-run cache it names.
pub fn load_runtime(engine: &EngineArgs, global: &Global) -> Result<Lite> {
    let lite = runtime::load(global.lite_lib.as_deref(), global.verbose)?;
    // Before loading: a missing device is not the model's fault.
    lite.check_device(parse_device(&engine.device)?)?;
    if let Some(cache) = &engine.fast_run_cache {
        lite.use_algo_cache(cache)?;
    }
    Ok(lite)
}

pub fn plan(iterations: &IterationArgs, global: &Global) -> Plan {
    Plan {
        warmup: iterations.warmup,
        iterations: iterations.iter,
        duration: iterations.duration,
        verbose: global.verbose,
    }
}

/// Writes the fast-run cache `engine` names, if any. The engine writes it to a
/// temporary file first, so a failure leaves the previous cache intact.
pub fn save_algo_cache(lite: &Lite, engine: &EngineArgs) -> Result<()> {
    let Some(cache) = &engine.fast_run_cache else {
        return Ok(());
    };
    let dumped = tempfile::NamedTempFile::new().context("--fast-run-cache: cannot create a temporary file")?;
    lite.dump_algo_cache(dumped.path())?;
    let contents = std::fs::read(dumped.path()).context("--fast-run-cache: cannot read the engine's cache")?;
    write_atomically(cache, &contents).context("--fast-run-cache")
}

/// Options under which the engine would pass every testcase unchecked.
pub fn refuse_unchecked_testcases(options: &NetworkOptions) -> Result<()> {
    if options.record_comp_seq == Some(2) {
        bail!("--record-comp-seq 2 disables the engine's AssertEqual, so testcases cannot be checked (use level 1, or --no-testcase with `mge run`)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_devices() {
        assert_eq!(parse_device("cpu").unwrap(), Device::Cpu);
        assert_eq!(parse_device("cuda").unwrap(), Device::Cuda(0));
        assert_eq!(parse_device("cuda:3").unwrap(), Device::Cuda(3));
        for bad in ["gpu", "cuda:x", "cpu:1", ""] {
            assert!(parse_device(bad).is_err(), "{bad}");
        }
    }
}
