//! `index.json`: the vars of an io dump in execution order, with the operator
//! that made each and the file that holds each value.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::input_files;
use crate::output_files::StagedSet;

/// The index's file name inside a dump folder.
pub const INDEX_FILE: &str = "index.json";

#[derive(Serialize, Deserialize, Debug)]
pub struct Index {
    pub model: String,
    /// `bin` (values in `.npy` files) or `txt` (the engine's text in `io.txt`, no values).
    pub format: String,
    /// In execution order.
    pub vars: Vec<IndexVar>,
    /// The names of the model's outputs, where known (a raw dump's are not):
    /// with the vars operators read, what a var's values reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
    /// Where a run the engine refused stopped: the dump holds the vars before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_at: Option<FailedAt>,
}

/// What an index says besides its vars: the model, its outputs, where its run stopped.
pub struct Heading<'a> {
    pub model: &'a str,
    pub outputs: Vec<String>,
    pub failed_at: Option<FailedAt>,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct IndexVar {
    pub name: String,
    /// The engine's var id (the binary dump's file name, in hex).
    pub id: u64,
    pub operator: String,
    #[serde(rename = "type")]
    pub op_type: String,
    /// The vars the operator reads (none for constants and the model's inputs).
    pub inputs: Vec<String>,
    pub shape: Option<Vec<usize>>,
    /// A quantized var's is its own (`qint8`, `quint8`, `qint32`), its
    /// `.npy` file holding the stored integers.
    pub dtype: Option<String>,
    /// A quantized var's scale: a stored value `v` means `(v - zero_point) * scale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// An asymmetric quantized dtype's (`quint8`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_point: Option<u8>,
    /// The `.npy` file, relative to the dump folder; none in a text dump, or for
    /// a dtype `.npy` cannot hold.
    pub file: Option<String>,
}

/// The file the engine's text dump goes to, inside the dump folder.
pub const TEXT_FILE: &str = "io.txt";

/// Adds `index` to the dump's `set` (last, once every file it names is there).
pub fn write_index(set: &mut StagedSet, index: Index) -> Result<Index> {
    set.add(INDEX_FILE.into(), &serde_json::to_vec_pretty(&index)?)?;
    Ok(index)
}

/// Reads the index of the dump in `dir`, if there is one.
pub fn read_index(dir: &Path) -> Result<Option<Index>> {
    let path = dir.join(INDEX_FILE);
    let Some(bytes) = input_files::read_if_present(&path, &input_files::IO_DUMP_INDEX)? else {
        return Ok(None);
    };
    let index: Index = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is not the index of an io dump written by `mge dump --io`",
            path.display()
        )
    })?;
    // The index names files of its own folder, and nothing else is read.
    let outside = index
        .vars
        .iter()
        .find(|var| var.file.as_deref().is_some_and(|file| !is_file_name(file)));
    if let Some(var) = outside {
        bail!(
            "{}: var '{}' names the file '{}', which is not a file of the dump's folder (a name with a folder part, \
             `..` or an absolute path)",
            path.display(),
            var.name,
            var.file.as_deref().unwrap_or_default()
        );
    }
    Ok(Some(index))
}

/// One plain name within a folder: no `/`, not `.` or `..`, not empty.
fn is_file_name(file: &str) -> bool {
    !file.is_empty() && !file.contains('/') && file != "." && file != ".."
}

/// Where a run stopped, in `index.json`: the operator (by the model graph's
/// names, none where the graph could not be read) and the engine's message.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct FailedAt {
    pub operator: Option<String>,
    #[serde(rename = "type")]
    pub op_type: Option<String>,
    /// The operator's first output.
    pub var: Option<String>,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index names files of its own folder: `../secret.npy` was read and
    /// its values shown by `compare`, `/etc/passwd` opened before it was refused.
    #[test]
    fn an_index_names_no_file_outside_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let index = |file: &str| {
            let var = serde_json::json!({"name": "x", "id": 1, "operator": "x", "type": "Host2DeviceCopy",
                                         "inputs": [], "shape": [1], "dtype": "float32", "file": file});
            let index = serde_json::json!({"model": "m.mge", "format": "bin", "vars": [var]});
            std::fs::write(dir.path().join(INDEX_FILE), index.to_string()).unwrap();
            read_index(dir.path())
        };
        for outside in ["../secret.npy", "/etc/passwd", "sub/x.npy", "..", ".", ""] {
            let message = format!("{:#}", index(outside).unwrap_err());
            assert!(
                message.contains(&format!(
                    "var 'x' names the file '{outside}', which is not a file of the dump's folder"
                )),
                "{message}"
            );
        }
        assert!(index("0000_x.npy").unwrap().is_some());
    }
}
