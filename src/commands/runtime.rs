use anyhow::Result;
use serde::Serialize;

use super::Global;
use crate::engine::Lite;
use crate::report::progress::InstallProgress;
use crate::report::{emit, emit_json};
use crate::runtime::{self as lite_runtime, Origin};

pub fn install(version: &str, force: bool, global: &Global) -> Result<()> {
    let library = lite_runtime::install(version, force, global.quiet, &mut InstallProgress::new(global.quiet))?;
    emit(&format!("{}\n", library.display()))
}

#[derive(Serialize)]
struct RuntimeInfo {
    path: String,
    found_by: String,
    version: String,
    cpu_devices: usize,
    cuda_devices: usize,
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
    };
    if json {
        return emit_json(&info);
    }
    let mut text = format!(
        "path          {}\nfound by      {}\nversion       {}\ncpu devices   {}\ncuda devices  {}\n",
        info.path, info.found_by, info.version, info.cpu_devices, info.cuda_devices
    );
    if located.origin != Origin::Cache {
        text += &format!("cache folder  {}\n", lite_runtime::home().display());
    }
    emit(&text)
}
