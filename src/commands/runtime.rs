use anyhow::Result;

use super::Global;
use crate::engine::Lite;
use crate::report::progress::InstallProgress;
use crate::report::runtime::RuntimeInfo;
use crate::report::{emit, print};
use crate::runtime::{self as lite_runtime, Files, Origin, Scrutiny};

pub fn install(version: &str, force: bool, global: &Global) -> Result<()> {
    let library = lite_runtime::install(version, force, global.quiet, &mut InstallProgress::new(global.quiet))?;
    emit(&format!("{}\n", library.display()))
}

/// Which engine is used and whether its files are as installed; a damaged
/// install, or one without a record to tell, is reported without being loaded
/// (a truncated library crashes it).
pub fn info(json: bool, global: &Global) -> Result<()> {
    let located = lite_runtime::find(global.lite_lib.as_deref())?;
    let mut info = RuntimeInfo {
        path: located.path.display().to_string(),
        found_by: located.origin.to_string(),
        files: located.files(Scrutiny::Contents)?,
        version: None,
        cpu_devices: None,
        cuda_devices: None,
        shadowed_by: lite_runtime::other_mge_on_path().map(|path| path.display().to_string()),
        cache_folder: match located.origin {
            Origin::Cache => None,
            _ => lite_runtime::home().ok().map(|home| home.display().to_string()),
        },
    };
    if !matches!(info.files, Files::Damaged(_) | Files::Unrecorded) {
        let lite = Lite::load(&located.path, global.verbose)?;
        let (major, minor, patch) = lite.version()?;
        info.version = Some(format!("{major}.{minor}.{patch}"));
        info.cpu_devices = Some(lite.cpu_device_count()?);
        info.cuda_devices = Some(lite.cuda_device_count()?);
    }
    if let Some(warning) = shadow_warning(&info) {
        global.warn(warning);
    }
    print(&info, json)?;
    match (&info.files, &located.install) {
        (Files::Damaged(damage), Some(dir)) => Err(lite_runtime::damaged(dir, damage)),
        (Files::Unrecorded, Some(dir)) => Err(lite_runtime::unrecorded(dir)),
        _ => Ok(()),
    }
}

/// The warning for another `mge` that comes first on PATH.
fn shadow_warning(info: &RuntimeInfo) -> Option<String> {
    let other = info.shadowed_by.as_deref()?;
    let what = match lite_runtime::is_megengines_launcher(std::path::Path::new(other)) {
        true => " (MegEngine's Python tool launcher, from its wheel)",
        false => "",
    };
    Some(format!(
        "another mge comes first on PATH: {other}{what}; typing `mge` runs that one (README: two tools named mge)"
    ))
}
