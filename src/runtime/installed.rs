//! The runtimes installed side by side in the cache folder, one folder per
//! version (`runtime/1.13.0`, `runtime/1.13.2+cu118`): which there are, and
//! which one a command uses (the one asked for, else the newest).

use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Result};

use super::install_record::Record;
use super::version::Version;
use super::LITE_LIB_IN_WHEEL;

/// An install folder in the cache.
#[derive(Clone, Debug)]
pub struct Installed {
    pub version: Version,
    pub dir: PathBuf,
}

impl Installed {
    pub fn lite_library(&self) -> PathBuf {
        lite_library_in(&self.dir)
    }
}

/// The Lite library of the install in `dir`, where its record says (an older
/// `mge`'s installs have no record, and the CPython 3.10 wheel's name).
pub fn lite_library_in(dir: &Path) -> PathBuf {
    let recorded = Record::read(dir)
        .ok()
        .flatten()
        .map(|record| record.lite_library)
        // Within the install, whatever the record says.
        .filter(|path| {
            Path::new(path)
                .components()
                .all(|part| matches!(part, Component::Normal(_)))
        });
    dir.join(recorded.as_deref().unwrap_or(LITE_LIB_IN_WHEEL))
}

/// The engine library beside a Lite library, in the wheel's layout (the Lite
/// library's RPATH).
const ENGINE_FROM_LITE: &str = "../../megengine/core/lib/libmegengine_shared.so";

/// The files of the runtime whose Lite library is `lite_library`: it, and
/// the engine beside it where there is one.
pub fn with_its_engine(lite_library: &Path) -> impl Iterator<Item = PathBuf> {
    let engine = lite_library.parent().map(|libs| libs.join(ENGINE_FROM_LITE));
    std::iter::once(lite_library.to_path_buf())
        .chain(engine)
        .filter(|library| library.is_file())
}

/// The folder of `version` in the cache folder `home`.
pub fn install_dir(home: &Path, version: &Version) -> PathBuf {
    home.join("runtime").join(version.as_str())
}

/// Every install in the cache folder `home`, oldest first: folders named by a
/// version that hold a record or (installed by an older `mge`) the Lite
/// library. One with a record and no library is listed, to be reported as damaged.
pub fn installed(home: &Path) -> Vec<Installed> {
    let Ok(entries) = std::fs::read_dir(home.join("runtime")) else {
        return Vec::new();
    };
    let mut installs: Vec<Installed> = entries
        .flatten()
        .filter_map(|entry| {
            let version = Version::parse(entry.file_name().to_str()?)?;
            let dir = entry.path();
            let installed = matches!(Record::read(&dir), Ok(Some(_))) || dir.join(LITE_LIB_IN_WHEEL).is_file();
            installed.then_some(Installed { version, dir })
        })
        .collect();
    installs.sort_by(|a, b| a.version.cmp(&b.version));
    installs
}

/// The install of `version` in `home`, or an error that says which there are.
pub fn chosen(home: &Path, version: &str) -> Result<Installed> {
    let Some(wanted) = Version::parse(version) else {
        bail!("--runtime-version / MGE_RUNTIME_VERSION {version:?}: expected a version such as 1.13.0 or 1.13.2+cu118");
    };
    let installs = installed(home);
    if let Some(found) = installs.iter().find(|install| install.version == wanted) {
        return Ok(found.clone());
    }
    let there = match installs.is_empty() {
        true => "none is installed".to_string(),
        false => format!("installed: {}", list(&installs)),
    };
    bail!("MegEngine {wanted} is not installed ({there}); install it with `mge runtime install --version {wanted}` (or --wheel FILE)")
}

/// `1.13.0, 1.13.2+cu118`.
fn list(installs: &[Installed]) -> String {
    installs
        .iter()
        .map(|install| install.version.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_names_the_lite_library_only_within_its_install() {
        let dir = tempfile::tempdir().unwrap();
        let record = |lite: &str| {
            let text = format!(r#"{{"version": "1.13.0", "files": [], "lite_library": "{lite}"}}"#);
            std::fs::write(dir.path().join("files.json"), text).unwrap();
            lite_library_in(dir.path())
        };
        let cp38 = "megenginelite/libs/liblite_shared_whl.cpython-38-x86_64-linux-gnu.so";
        assert_eq!(record(cp38), dir.path().join(cp38));
        for outside in ["../../evil.so", "/lib/evil.so", "megenginelite/../../evil.so"] {
            assert_eq!(record(outside), dir.path().join(LITE_LIB_IN_WHEEL), "{outside}");
        }
    }
}
