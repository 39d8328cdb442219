//! Where the MegEngine Lite library comes from: finding it, and installing it
//! from MegEngine's wheel into the cache folder; what the cache folder keeps
//! beside it (the algorithm cache, `algo_cache`); which GPUs it runs on and
//! which environment variables it reads.

pub mod algo_cache;
mod architectures;
mod cuda;
mod elf;
mod install;
mod install_record;
mod installed;
mod python;
mod python_runtime;
mod trust;
mod variables;
mod version;
mod wheel;

use std::env;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::engine::{Device, Lite};
use crate::text;

pub use architectures::{sm, Architectures};
pub use cuda::{ensure_runs_on, recorded_or_scanned};
pub use elf::ensure_whole as ensure_whole_library;
pub use install::{install, list, RuntimeSource};
pub use install_record::{Damage, FileRecord, Hashing, Record, Scrutiny};
pub use installed::installed;
pub use trust::ensure_trusted_library_path;
pub use variables::variables_read;
pub use version::Version;
pub use wheel::InstallWatcher;

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

impl Origin {
    const ALL: [Origin; 4] = [Origin::Option, Origin::Version, Origin::Cache, Origin::Python];

    /// Its name in the variables that hand a located library to a child.
    fn word(self) -> &'static str {
        match self {
            Origin::Option => "option",
            Origin::Version => "version",
            Origin::Cache => "cache",
            Origin::Python => "python",
        }
    }
}

/// Which runtime the user asked for: a library, an installed version, or
/// neither (the newest installed). A library wins over a version.
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

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub path: PathBuf,
    pub origin: Origin,
    /// The install folder, for a runtime from the cache.
    pub install: Option<PathBuf>,
}

/// The variables that hand the outcome of a look-up to a child `mge`: the
/// library located (its path, its origin, its install folder), or why none was.
/// The child loads what its parent located, as located, without looking again:
/// its own environment (a `TMPDIR` of its own) cannot change which library loads.
const HANDED_PATH: &str = "MGE_LOCATED_LITE_LIB";
const HANDED_ORIGIN: &str = "MGE_LOCATED_ORIGIN";
const HANDED_INSTALL: &str = "MGE_LOCATED_INSTALL";
const HANDED_FAILURE: &str = "MGE_LOCATED_NONE";

/// The variables for a child's environment that hand it the outcome of a look-up.
/// A failure is said by the child where it would have looked, after its own
/// checks of the command line, as if it had looked itself.
pub fn hand_down(lookup: Result<&Located, &anyhow::Error>) -> Vec<(OsString, OsString)> {
    let located = match lookup {
        Ok(located) => located,
        Err(error) => return vec![(HANDED_FAILURE.into(), format!("{error:#}").into())],
    };
    let mut handed = vec![
        (HANDED_PATH.into(), located.path.clone().into_os_string()),
        (HANDED_ORIGIN.into(), located.origin.word().into()),
    ];
    if let Some(install) = &located.install {
        handed.push((HANDED_INSTALL.into(), install.clone().into_os_string()));
    }
    handed
}

/// The outcome of the look-up this process's parent handed down, if it did.
fn handed_down() -> Option<Result<Located>> {
    if let Some(error) = env::var_os(HANDED_FAILURE) {
        return Some(Err(anyhow::anyhow!("{}", error.to_string_lossy())));
    }
    let path = env::var_os(HANDED_PATH)?;
    let origin = env::var_os(HANDED_ORIGIN)?;
    let origin = Origin::ALL.into_iter().find(|known| origin == known.word())?;
    Some(Ok(Located {
        path: path.into(),
        origin,
        install: env::var_os(HANDED_INSTALL).map(PathBuf::from),
    }))
}

/// What `runtime info` says of an install's files.
#[derive(Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", content = "damage", rename_all = "snake_case")]
pub enum Files {
    /// As recorded when installed, to the byte.
    Verified,
    /// Installed by an older `mge`, which kept no record: not loaded, as nothing
    /// tells a damaged file (`runtime install` reinstalls it).
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

/// The error for an install an older `mge` made, which kept no record of its files.
pub fn unrecorded(dir: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "the MegEngine runtime in {} has no record of its files (installed by an older mge), so a damaged \
         file could crash the engine; `mge runtime install` reinstalls it",
        dir.display()
    )
}

/// mge's folder inside `MGE_HOME`, which MegEngine's Python reads too: it
/// keeps its own there (`hub/`, `serialized/`, `persistent_cache/`), and
/// each keeps to its folders.
pub const IN_MGE_HOME: &str = "mge";

/// The cache folder: `$MGE_HOME/mge`, else the user's cache folder
/// (`XDG_CACHE_HOME`, else `~/.cache`) + `mge/`. Never a shared temporary
/// folder, which any local user can write into: without a home, the user must say where.
pub fn home() -> Result<PathBuf> {
    if let Some(mge_home) = mge_home()? {
        return Ok(mge_home.join(IN_MGE_HOME));
    }
    // Relative values are to be ignored (the XDG Base Directory specification).
    let absolute = |name| env::var_os(name).map(PathBuf::from).filter(|path| path.is_absolute());
    let cache = absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|home| home.join(".cache")));
    match cache {
        Some(cache) => Ok(cache.join("mge")),
        None => bail!(
            "no cache folder for the MegEngine runtime: HOME is not set (nor XDG_CACHE_HOME); \
             set MGE_HOME to a folder of yours (or name a library with --lite-lib)"
        ),
    }
}

/// `MGE_HOME`, where it is set.
fn mge_home() -> Result<Option<PathBuf>> {
    let Some(home) = env::var_os("MGE_HOME").filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    // Absolute, so that helpers started elsewhere (pip, in `/`) agree.
    let home = std::path::absolute(&home).with_context(|| format!("MGE_HOME {}", Path::new(&home).display()))?;
    Ok(Some(home))
}

/// Where what lies in the cache folder `home` must be beyond other users'
/// reach from: `MGE_HOME` itself where `home` is mge's folder in it (another
/// user who can write there could put a folder of theirs in its place).
fn trusted_from(home: &Path) -> PathBuf {
    match mge_home() {
        Ok(Some(mge_home)) if home == mge_home.join(IN_MGE_HOME) => mge_home,
        _ => home.to_path_buf(),
    }
}

/// Runtimes an earlier mge installed in `MGE_HOME` itself, before it kept to
/// its own folder there: found, but not loaded from MegEngine's folder; the
/// error says how to move them (and the algorithm cache beside them) into mge's.
fn refuse_runtimes_of_an_earlier_mge() -> Result<()> {
    let Some(mge_home) = mge_home()? else {
        return Ok(());
    };
    let Some(newest) = installed(&mge_home).pop() else {
        return Ok(());
    };
    let ours = mge_home.join(IN_MGE_HOME);
    let mut moved = vec![text::shell_word(mge_home.join("runtime").as_os_str())];
    if mge_home.join("algo-cache").is_dir() {
        moved.push(text::shell_word(mge_home.join("algo-cache").as_os_str()));
    }
    bail!(
        "the MegEngine runtime {} is in {}, where an earlier mge installed it: mge now keeps its files in {}, \
         apart from MegEngine's own in MGE_HOME; move them there: mkdir -p {} && mv {} {}/",
        newest.version.as_str(),
        newest.dir.display(),
        ours.display(),
        text::shell_word(ours.as_os_str()),
        moved.join(" "),
        text::shell_word(ours.as_os_str())
    )
}

/// Finds the Lite library to use, as `find` does, and refuses an install from
/// the cache whose files are not the size they were installed at (loading a
/// truncated library would crash the engine), or that has no record to tell.
pub fn locate(choice: &Choice) -> Result<Located> {
    let located = find(choice)?;
    match (located.files(Scrutiny::Sizes)?, &located.install) {
        (Files::Damaged(damage), Some(dir)) => Err(damaged(dir, &damage)),
        (Files::Unrecorded, Some(dir)) => Err(unrecorded(dir)),
        _ => Ok(located),
    }
}

/// Finds the Lite library: the one the parent process handed down, else
/// `--lite-lib`/`MGE_LITE_LIB`, the install `--runtime-version`/`MGE_RUNTIME_VERSION`
/// names, the newest in the cache folder, then an importable Python
/// `megenginelite`. What is found by looking must be beyond other users' reach
/// (`trust`), and Python's must not lie under the current folder.
pub fn find(choice: &Choice) -> Result<Located> {
    if let Some(lookup) = handed_down() {
        return lookup;
    }
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
    let home = home()?;
    let (install, origin) = match choice.version.as_deref() {
        Some(version) => (Some(installed::chosen(&home, version)?), Origin::Version),
        None => (installed(&home).pop(), Origin::Cache),
    };
    if let Some(install) = install {
        trust::ensure_only_ours(&home, &install.dir)?;
        return Ok(Located {
            path: install.lite_library(),
            origin,
            install: Some(install.dir),
        });
    }
    refuse_runtimes_of_an_earlier_mge()?;
    if let Some((site, path)) = python_megenginelite() {
        ensure_trusted_python_install(&site, &path)?;
        elf::ensure_whole(&path, "python3's megenginelite:")?;
        return Ok(Located {
            path,
            origin: Origin::Python,
            install: None,
        });
    }
    bail!(
        "no MegEngine Lite runtime found (looked in {} and python3's megenginelite); install it with `mge runtime install` (or point --lite-lib at liblite_shared_whl*.so)",
        home.join("runtime").display()
    )
}

/// Refuses the Lite library Python found in `site` (its site-packages) where it
/// lies under the current folder, which may be anyone's (CI runs `mge` in model
/// folders others made): one found there is trusted only when named. The root
/// folder holds everything and is root's alone. Refuses it too where another
/// user could change it or the engine libraries it loads beside it.
fn ensure_trusted_python_install(site: &Path, library: &Path) -> Result<()> {
    if let Ok(current) = env::current_dir().and_then(|dir| dir.canonicalize()) {
        let canonical = library.canonicalize().unwrap_or_else(|_| library.to_path_buf());
        if current != Path::new("/") && canonical.starts_with(&current) {
            bail!(
                "python3's megenginelite ({}) lies under the current folder: not loaded unless named \
                 with --lite-lib (or install the runtime with `mge runtime install`)",
                library.display()
            );
        }
    }
    let beside = wheel::runtime_libraries_in(site);
    for file in std::iter::once(library.to_path_buf()).chain(beside) {
        trust::ensure_only_ours(site, &file)?;
    }
    Ok(())
}

/// Finds the library, makes sure it can run on `device` (see
/// `ensure_runs_on`), and loads it.
pub fn load(choice: &Choice, device: Device, verbose: bool) -> Result<Lite> {
    let located = locate(choice)?;
    ensure_runs_on(&located, device)?;
    Lite::load(&located.path, verbose)
}

/// Asks `python3` where `megenginelite` lives without importing it (importing
/// loads the whole engine, half a second): the folder it was found in (its
/// site-packages) and the Lite library in it.
fn python_megenginelite() -> Option<(PathBuf, PathBuf)> {
    let script = "import importlib.util as u; s = u.find_spec('megenginelite'); print(s.submodule_search_locations[0] if s else '')";
    let output = python::python3()?.args(["-c", script]).output().ok()?;
    let package = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    // Python's answer is absolute; anything else names no package.
    let site = package.parent().filter(|_| package.is_absolute())?.to_path_buf();
    let library = std::fs::read_dir(package.join("libs"))
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("liblite_shared") && name.contains(".so"))
        })?;
    Some((site, library))
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
