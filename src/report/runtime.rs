//! `mge runtime info`: which engine the tool uses, and whether its files are as installed.

use serde::Serialize;

use super::Report;
use crate::runtime::{list, Files};
use crate::text::printable;

#[derive(Serialize)]
pub struct RuntimeInfo {
    pub path: String,
    pub found_by: String,
    pub files: Files,
    /// What the library reports; not asked of a damaged install, which is not loaded.
    pub version: Option<String>,
    pub cpu_devices: Option<usize>,
    pub cuda_devices: Option<usize>,
    /// Another `mge` that comes first on PATH.
    pub shadowed_by: Option<String>,
    /// Where `mge runtime install` puts the engine, shown when this one came from elsewhere.
    #[serde(skip)]
    pub cache_folder: Option<String>,
}

impl Report for RuntimeInfo {
    fn to_text(&self) -> String {
        let or_dash = |value: Option<String>| value.unwrap_or_else(|| "-".to_string());
        let mut text = format!(
            "path          {}\nfound by      {}\nfiles         {}\nversion       {}\ncpu devices   {}\ncuda devices  {}\n",
            printable(&self.path),
            printable(&self.found_by),
            files_text(&self.files),
            or_dash(self.version.clone()),
            or_dash(self.cpu_devices.map(|n| n.to_string())),
            or_dash(self.cuda_devices.map(|n| n.to_string())),
        );
        if let Some(folder) = &self.cache_folder {
            text += &format!("cache folder  {}\n", printable(folder));
        }
        text
    }
}

fn files_text(files: &Files) -> String {
    match files {
        Files::Verified => "verified (sizes and SHA-256 as installed)".into(),
        Files::Unrecorded => {
            "NOT VERIFIED: no record (installed by an older mge; `mge runtime install` records them)".into()
        }
        Files::NotOurs => "not verified (not installed by mge)".into(),
        Files::Damaged(damage) => format!("DAMAGED: {}", list(damage)),
    }
}
