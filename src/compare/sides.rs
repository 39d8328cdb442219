//! The two sides of `mge compare`: `.npy` files, `.npz` archives, folders of
//! them, or io dumps (ours, or raw ones from load_and_run and megenginelite);
//! their tensors listed and paired by name.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::input_files;
use crate::iodump::{read_binary, read_index, read_raw_index, Index, IndexVar, RAW_FORMAT};
use crate::tensor::npy::{Npy, Npz};
use crate::tensor::{Dequantize, TensorView};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Npy,
    Npz,
    Folder,
    IoDump,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Npy => "the .npy file",
            Kind::Npz => "the .npz archive",
            Kind::Folder => "the folder",
            Kind::IoDump => "the io dump",
        })
    }
}

/// One side, checked to exist and be of a kind `compare` reads.
pub struct Side {
    path: PathBuf,
    kind: Kind,
    index: Option<Index>,
}

/// One tensor of a side, not read yet.
pub struct Tensor {
    pub name: String,
    /// What it is matched by: its name, with the occurrence for a name an io dump repeats.
    key: String,
    location: Location,
    /// Where it came from in the graph, for an io dump.
    pub var: Option<IndexVar>,
}

enum Location {
    File(PathBuf),
    /// A file of the engine's binary dump, as a raw io dump holds it.
    Raw(PathBuf),
    Archived {
        archive: PathBuf,
        key: String,
    },
    /// An io dump var whose dtype `.npy` cannot hold.
    NoValues,
}

/// Tensors of the same name on both sides, or on one only.
pub struct Pair {
    pub a: Option<Tensor>,
    pub b: Option<Tensor>,
}

impl Side {
    pub fn open(path: &Path) -> Result<Side> {
        let kind = if path.is_dir() {
            Kind::Folder
        } else if path.exists() {
            // Read as its name says; what is not a regular file is refused then.
            match path
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                Some("npy") => Kind::Npy,
                Some("npz") => Kind::Npz,
                _ => bail!("{}: expected a .npy file, a .npz archive or a folder", path.display()),
            }
        } else {
            bail!("{} does not exist", path.display());
        };
        let index = match kind {
            Kind::Folder => match read_index(path)? {
                Some(index) => Some(index),
                None => read_raw_index(path)?,
            },
            _ => None,
        };
        if let Some(index) = &index {
            if index.format == "txt" {
                bail!(
                    "{} is a text io dump: it holds printed values, not tensors (dump with --io-format bin to compare)",
                    path.display()
                );
            }
            if let Some(failed) = &index.failed_at {
                let at = failed
                    .operator
                    .as_ref()
                    .map(|operator| format!(" at operator '{operator}'"))
                    .unwrap_or_default();
                bail!(
                    "{} is the io dump of a run that failed inside the engine{at}: it holds only the vars before the failure, and compare needs a whole run's",
                    path.display()
                );
            }
        }
        Ok(Side {
            path: path.to_path_buf(),
            kind: if index.is_some() { Kind::IoDump } else { kind },
            index,
        })
    }

    pub fn is_io_dump(&self) -> bool {
        self.kind == Kind::IoDump
    }

    /// The model outputs an io dump's index names (none for other sides).
    pub fn outputs(&self) -> &[String] {
        self.index.as_ref().map_or(&[], |index| index.outputs.as_slice())
    }

    /// An io dump's vars, in execution order.
    pub fn dumped_tensors(&self) -> Result<Vec<Tensor>> {
        if !self.is_io_dump() {
            bail!("{} is not an io dump", self.path.display());
        }
        Ok(self.dumped_vars())
    }

    fn tensors(&self) -> Result<Vec<Tensor>> {
        let tensors = match self.kind {
            Kind::Npy => vec![Tensor::file(self.file_name(), self.path.clone())],
            Kind::Npz => archived(&self.path, "")?,
            Kind::Folder => {
                let mut files = Vec::new();
                collect_files(&self.path, &mut files)?;
                files.sort();
                let mut tensors = Vec::new();
                for file in files {
                    let relative = file.strip_prefix(&self.path).unwrap_or(&file).display().to_string();
                    match file
                        .extension()
                        .and_then(|e| e.to_str())
                        .map(str::to_ascii_lowercase)
                        .as_deref()
                    {
                        Some("npy") => tensors.push(Tensor::file(relative, file)),
                        Some("npz") => tensors.extend(archived(&file, &format!("{relative}:"))?),
                        _ => {}
                    }
                }
                tensors
            }
            Kind::IoDump => self.dumped_vars(),
        };
        if tensors.is_empty() {
            bail!("{} holds no .npy or .npz file to compare", self.path.display());
        }
        Ok(tensors)
    }

    fn dumped_vars(&self) -> Vec<Tensor> {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let index = self.index.as_ref().expect("an io dump has an index");
        let raw = index.format == RAW_FORMAT;
        index
            .vars
            .iter()
            .map(|var| {
                let count = seen.entry(&var.name).or_default();
                *count += 1;
                Tensor {
                    name: var.name.clone(),
                    key: if *count == 1 {
                        var.name.clone()
                    } else {
                        format!("{}#{count}", var.name)
                    },
                    location: match &var.file {
                        Some(file) if raw => Location::Raw(self.path.join(file)),
                        Some(file) => Location::File(self.path.join(file)),
                        None => Location::NoValues,
                    },
                    var: Some(var.clone()),
                }
            })
            .collect()
    }

    fn file_name(&self) -> String {
        self.path
            .file_name()
            .map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into_owned())
    }
}

/// Pairs the tensors of two sides of the same kind by name: `a`'s in its
/// order, then those only `b` has. Two single files pair whatever their names.
pub fn pair(a: &Side, b: &Side) -> Result<Vec<Pair>> {
    if a.kind != b.kind {
        bail!(
            "cannot compare {} {} with {} {}: give two .npy files, two .npz archives, two folders or two io dumps",
            a.kind,
            a.path.display(),
            b.kind,
            b.path.display()
        );
    }
    let (a_tensors, mut b_tensors) = (a.tensors()?, b.tensors()?);
    if a.kind == Kind::Npy {
        let (x, y) = (a_tensors.into_iter().next(), b_tensors.into_iter().next());
        return Ok(vec![Pair { a: x, b: y }]);
    }
    let mut pairs = Vec::with_capacity(a_tensors.len());
    for tensor in a_tensors {
        let partner = b_tensors
            .iter()
            .position(|other| other.key == tensor.key)
            .map(|at| b_tensors.remove(at));
        pairs.push(Pair {
            a: Some(tensor),
            b: partner,
        });
    }
    pairs.extend(b_tensors.into_iter().map(|tensor| Pair {
        a: None,
        b: Some(tensor),
    }));
    Ok(pairs)
}

impl Tensor {
    fn file(name: String, path: PathBuf) -> Tensor {
        Tensor {
            key: name.clone(),
            name,
            location: Location::File(path),
            var: None,
        }
    }

    /// The whole `.npy` file, or `None` for a var the dump holds no values of.
    pub fn read(&self) -> Result<Option<Vec<u8>>> {
        match &self.location {
            Location::File(path) => input_files::read(path, &input_files::NPY).map(Some),
            Location::Raw(path) => {
                let bytes = input_files::read(path, &input_files::RAW_IO_DUMP)?;
                let dumped = read_binary(&bytes).with_context(|| format!("{}", path.display()))?;
                Ok(dumped.npy(&bytes))
            }
            Location::Archived { archive, key } => Npz::open(archive)
                .and_then(|mut npz| npz.bytes(key))
                .map(Some)
                .with_context(|| format!("{}", archive.display())),
            Location::NoValues => Ok(None),
        }
    }

    /// Whether it is a quantized var of an io dump.
    pub fn quantized(&self) -> bool {
        self.var.as_ref().is_some_and(|var| var.scale.is_some())
    }

    /// Its values as real numbers: a quantized var's stored integers read
    /// through its scale; `None` for a quantized dtype whose scale the dump
    /// does not know (a raw dump, made without its model), never read as integers.
    pub fn real_view<'n>(&self, npy: &'n Npy) -> Option<TensorView<'n>> {
        let mut view = npy.view();
        let Some(var) = &self.var else {
            return Some(view);
        };
        match (var.scale, var.dtype.as_deref()) {
            (Some(scale), _) => {
                view.real = Some(Dequantize {
                    scale,
                    zero_point: f64::from(var.zero_point.unwrap_or(0)),
                })
            }
            (None, Some(dtype)) if dtype.starts_with("qint") || dtype.starts_with("quint") => return None,
            _ => {}
        }
        Some(view)
    }

    /// Where it is, for messages.
    pub fn location(&self) -> String {
        match &self.location {
            Location::File(path) | Location::Raw(path) => path.display().to_string(),
            Location::Archived { archive, key } => format!("{}:{key}", archive.display()),
            Location::NoValues => format!("var '{}'", self.name),
        }
    }
}

/// The arrays of an archive, named `prefix` + key.
fn archived(archive: &Path, prefix: &str) -> Result<Vec<Tensor>> {
    let npz = Npz::open(archive).with_context(|| format!("{}", archive.display()))?;
    Ok(npz
        .keys()
        .into_iter()
        .map(|key| {
            let name = format!("{prefix}{key}");
            Tensor {
                key: name.clone(),
                name,
                location: Location::Archived {
                    archive: archive.to_path_buf(),
                    key,
                },
                var: None,
            }
        })
        .collect())
}

/// Every file under `dir`, skipping hidden entries (such as files being written).
fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read the folder {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read the folder {}", dir.display()))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}
