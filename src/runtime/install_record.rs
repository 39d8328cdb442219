//! What an install holds: each runtime file's size and SHA-256, recorded as it
//! was extracted. A damaged install (a truncated library is mapped, then read
//! past its end: SIGBUS inside the engine) is found from this record before
//! the engine loads anything.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::architectures::Architectures;
use super::LITE_LIB_IN_WHEEL;
use crate::input_files;

/// The record's name inside an install folder.
const RECORD_FILE: &str = "files.json";

#[derive(Serialize, Deserialize, Debug, PartialEq, Eq)]
pub struct Record {
    pub version: String,
    pub files: Vec<FileRecord>,
    /// The Lite library among `files`; records of an older `mge` name none:
    /// theirs is the CPython 3.10 wheel's.
    #[serde(default = "lite_library_in_wheel")]
    pub lite_library: String,
    /// The CUDA architectures the engine was built for, read from it once at
    /// install; `None` in records of an older `mge`, which did not.
    #[serde(default)]
    pub cuda_architectures: Option<Architectures>,
}

fn lite_library_in_wheel() -> String {
    LITE_LIB_IN_WHEEL.to_string()
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Eq)]
pub struct FileRecord {
    /// Relative to the install folder, as in the wheel.
    pub path: String,
    pub size: u64,
    pub sha256: String,
}

/// How closely an install is looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scrutiny {
    /// Every file there at its recorded size: a few `stat` calls, before each load.
    Sizes,
    /// Every byte hashed: seconds, for `runtime info` and `runtime install`.
    Contents,
}

/// One way an installed file differs from its record.
#[derive(Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "damage", rename_all = "snake_case")]
pub enum Damage {
    Missing { path: String },
    Size { path: String, found: u64, expected: u64 },
    Content { path: String },
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::Missing { path } => write!(f, "{path} is missing"),
            Damage::Size { path, found, expected } => {
                write!(f, "{path} holds {found} bytes, {expected} expected")
            }
            Damage::Content { path } => write!(f, "{path} differs from what was installed (SHA-256)"),
        }
    }
}

impl Record {
    /// The record of the install in `dir`; `None` when it has none (an install
    /// by an older `mge`).
    pub fn read(dir: &Path) -> Result<Option<Record>> {
        let path = dir.join(RECORD_FILE);
        let Some(bytes) = input_files::read_if_present(&path, &input_files::RUNTIME_RECORD)? else {
            return Ok(None);
        };
        let record = serde_json::from_slice(&bytes).with_context(|| format!("{} is damaged", path.display()))?;
        Ok(Some(record))
    }

    /// Writes the record into `dir` (a staging folder: the install moves into place whole).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(RECORD_FILE);
        let text = serde_json::to_string_pretty(self)? + "\n";
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// How the files in `dir` differ from the record.
    pub fn damage(&self, dir: &Path, scrutiny: Scrutiny) -> Result<Vec<Damage>> {
        let mut damage = Vec::new();
        for file in &self.files {
            let path = dir.join(&file.path);
            let found = match std::fs::metadata(&path) {
                Ok(metadata) if metadata.is_file() => metadata.len(),
                _ => {
                    damage.push(Damage::Missing {
                        path: file.path.clone(),
                    });
                    continue;
                }
            };
            if found != file.size {
                damage.push(Damage::Size {
                    path: file.path.clone(),
                    found,
                    expected: file.size,
                });
            } else if scrutiny == Scrutiny::Contents {
                let opened = File::open(&path).with_context(|| format!("cannot read {}", path.display()))?;
                // Read in large pieces: in `io::copy`'s own 8 KiB, a gigabyte of
                // runtime was some 120,000 reads.
                let mut hashing = Hashing::new(io::BufReader::with_capacity(HASHED_PIECE, opened));
                io::copy(&mut hashing, &mut io::sink()).with_context(|| format!("cannot read {}", path.display()))?;
                if hashing.finish().sha256 != file.sha256 {
                    damage.push(Damage::Content {
                        path: file.path.clone(),
                    });
                }
            }
        }
        Ok(damage)
    }
}

/// The bytes read from a runtime file at once to hash it.
const HASHED_PIECE: usize = 1 << 20;

/// A reader that hashes and counts what passes through it.
pub struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    size: u64,
}

/// What passed through a `Hashing` reader.
pub struct Digested {
    pub size: u64,
    pub sha256: String,
}

impl<R> Hashing<R> {
    pub fn new(inner: R) -> Hashing<R> {
        Hashing {
            inner,
            hasher: Sha256::new(),
            size: 0,
        }
    }

    pub fn finish(self) -> Digested {
        let digest = self.hasher.finalize();
        Digested {
            size: self.size,
            sha256: digest.iter().map(|byte| format!("{byte:02x}")).collect(),
        }
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.hasher.update(&buf[..read]);
        self.size += read as u64;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install_of(contents: &[(&str, &[u8])]) -> (tempfile::TempDir, Record) {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (name, bytes) in contents {
            std::fs::write(dir.path().join(name), bytes).unwrap();
            let mut hashing = Hashing::new(*bytes);
            io::copy(&mut hashing, &mut io::sink()).unwrap();
            let digested = hashing.finish();
            files.push(FileRecord {
                path: name.to_string(),
                size: digested.size,
                sha256: digested.sha256,
            });
        }
        let record = Record {
            version: "1.13.0".into(),
            files,
            lite_library: "a.so".into(),
            cuda_architectures: None,
        };
        record.write(dir.path()).unwrap();
        (dir, record)
    }

    #[test]
    fn an_intact_install_has_no_damage_and_its_record_reads_back() {
        let (dir, record) = install_of(&[("a.so", b"abc"), ("b.so", b"")]);
        assert_eq!(Record::read(dir.path()).unwrap(), Some(record));
        let read = Record::read(dir.path()).unwrap().unwrap();
        assert!(read.damage(dir.path(), Scrutiny::Contents).unwrap().is_empty());
        // SHA-256 of "abc", from FIPS 180-2's example.
        assert_eq!(
            read.files[0].sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn truncated_changed_and_missing_files_are_each_named() {
        let (dir, record) = install_of(&[("a.so", b"abcdef"), ("b.so", b"xyz"), ("c.so", b"1")]);
        std::fs::write(dir.path().join("a.so"), b"abc").unwrap();
        std::fs::write(dir.path().join("b.so"), b"xyZ").unwrap();
        std::fs::remove_file(dir.path().join("c.so")).unwrap();
        let sizes = record.damage(dir.path(), Scrutiny::Sizes).unwrap();
        assert_eq!(
            sizes,
            [
                Damage::Size {
                    path: "a.so".into(),
                    found: 3,
                    expected: 6
                },
                Damage::Missing { path: "c.so".into() }
            ]
        );
        let contents = record.damage(dir.path(), Scrutiny::Contents).unwrap();
        assert!(
            contents.contains(&Damage::Content { path: "b.so".into() }),
            "{contents:?}"
        );
    }

    #[test]
    fn an_older_record_names_the_wheels_lite_library_and_no_architectures() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RECORD_FILE), r#"{"version": "1.13.0", "files": []}"#).unwrap();
        let record = Record::read(dir.path()).unwrap().unwrap();
        assert_eq!(record.lite_library, LITE_LIB_IN_WHEEL);
        assert_eq!(record.cuda_architectures, None);
    }

    #[test]
    fn an_install_without_a_record_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Record::read(dir.path()).unwrap(), None);
    }
}
