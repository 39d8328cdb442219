//! `mge runtime info`: which engine the tool uses.

use serde::Serialize;

use super::Report;

#[derive(Serialize)]
pub struct RuntimeInfo {
    pub path: String,
    pub found_by: String,
    pub version: String,
    pub cpu_devices: usize,
    pub cuda_devices: usize,
    /// Where `mge runtime install` puts the engine, shown when this one came from elsewhere.
    #[serde(skip)]
    pub cache_folder: Option<String>,
}

impl Report for RuntimeInfo {
    fn to_text(&self) -> String {
        let mut text = format!(
            "path          {}\nfound by      {}\nversion       {}\ncpu devices   {}\ncuda devices  {}\n",
            self.path, self.found_by, self.version, self.cpu_devices, self.cuda_devices
        );
        if let Some(folder) = &self.cache_folder {
            text += &format!("cache folder  {folder}\n");
        }
        text
    }
}
