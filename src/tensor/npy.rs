//! Reading `.npy` files: the header, then the data as it is stored, viewed
//! without copying (large reference tensors are read once).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use ndarray_npy::npy::header::Header;
use zip::ZipArchive;

use super::{format_shape, Element, TensorView};
use crate::report::quoted_list;

/// An `.npy` file parsed in place.
pub struct Npy<'a> {
    pub element: Element,
    pub shape: Vec<usize>,
    fortran: bool,
    big_endian: bool,
    data: &'a [u8],
}

impl<'a> Npy<'a> {
    /// Parses a whole `.npy` file, checking that its data fills the header's shape.
    pub fn parse(bytes: &'a [u8]) -> Result<Npy<'a>> {
        let mut data = bytes;
        let header = Header::from_reader(&mut data).map_err(|err| anyhow!("not a valid .npy file: {err}"))?;
        let Some(descr) = header.type_descriptor.as_string() else {
            bail!("structured dtype {} is not supported", header.type_descriptor);
        };
        let element = element_of(descr)?;
        // Checked before use so that a corrupt header cannot claim more than the file holds.
        let needed = header
            .shape
            .iter()
            .try_fold(element.size(), |bytes, &dim| bytes.checked_mul(dim));
        if needed != Some(data.len()) {
            bail!(
                "not a valid .npy file: the header's shape {} of {} needs {} bytes of data, the file has {}",
                format_shape(&header.shape),
                header.type_descriptor,
                needed.map_or_else(|| "too many".to_string(), |bytes| bytes.to_string()),
                data.len()
            );
        }
        Ok(Npy {
            element,
            fortran: header.layout.is_fortran(),
            big_endian: descr.starts_with('>'),
            shape: header.shape,
            data,
        })
    }

    pub fn view(&self) -> TensorView<'_> {
        TensorView {
            shape: &self.shape,
            element: self.element,
            data: self.data,
            fortran: self.fortran,
            big_endian: self.big_endian,
        }
    }
}

/// The element type of a NumPy type string such as `<f4`.
fn element_of(descr: &str) -> Result<Element> {
    let code = descr.trim_start_matches(['<', '>', '|', '=']);
    Ok(match code {
        "b1" => Element::Bool,
        "i1" => Element::I8,
        "i2" => Element::I16,
        "i4" => Element::I32,
        "i8" => Element::I64,
        "u1" => Element::U8,
        "u2" => Element::U16,
        "u4" => Element::U32,
        "u8" => Element::U64,
        "f2" => Element::F16,
        "f4" => Element::F32,
        "f8" => Element::F64,
        _ => {
            let kind = match code.chars().next() {
                Some('c') => "complex ",
                Some('O') => "object ",
                Some('U' | 'S' | 'a') => "string ",
                Some('M' | 'm') => "datetime ",
                _ => "",
            };
            bail!("{kind}dtype '{descr}' is not supported: expected a numeric or bool array");
        }
    })
}

/// An open `.npz` (a zip of `.npy` files, stored or deflated).
pub struct Npz {
    archive: ZipArchive<File>,
}

impl Npz {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|err| anyhow!("cannot read file: {err}"))?;
        let archive = ZipArchive::new(file).map_err(|err| anyhow!("not a valid .npz archive: {err}"))?;
        Ok(Npz { archive })
    }

    /// Array names, as NumPy's `np.load(...).files` lists them (without `.npy`).
    pub fn keys(&self) -> Vec<String> {
        self.archive
            .file_names()
            .map(|name| name.strip_suffix(".npy").unwrap_or(name).to_string())
            .collect()
    }

    /// The `.npy` file of array `key`, whole.
    pub fn bytes(&mut self, key: &str) -> Result<Vec<u8>> {
        let entry_name = [format!("{key}.npy"), key.to_string()]
            .into_iter()
            .find(|name| self.archive.index_for_name(name).is_some())
            .ok_or_else(|| {
                anyhow!(
                    "no array '{key}' in the archive; its keys are {}",
                    quoted_list(self.keys())
                )
            })?;
        let mut bytes = Vec::new();
        self.archive
            .by_name(&entry_name)
            .map_err(|err| anyhow!("cannot read array '{key}': {err}"))?
            .read_to_end(&mut bytes)
            .map_err(|err| anyhow!("cannot read array '{key}': {err}"))?;
        Ok(bytes)
    }
}
