use anyhow::Result;

use super::Global;
use crate::engine::Lite;
use crate::report::progress::InstallProgress;
use crate::report::runtime::RuntimeInfo;
use crate::report::{emit, print};
use crate::runtime::{self as lite_runtime, Origin};

pub fn install(version: &str, force: bool, global: &Global) -> Result<()> {
    let library = lite_runtime::install(version, force, global.quiet, &mut InstallProgress::new(global.quiet))?;
    emit(&format!("{}\n", library.display()))
}

pub fn info(json: bool, global: &Global) -> Result<()> {
    let located = lite_runtime::locate(global.lite_lib.as_deref())?;
    let lite = Lite::load(&located.path, global.verbose)?;
    let (major, minor, patch) = lite.version()?;
    let info = RuntimeInfo {
        path: located.path.display().to_string(),
        found_by: located.origin.to_string(),
        version: format!("{major}.{minor}.{patch}"),
        cpu_devices: lite.cpu_device_count()?,
        cuda_devices: lite.cuda_device_count()?,
        cache_folder: (located.origin != Origin::Cache).then(|| lite_runtime::home().display().to_string()),
    };
    print(&info, json)
}
