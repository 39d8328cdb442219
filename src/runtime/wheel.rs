//! MegEngine's wheel as `runtime install` reads it: its version, from its
//! metadata, and its runtime: every shared library it puts under
//! `megengine/core/lib/` and `megenginelite/libs/` (a CUDA 11 build ships
//! cuDNN, cuBLAS and nvrtc there beside the engine), extracted in the wheel's
//! layout, which the Lite library's RPATH expects.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use zip::ZipArchive;

use super::install_record::{FileRecord, Hashing, Record};
use super::version::Version;
use crate::input_files;
use crate::interrupt::interruption;

/// The folders whose shared libraries make the runtime.
const RUNTIME_FOLDERS: &[&str] = &["megengine/core/lib/", "megenginelite/libs/"];

/// The Lite library's folder and name, whatever CPython the wheel is for.
const LITE_FOLDER: &str = "megenginelite/libs/";
const LITE_PREFIX: &str = "liblite_shared";

/// The most of a wheel's METADATA read: MegEngine's is a few kilobytes.
const MAX_METADATA: u64 = 1 << 20;

/// Told how the extraction from the wheel goes: the presentation of an install.
pub trait InstallWatcher {
    /// `total` bytes are to be extracted.
    fn extracting(&mut self, total: u64);
    /// `bytes` more were extracted.
    fn extracted(&mut self, bytes: u64);
    /// Every file is out.
    fn finished(&mut self);
}

pub struct Wheel {
    archive: ZipArchive<File>,
    /// What the wheel's METADATA says.
    pub version: Version,
    /// The runtime's files, as named in the wheel.
    files: Vec<String>,
    /// The Lite library among `files`.
    lite_library: String,
}

impl Wheel {
    /// Opens the wheel at `path` and finds its version and runtime libraries,
    /// refusing anything that is not a MegEngine wheel with a Lite library.
    pub fn open(path: &Path) -> Result<Wheel> {
        let (file, _) = input_files::open(path, &input_files::WHEEL)?;
        let not_megengine = |why: &str| format!("{} is not MegEngine's wheel: {why}", path.display());
        let mut archive = ZipArchive::new(file).with_context(|| not_megengine("not a zip archive"))?;
        let names: Vec<String> = archive.file_names().map(str::to_string).collect();
        let metadata = names
            .iter()
            .find(|name| {
                name.strip_suffix(".dist-info/METADATA")
                    .is_some_and(|package| !package.is_empty() && !package.contains('/'))
            })
            .with_context(|| not_megengine("it has no .dist-info/METADATA"))?;
        let mut text = String::new();
        archive
            .by_name(metadata)?
            .take(MAX_METADATA)
            .read_to_string(&mut text)
            .with_context(|| not_megengine("its METADATA is not text"))?;
        let field = |key: &str| {
            text.lines()
                .take_while(|line| !line.is_empty())
                .find_map(|line| line.strip_prefix(key).map(str::trim))
        };
        if !field("Name:").is_some_and(|name| name.eq_ignore_ascii_case("megengine")) {
            bail!(not_megengine("its METADATA names another package"));
        }
        let stated = field("Version:").with_context(|| not_megengine("its METADATA has no version"))?;
        let version = Version::parse(stated).with_context(|| {
            format!(
                "{}: version {stated:?} is not a release number with an optional local tag (such as 1.13.2+cu118)",
                path.display()
            )
        })?;
        let files: Vec<String> = names.into_iter().filter(|name| is_runtime_library(name)).collect();
        let lite_library = lite_library_among(&files).map_err(|why| anyhow::anyhow!(not_megengine(why)))?;
        Ok(Wheel {
            archive,
            version,
            files,
            lite_library,
        })
    }

    /// Extracts the runtime into the folder `into`, recording each file's size
    /// and SHA-256 on the way.
    pub fn extract(mut self, into: &Path, watcher: &mut dyn InstallWatcher) -> Result<Record> {
        let mut total = 0;
        for name in &self.files {
            total += self.archive.by_name(name)?.size();
        }
        watcher.extracting(total);
        let mut files = Vec::new();
        for name in &self.files {
            let entry = self.archive.by_name(name)?;
            files.push(copy_recorded(entry, name, into, watcher)?);
        }
        watcher.finished();
        Ok(Record {
            version: self.version.to_string(),
            files,
            lite_library: self.lite_library,
            cuda_architectures: None,
        })
    }
}

/// The Lite library among a runtime's files (named as in the wheel), or why there is none.
pub fn lite_library_among(files: &[String]) -> Result<String, &'static str> {
    let lite: Vec<&String> = files
        .iter()
        .filter(|name| {
            name.strip_prefix(LITE_FOLDER)
                .is_some_and(|file| file.starts_with(LITE_PREFIX) && file.ends_with(".so"))
        })
        .collect();
    match lite[..] {
        [one] => Ok(one.clone()),
        [] => Err("it has no megenginelite/libs/liblite_shared*.so"),
        _ => Err("it has more than one megenginelite/libs/liblite_shared*.so"),
    }
}

/// Copies the runtime file `name` (as named in the wheel) from `from` into
/// the folder `into`, recording its size and SHA-256 on the way; stops where
/// the user interrupts.
pub fn copy_recorded(from: impl Read, name: &str, into: &Path, watcher: &mut dyn InstallWatcher) -> Result<FileRecord> {
    let path = into.join(name);
    fs::create_dir_all(path.parent().expect("runtime files are in a folder"))?;
    let mut out = File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut hashing = Hashing::new(Watched { inner: from, watcher });
    let copied = io::copy(&mut hashing, &mut out);
    if let Some(interrupted) = interruption() {
        return Err(interrupted.into());
    }
    copied.with_context(|| format!("cannot copy {name}"))?;
    let digested = hashing.finish();
    Ok(FileRecord {
        path: name.to_string(),
        size: digested.size,
        sha256: digested.sha256,
    })
}

/// The runtime's libraries in the wheel's layout under `root` (an install, or
/// Python's site-packages): every one the Lite library may load beside it.
pub fn runtime_libraries_in(root: &Path) -> Vec<PathBuf> {
    RUNTIME_FOLDERS
        .iter()
        .flat_map(|folder| {
            let entries = fs::read_dir(root.join(folder)).into_iter().flatten().flatten();
            entries.filter_map(move |entry| {
                let name = format!("{folder}{}", entry.file_name().to_str()?);
                is_runtime_library(&name).then(|| root.join(name))
            })
        })
        .collect()
}

/// A shared library right in one of the runtime's folders (`lib*.so`,
/// `lib*.so.11`): nothing in a subfolder, nothing hidden, no `..`.
fn is_runtime_library(name: &str) -> bool {
    RUNTIME_FOLDERS.iter().any(|folder| {
        name.strip_prefix(folder).is_some_and(|file| {
            !file.is_empty()
                && !file.starts_with('.')
                && !file.contains('/')
                && !file.contains('\\')
                && (file.ends_with(".so") || file.contains(".so."))
        })
    })
}

/// A reader that tells the watcher how much it read, and stops when the user interrupts.
struct Watched<'a, R> {
    inner: R,
    watcher: &'a mut dyn InstallWatcher,
}

impl<R: Read> Read for Watched<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if interruption().is_some() {
            return Err(io::Error::other("interrupted"));
        }
        let read = self.inner.read(buf)?;
        self.watcher.extracted(read as u64);
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_is_every_shared_library_right_in_its_folders() {
        for kept in [
            "megengine/core/lib/libmegengine_shared.so",
            "megengine/core/lib/libcudnn_cnn_infer.so.8",
            "megengine/core/lib/libnvrtc-builtins.so.11.1",
            "megenginelite/libs/liblite_shared_whl.cpython-38-x86_64-linux-gnu.so",
        ] {
            assert!(is_runtime_library(kept), "{kept}");
        }
        for left in [
            "megengine/core/lib/",
            "megengine/core/lib/ucx/libucm.so",
            "megengine/core/lib/.hidden.so",
            "megengine/core/lib/../../../evil.so",
            "megengine/core/include/megbrain/x.h",
            "megengine/core/_imperative_rt.so",
            "megenginelite/libs/README",
            "megenginelite/network.py",
        ] {
            assert!(!is_runtime_library(left), "{left}");
        }
    }
}
