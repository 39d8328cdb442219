use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::engine::{cuda_driver, ensure_variables_readable, take_stdout, Device, Driver};
use crate::loading::load_runtime;
use crate::mge_command::MgeCommand;
use crate::report::made_by::Making;
use crate::report::progress::InstallProgress;
use crate::report::runtime::{AlgoCacheInfo, CudaDriver, GpuInfo, InstalledRuntime, RuntimeInfo};
use crate::report::{emit, print};
use crate::runtime::algo_cache::{opted_out_by_environment, AlgoCache};
use crate::runtime::{self as lite_runtime, Files, Located, Origin, RuntimeSource, Scrutiny};
use crate::settings::Global;
use crate::supervise::child_run::{run_child, Watch};
use crate::supervise::parent::{ChildStdout, ErrorReturned, Outcome, Work};

/// Where `runtime install`'s runtime comes from, as its options say.
pub fn install_source(
    wheel: Option<PathBuf>,
    from_python: Option<PathBuf>,
    find_links: Option<String>,
) -> Result<RuntimeSource> {
    Ok(match (wheel, from_python, find_links) {
        (Some(wheel), _, _) => RuntimeSource::Wheel(wheel),
        (_, Some(python), _) => RuntimeSource::Python(python),
        (_, _, Some(links)) if links.is_empty() => bail!("--find-links: give a URL or a folder"),
        (_, _, Some(links)) => RuntimeSource::FindLinks(links),
        (None, None, None) => RuntimeSource::Registry,
    })
}

pub fn install(version: Option<&str>, source: RuntimeSource, force: bool, global: &Global) -> Result<()> {
    // The runtime this command line would use is the one to install; a wheel is its own.
    let version = match source {
        RuntimeSource::Wheel(_) => version,
        _ => version.or(global.runtime.version.as_deref()),
    };
    // The extracted library is loaded as any runtime is: in a supervised child.
    let version_of = |library: &Path| {
        let extracted = Located {
            path: library.to_path_buf(),
            origin: Origin::Option,
            install: None,
        };
        probe(&extracted, global.verbose).map(|probed| probed.version)
    };
    let library = lite_runtime::install(
        version,
        &source,
        force,
        global.quiet,
        &mut InstallProgress::new(global.quiet),
        &version_of,
    )?;
    emit(&format!("{}\n", library.display()))
}

/// Which engine is used and whether its files are as installed; a damaged
/// install, or one without a record to tell, is reported without being loaded
/// (a truncated library crashes it).
pub fn info(json: bool, global: &Global) -> Result<()> {
    // The probe's load refuses them too, but only after the runtime's files
    // are hashed (a second a gigabyte): an unreadable variable is said first.
    ensure_variables_readable()?;
    let located = lite_runtime::find(&global.runtime)?;
    let files = located.files(Scrutiny::Contents)?;
    let unloadable = matches!(files, Files::Damaged(_) | Files::Unrecorded);
    let cuda_architectures = match unloadable {
        true => None,
        false => Some(lite_runtime::recorded_or_scanned(
            located.install.as_deref(),
            &located.path,
        )?),
    };
    let mut info = RuntimeInfo {
        path: located.path.display().to_string(),
        found_by: located.origin.to_string(),
        files,
        version: None,
        cpu_devices: None,
        cuda_devices: None,
        gpus: gpus(cuda_architectures.as_ref()),
        cuda_driver: driver(),
        cuda_architectures,
        installed: installed(&located),
        shadowed_by: lite_runtime::other_mge_on_path().map(|path| path.display().to_string()),
        cache_folder: match located.origin {
            Origin::Cache | Origin::Version => None,
            _ => lite_runtime::home().ok().map(|home| home.display().to_string()),
        },
        algo_cache: algo_cache(),
    };
    let mut version = None;
    if !unloadable {
        let probed = probe(&located, global.verbose)?;
        let (major, minor, patch) = probed.version;
        version = Some((major, minor, patch));
        info.version = Some(format!("{major}.{minor}.{patch}"));
        info.cpu_devices = Some(probed.cpu_devices);
        info.cuda_devices = Some(probed.cuda_devices);
    }
    if let Some(warning) = shadow_warning(&info) {
        global.warn(warning);
    }
    print(&info, json, &Making::new(&global.runtime, version, &[]))?;
    match (&info.files, &located.install) {
        (Files::Damaged(damage), Some(dir)) => Err(lite_runtime::damaged(dir, damage)),
        (Files::Unrecorded, Some(dir)) => Err(lite_runtime::unrecorded(dir)),
        _ => Ok(()),
    }
}

/// The algorithm cache's place and size.
fn algo_cache() -> AlgoCacheInfo {
    let cache = AlgoCache::at_home().ok();
    let (files, bytes) = cache.as_ref().map_or((0, 0), AlgoCache::usage);
    AlgoCacheInfo {
        path: cache.map(|cache| cache.dir().display().to_string()),
        files,
        bytes,
        disabled: opted_out_by_environment(),
    }
}

/// What the engine reports of a runtime it loaded.
#[derive(Serialize, Deserialize)]
struct Probed {
    version: (i32, i32, i32),
    cpu_devices: usize,
    cuda_devices: usize,
}

/// Loads the runtime `located` in a supervised child (`serve_probe`), as
/// every engine load is: an engine that aborts, crashes or hangs as it
/// loads or counts its devices is one line, not this process's end.
fn probe(located: &Located, verbose: bool) -> Result<Probed> {
    let command = MgeCommand::runtime_probe().runtime(Ok(located)).verbose(verbose);
    let watch = Watch {
        stdout: ChildStdout::Replies,
        deadline: None,
        verbose,
        work: Work::Model,
        watcher: Some(&mut ErrorReturned),
    };
    let ran = run_child(&command, watch)?;
    match ran.outcome {
        Outcome::Ran => {
            let answer = ran
                .report
                .lines()
                .last()
                .context("the engine's process exited without an answer")?;
            serde_json::from_str(answer).context("the engine's process answered unreadably")
        }
        Outcome::Ended(ending) => bail!("{}", ending.said()),
        Outcome::Crashed(failure) | Outcome::Hung(failure) => Err(failure.into()),
    }
}

/// The child's side of `probe`: loads the runtime handed down and answers
/// on stdout, the engine's own output kept off it.
pub fn serve_probe(global: &Global) -> Result<()> {
    let mut answers = take_stdout()?;
    let lite = load_runtime(global, Device::Cpu)?;
    let probed = Probed {
        version: lite.version()?,
        cpu_devices: lite.cpu_device_count()?,
        cuda_devices: lite.cuda_device_count()?,
    };
    writeln!(answers, "{}", serde_json::to_string(&probed)?)?;
    answers.flush()?;
    Ok(())
}

fn driver() -> CudaDriver {
    match cuda_driver() {
        Driver::Absent(reason) => CudaDriver::Absent { reason: reason.clone() },
        Driver::Failed { call, code, name } => CudaDriver::Failed {
            call: call.to_string(),
            code: *code,
            name: name.clone(),
        },
        // The driver's version is 1000 * major + 10 * minor.
        Driver::Ready { version, .. } => CudaDriver::Ready {
            cuda_version: format!("{}.{}", version / 1000, version % 1000 / 10),
        },
    }
}

/// The GPUs the driver reports, and whether a runtime of `architectures` runs on each.
fn gpus(architectures: Option<&lite_runtime::Architectures>) -> Vec<GpuInfo> {
    let Driver::Ready { gpus, .. } = cuda_driver() else {
        return Vec::new();
    };
    gpus.iter()
        .map(|gpu| GpuInfo {
            index: gpu.index,
            name: gpu.name.clone(),
            sm: lite_runtime::sm(gpu.capability),
            compute_capability: format!("{}.{}", gpu.capability.0, gpu.capability.1),
            memory_bytes: gpu.memory_bytes,
            usable: architectures
                .filter(|found| !found.is_unknown())
                .map(|found| found.runs_on(gpu.capability)),
        })
        .collect()
}

/// The runtimes in the cache folder, the one `located` marked as used.
fn installed(located: &Located) -> Vec<InstalledRuntime> {
    let installs = lite_runtime::home().map(|home| lite_runtime::installed(&home));
    installs
        .unwrap_or_default()
        .into_iter()
        .map(|install| InstalledRuntime {
            version: install.version.to_string(),
            path: install.dir.display().to_string(),
            used: located.install.as_deref() == Some(install.dir.as_path()),
            cuda_architectures: lite_runtime::recorded_or_scanned(Some(&install.dir), &install.lite_library()).ok(),
        })
        .collect()
}

/// The warning for another `mge` that comes first on PATH.
fn shadow_warning(info: &RuntimeInfo) -> Option<String> {
    let other = info.shadowed_by.as_deref()?;
    let what = match lite_runtime::is_megengines_launcher(Path::new(other)) {
        true => " (MegEngine's Python tool launcher, from its wheel)",
        false => "",
    };
    Some(format!(
        "another mge comes first on PATH: {other}{what}; typing `mge` runs that one (README: two tools named mge)"
    ))
}
