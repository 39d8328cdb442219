//! Where the MegEngine Lite library comes from: finding it, and installing it
//! from MegEngine's wheel into the cache folder.

mod cuda;
mod elf;
mod install;
mod installed;
mod record;
mod version;
mod wheel;

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Result};

use crate::engine::{Device, Lite};

pub use cuda::{ensure_runs_on, recorded_or_scanned, sm, Architectures};
pub use elf::ensure_whole as ensure_whole_library;
pub use install::{install, list, InstallWatcher, Source};
pub use installed::installed;
pub use record::{Damage, Scrutiny};

use record::Record;

/// The one MegEngine release the package registry serves.
pub const DEFAULT_VERSION: &str = "1.13.0";

/// The Lite library inside the wheel, relative to its root. Its RPATH finds
/// `megengine/core/lib/` from there, so installs keep the wheel's layout.
const LITE_LIB_IN_WHEEL: &str = "megenginelite/libs/liblite_shared_whl.cpython-310-x86_64-linux-gnu.so";

/// How the library was found, for `runtime info` and error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Option,
    /// The install `--runtime-version` / `MGE_RUNTIME_VERSION` chose.
    Version,
    /// The newest install.
    Cache,
    Python,
}

/// Which runtime the user asked for: a library, an installed version, or
/// neither (the newest installed). A library wins: the parent hands its
/// children the one it found, whatever version their environment names.
#[derive(Clone, Debug, Default)]
pub struct Choice {
    pub lite_lib: Option<PathBuf>,
    pub version: Option<String>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Option => "--lite-lib / MGE_LITE_LIB",
            Origin::Version => "--runtime-version / MGE_RUNTIME_VERSION",
            Origin::Cache => "mge cache (the newest install)",
            Origin::Python => "python3 megenginelite",
        })
    }
}

pub struct Located {
    pub path: PathBuf,
    pub origin: Origin,
    /// The install folder, for a runtime from the cache.
    pub install: Option<PathBuf>,
}

/// What `runtime info` says of an install's files.
#[derive(Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", content = "damage", rename_all = "snake_case")]
pub enum Files {
    /// As recorded when installed, to the byte.
    Verified,
    /// Installed by an older `mge`, which kept no record.
    Unrecorded,
    /// Not ours to check (`--lite-lib`, Python's megenginelite).
    NotOurs,
    Damaged(Vec<Damage>),
}

impl Located {
    /// The install's files against their record, looked at as closely as `scrutiny` says.
    pub fn files(&self, scrutiny: Scrutiny) -> Result<Files> {
        match &self.install {
            Some(dir) => files_in(dir, scrutiny),
            None => Ok(Files::NotOurs),
        }
    }
}

/// The files of the install in `dir` against their record.
fn files_in(dir: &Path, scrutiny: Scrutiny) -> Result<Files> {
    let Some(record) = Record::read(dir)? else {
        return Ok(Files::Unrecorded);
    };
    let damage = record.damage(dir, scrutiny)?;
    Ok(match damage.is_empty() {
        true => Files::Verified,
        false => Files::Damaged(damage),
    })
}

/// The error for a damaged install, and what repairs it.
pub fn damaged(dir: &Path, damage: &[Damage]) -> anyhow::Error {
    anyhow::anyhow!(
        "the MegEngine runtime in {} is damaged: {}; `mge runtime install` repairs it",
        dir.display(),
        list(damage)
    )
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

/// Finds the Lite library to use, as `find` does, and refuses an install from
/// the cache whose files are not the size they were installed at: loading a
/// truncated library would crash the engine.
pub fn locate(choice: &Choice) -> Result<Located> {
    let located = find(choice)?;
    if let (Files::Damaged(damage), Some(dir)) = (located.files(Scrutiny::Sizes)?, &located.install) {
        return Err(damaged(dir, &damage));
    }
    Ok(located)
}

/// Finds the Lite library: `--lite-lib`/`MGE_LITE_LIB`, the version
/// `--runtime-version`/`MGE_RUNTIME_VERSION` names, the newest in the cache
/// folder, then an importable Python `megenginelite`.
pub fn find(choice: &Choice) -> Result<Located> {
    if let Some(path) = choice.lite_lib.as_deref() {
        if !path.is_file() {
            bail!("--lite-lib / MGE_LITE_LIB: {} is not a file", path.display());
        }
        elf::ensure_whole(path, "--lite-lib / MGE_LITE_LIB:")?;
        return Ok(Located {
            path: path.to_path_buf(),
            origin: Origin::Option,
            install: None,
        });
    }
    if let Some(version) = choice.version.as_deref() {
        let install = installed::chosen(version)?;
        return Ok(Located {
            path: install.lite_library(),
            origin: Origin::Version,
            install: Some(install.dir),
        });
    }
    if let Some(install) = installed().pop() {
        return Ok(Located {
            path: install.lite_library(),
            origin: Origin::Cache,
            install: Some(install.dir),
        });
    }
    if let Some(path) = python_megenginelite() {
        elf::ensure_whole(&path, "python3's megenginelite:")?;
        return Ok(Located {
            path,
            origin: Origin::Python,
            install: None,
        });
    }
    bail!(
        "no MegEngine Lite runtime found (looked in {} and python3's megenginelite); install it with `mge runtime install` (or point --lite-lib at liblite_shared_whl*.so)",
        home().join("runtime").display()
    )
}

/// Finds the library, makes sure it can run on `device` (see
/// `ensure_runs_on`), and loads it.
pub fn load(choice: &Choice, device: Device, verbose: bool) -> Result<Lite> {
    let located = locate(choice)?;
    ensure_runs_on(&located, device)?;
    Lite::load(&located.path, verbose)
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

/// Another program called `mge` that comes before this one on PATH (typing
/// `mge` runs it). MegEngine's wheel installs one: a launcher for its Python tools.
pub fn other_mge_on_path() -> Option<PathBuf> {
    let this = env::current_exe().ok()?.canonicalize().ok()?;
    let first = env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join("mge"))
        .find(|candidate| is_executable(candidate))?;
    let first = first.canonicalize().ok()?;
    (first != this).then_some(first)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// Is the program at `path` MegEngine's own `mge` launcher (a Python script importing megengine)?
pub fn is_megengines_launcher(path: &Path) -> bool {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| std::io::Read::read_to_end(&mut std::io::Read::take(file, 4096), &mut head))
        .is_ok_and(|_| head.starts_with(b"#!") && String::from_utf8_lossy(&head).contains("import megengine"))
}
