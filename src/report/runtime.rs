//! `mge runtime info`: which engine the tool uses, whether its files are as
//! installed, which GPUs it can run on, and which runtimes are installed.

use serde::Serialize;

use super::Report;
use crate::runtime::{list, Architectures, Files};
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
    /// The architectures the engine has CUDA kernels and PTX for: empty lists
    /// where the library carries none; not read from a damaged install.
    pub cuda_architectures: Option<Architectures>,
    pub cuda_driver: CudaDriver,
    /// The GPUs the driver reports.
    pub gpus: Vec<GpuInfo>,
    /// The runtimes in the cache folder, oldest first.
    pub installed: Vec<InstalledRuntime>,
    /// Another `mge` that comes first on PATH.
    pub shadowed_by: Option<String>,
    /// Where `mge runtime install` puts the engine, shown when this one came from elsewhere.
    #[serde(skip)]
    pub cache_folder: Option<String>,
    /// Where fast-run keeps what it profiled, and how much it holds.
    pub algo_cache: AlgoCacheInfo,
}

/// The algorithm cache (`runtime::algo_cache`): its folder, its files and
/// their size; whether the environment turned it off.
#[derive(Serialize)]
pub struct AlgoCacheInfo {
    pub path: Option<String>,
    pub files: usize,
    pub bytes: u64,
    /// `MGE_NO_ALGO_CACHE` is set.
    pub disabled: bool,
}

/// What became of asking the NVIDIA driver.
#[derive(Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum CudaDriver {
    /// `libcuda.so.1` cannot be loaded: no NVIDIA driver.
    Absent { reason: String },
    Failed {
        call: String,
        code: i32,
        name: Option<String>,
    },
    /// The driver's CUDA version, e.g. `12.2`.
    Ready { cuda_version: String },
}

#[derive(Serialize)]
pub struct GpuInfo {
    /// As `--device cuda:ID` counts.
    pub index: u32,
    pub name: String,
    /// `sm_90`.
    pub sm: String,
    /// `9.0`.
    pub compute_capability: String,
    pub memory_bytes: u64,
    /// Whether the runtime has kernels for it; `None` where its list is unknown.
    pub usable: Option<bool>,
}

#[derive(Serialize)]
pub struct InstalledRuntime {
    pub version: String,
    pub path: String,
    /// The one this command found.
    pub used: bool,
    /// As recorded at install (or read from an older install's library); `None` where unreadable.
    pub cuda_architectures: Option<Architectures>,
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
        text += &format!(
            "cuda kernels  {}\n",
            or_dash(self.cuda_architectures.as_ref().map(architectures_text))
        );
        let no_gpu = match (&self.cuda_driver, self.gpus.is_empty()) {
            (CudaDriver::Ready { .. }, true) => ", no GPU visible",
            _ => "",
        };
        text += &format!("cuda driver   {}{no_gpu}\n", driver_text(&self.cuda_driver));
        for gpu in &self.gpus {
            let usable = match gpu.usable {
                Some(true) => "this runtime runs on it".to_string(),
                Some(false) => format!("this runtime cannot run on it (no {} kernels)", gpu.sm),
                None => "unknown whether this runtime runs on it".to_string(),
            };
            text += &format!(
                "gpu {:<9} {}, {}, {:.1} GiB: {usable}\n",
                gpu.index,
                printable(&gpu.name),
                gpu.sm,
                gpu.memory_bytes as f64 / (1u64 << 30) as f64
            );
        }
        for (i, install) in self.installed.iter().enumerate() {
            let heading = if i == 0 { "installed" } else { "" };
            let used = if install.used { " (used)" } else { "" };
            text += &format!(
                "{heading:<13} {}{used}: {}\n",
                install.version,
                or_dash(install.cuda_architectures.as_ref().map(architectures_text))
            );
        }
        if let Some(folder) = &self.cache_folder {
            text += &format!("cache folder  {}\n", printable(folder));
        }
        text += &format!("algo cache    {}\n", algo_cache_text(&self.algo_cache));
        text
    }
}

/// `/root/.cache/mge/algo-cache: 2 files, 1.2 MiB`.
fn algo_cache_text(cache: &AlgoCacheInfo) -> String {
    let Some(path) = &cache.path else {
        return "- (no cache folder)".to_string();
    };
    let mut text = match cache.files {
        0 => format!("{}: empty", printable(path)),
        files => format!(
            "{}: {files} file{}, {}",
            printable(path),
            if files == 1 { "" } else { "s" },
            size_text(cache.bytes)
        ),
    };
    if cache.disabled {
        text.push_str(" (off: MGE_NO_ALGO_CACHE)");
    }
    text
}

/// `812 bytes`, `3.4 KiB`, `1.2 MiB`.
fn size_text(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

fn architectures_text(architectures: &Architectures) -> String {
    match architectures.is_unknown() {
        true => "none found (a build without CUDA, or not in the wheel's layout)".into(),
        false => architectures.to_text(),
    }
}

fn driver_text(driver: &CudaDriver) -> String {
    match driver {
        CudaDriver::Absent { .. } => "none (libcuda.so.1 cannot be loaded)".into(),
        CudaDriver::Failed { call, code, name } => match name {
            Some(name) => format!("failed: {call} returned {code} ({})", printable(name)),
            None => format!("failed: {call} returned {code}"),
        },
        CudaDriver::Ready { cuda_version } => format!("CUDA {cuda_version}"),
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
