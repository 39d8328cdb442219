//! Where the MegEngine Lite library comes from: finding it, and installing it
//! from MegEngine's wheel into the cache folder.

mod install;

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Result};

use crate::engine::Lite;

pub use install::{install, InstallWatcher};

/// The one MegEngine release the package registry serves.
pub const DEFAULT_VERSION: &str = "1.13.0";

/// The Lite library inside the wheel, relative to its root. Its RPATH finds
/// `megengine/core/lib/` from there, so installs keep the wheel's layout.
const LITE_LIB_IN_WHEEL: &str = "megenginelite/libs/liblite_shared_whl.cpython-310-x86_64-linux-gnu.so";

/// How the library was found, for `runtime info` and error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Option,
    Cache,
    Python,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Option => "--lite-lib / MGE_LITE_LIB",
            Origin::Cache => "mge cache",
            Origin::Python => "python3 megenginelite",
        })
    }
}

pub struct Located {
    pub path: PathBuf,
    pub origin: Origin,
}

/// The cache folder: `MGE_HOME`, else the user's cache dir + `mge/`.
pub fn home() -> PathBuf {
    if let Some(home) = env::var_os("MGE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    let cache = env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(env::temp_dir);
    cache.join("mge")
}

/// Where `version` lives in the cache folder.
fn install_dir(version: &str) -> PathBuf {
    home().join("runtime").join(version)
}

/// Finds the Lite library: `--lite-lib`/`MGE_LITE_LIB`, the cache folder, then
/// an importable Python `megenginelite`.
pub fn locate(explicit: Option<&Path>) -> Result<Located> {
    if let Some(path) = explicit {
        if !path.is_file() {
            bail!("--lite-lib / MGE_LITE_LIB: {} is not a file", path.display());
        }
        return Ok(Located {
            path: path.to_path_buf(),
            origin: Origin::Option,
        });
    }
    if let Some(path) = newest_cached() {
        return Ok(Located {
            path,
            origin: Origin::Cache,
        });
    }
    if let Some(path) = python_megenginelite() {
        return Ok(Located {
            path,
            origin: Origin::Python,
        });
    }
    bail!(
        "no MegEngine Lite runtime found (looked in {} and python3's megenginelite); install it with `mge runtime install` (or point --lite-lib at liblite_shared_whl*.so)",
        home().join("runtime").display()
    )
}

/// Finds and loads the library.
pub fn load(explicit: Option<&Path>, verbose: bool) -> Result<Lite> {
    let located = locate(explicit)?;
    Lite::load(&located.path, verbose)
}

/// `1.13.0` as `[1, 13, 0]`, for ordering; `None` for anything else, so that a
/// version can safely name a folder.
fn release_number(version: &str) -> Option<Vec<u64>> {
    version
        .split('.')
        .map(|part| {
            let digits = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
            digits.then(|| part.parse().ok()).flatten()
        })
        .collect()
}

fn newest_cached() -> Option<PathBuf> {
    let mut versions: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(home().join("runtime"))
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let key = release_number(&name)?;
            let lib = entry.path().join(LITE_LIB_IN_WHEEL);
            lib.is_file().then_some((key, lib))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, lib)| lib)
}

/// Asks `python3` where `megenginelite` lives without importing it (importing
/// loads the whole engine, half a second).
fn python_megenginelite() -> Option<PathBuf> {
    let script = "import importlib.util as u; s = u.find_spec('megenginelite'); print(s.submodule_search_locations[0] if s else '')";
    let output = Command::new("python3").args(["-c", script]).output().ok()?;
    let package = String::from_utf8(output.stdout).ok()?;
    let libs = Path::new(package.trim()).join("libs");
    std::fs::read_dir(libs)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("liblite_shared") && name.contains(".so"))
        })
}
