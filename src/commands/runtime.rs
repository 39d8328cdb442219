use anyhow::Result;
use serde::Serialize;

use super::Global;
use crate::engine::Lite;
use crate::report::progress::InstallProgress;
use crate::report::{emit, emit_json};
use crate::runtime::{self as lite_runtime, Files, Origin, Scrutiny};

pub fn install(version: &str, force: bool, global: &Global) -> Result<()> {
    let library = lite_runtime::install(version, force, global.quiet, &mut InstallProgress::new(global.quiet))?;
    emit(&format!("{}\n", library.display()))
}

#[derive(Serialize)]
struct RuntimeInfo {
    path: String,
    found_by: String,
    files: Files,
    /// What the library reports; not asked of a damaged install, which is not loaded.
    version: Option<String>,
    cpu_devices: Option<usize>,
    cuda_devices: Option<usize>,
    /// Another `mge` that comes first on PATH.
    shadowed_by: Option<String>,
}

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
    };
    if !matches!(info.files, Files::Damaged(_)) {
        let lite = Lite::load(&located.path, global.verbose)?;
        let (major, minor, patch) = lite.version()?;
        info.version = Some(format!("{major}.{minor}.{patch}"));
        info.cpu_devices = Some(lite.cpu_device_count()?);
        info.cuda_devices = Some(lite.cuda_device_count()?);
    }
    if let Some(other) = &info.shadowed_by {
        let what = match lite_runtime::is_megengines_launcher(std::path::Path::new(other)) {
            true => " (MegEngine's Python tool launcher, from its wheel)",
            false => "",
        };
        global.warn(format!(
            "another mge comes first on PATH: {other}{what}; typing `mge` runs that one (README: two tools named mge)"
        ));
    }
    if json {
        emit_json(&info)?;
    } else {
        emit(&info_text(&info, located.origin))?;
    }
    match (&info.files, &located.install) {
        (Files::Damaged(damage), Some(dir)) => Err(lite_runtime::damaged(dir, damage)),
        _ => Ok(()),
    }
}

fn info_text(info: &RuntimeInfo, origin: Origin) -> String {
    let or_dash = |value: Option<String>| value.unwrap_or_else(|| "-".to_string());
    let mut text = format!(
        "path          {}\nfound by      {}\nfiles         {}\nversion       {}\ncpu devices   {}\ncuda devices  {}\n",
        info.path,
        info.found_by,
        info.files,
        or_dash(info.version.clone()),
        or_dash(info.cpu_devices.map(|n| n.to_string())),
        or_dash(info.cuda_devices.map(|n| n.to_string())),
    );
    if origin != Origin::Cache {
        text += &format!("cache folder  {}\n", lite_runtime::home().display());
    }
    text
}
