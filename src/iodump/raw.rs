//! Raw io dumps written elsewhere: a folder of the engine's binary files
//! (load_and_run's `--bin-io-dump`, megenginelite's `enable_io_bin_dump`)
//! without an index. Each file names its var in its title:
//! `var={id:7, layout:..., owner:NAME{TYPE}, name:VAR, slot:0, ...}
//! owner_opr_inputs=0={id:3, ..., name:data, ...} 1={...}`. The vars are
//! listed in file-name order, as MegEngine's `compare_binary_iodump.py` pairs
//! them: the order of var ids, in which every var comes after the vars its
//! operator read.

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::convert::{read_binary, Dumped};
use super::index::{Index, IndexVar};
use crate::input_files;

/// The format of an index made from a raw dump: values in the engine's files.
pub const RAW_FORMAT: &str = "raw";

/// Whether `name` is one of the engine's dump files: the var id in hex, six
/// digits or more, with `-inpN` for the operator inputs `MGB_DUMP_INPUT` adds.
fn is_dump_file(name: &str) -> bool {
    let id = name.split_once("-inp").map_or(name, |(id, input)| {
        if input.is_empty() || !input.bytes().all(|b| b.is_ascii_digit()) {
            ""
        } else {
            id
        }
    });
    id.len() >= 6 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The index of the raw dump in `dir`, or `None` when `dir` does not hold
/// one (a file of another name, or nothing).
pub fn read_raw_index(dir: &Path) -> Result<Option<Index>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read the folder {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read the folder {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if !is_dump_file(&name) || !entry.path().is_file() {
            return Ok(None);
        }
        files.push(name);
    }
    if files.is_empty() {
        return Ok(None);
    }
    // As compare_binary_iodump.py does: file names sorted as strings.
    files.sort();
    let vars = files
        .into_iter()
        .map(|file| {
            let path = dir.join(&file);
            let bytes = input_files::read(&path, &input_files::RAW_IO_DUMP)?;
            let dumped = read_binary(&bytes).with_context(|| format!("{}", path.display()))?;
            raw_var(file, &dumped).with_context(|| format!("{}: the title does not describe a var", path.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(Index {
        model: dir.display().to_string(),
        format: RAW_FORMAT.to_string(),
        vars,
        outputs: Vec::new(),
        failed_at: None,
    }))
}

/// The var a file holds, from its title; an operator input (`-inpN`) is
/// named after its file, since it is another var's value again.
fn raw_var(file: String, dumped: &Dumped) -> Result<IndexVar> {
    let title = &dumped.title;
    let own = title.strip_prefix("var=").context("no 'var=' at the start")?;
    let (own, inputs) = own.split_once(" owner_opr_inputs=").unwrap_or((own, ""));
    let described = describe(own)?;
    let id = u64::from_str_radix(file.split('-').next().unwrap_or(&file), 16)?;
    let input_file = file.contains("-inp");
    Ok(IndexVar {
        name: if input_file { file.clone() } else { described.name },
        id,
        operator: described.operator,
        op_type: described.op_type,
        inputs: if input_file {
            Vec::new()
        } else {
            input_entries(inputs)
                .map(|entry| describe(entry).map(|var| var.name))
                .collect::<Result<_>>()?
        },
        shape: Some(dumped.shape.clone()),
        dtype: Some(dumped.dtype_name()),
        scale: None,
        zero_point: None,
        file: Some(file),
    })
}

/// What `cg::dump_var_info` says of one var.
struct Described {
    name: String,
    operator: String,
    op_type: String,
}

/// Reads `{id:N, layout:..., DTYPE, owner:OPERATOR{TYPE}, name:VAR, slot:N, ...}`.
/// Names hold commas and braces, so the fields are found by their labels.
fn describe(info: &str) -> Result<Described> {
    let owner_at = info.find(", owner:").context("no owner")? + ", owner:".len();
    let name_at = owner_at + info[owner_at..].find(", name:").context("no name")?;
    let slot_at = name_at + info[name_at..].rfind(", slot:").context("no slot")?;
    let owner = &info[owner_at..name_at];
    let (operator, op_type) = owner
        .strip_suffix('}')
        .and_then(|owner| owner.rsplit_once('{'))
        .context("no operator type")?;
    Ok(Described {
        name: info[name_at + ", name:".len()..slot_at].to_string(),
        operator: operator.to_string(),
        op_type: op_type.to_string(),
    })
}

/// The entries of `0={...} 1={...}` (one input is `{...}` alone), each
/// `{...}` with its braces.
fn input_entries(inputs: &str) -> impl Iterator<Item = &str> {
    let mut starts: Vec<usize> = Vec::new();
    if inputs.starts_with('{') {
        starts.push(0);
    }
    let bytes = inputs.as_bytes();
    let mut at = 0;
    while let Some(found) = inputs[at..].find("={id:") {
        let brace = at + found + 1;
        let mut digits = at + found;
        while digits > 0 && bytes[digits - 1].is_ascii_digit() {
            digits -= 1;
        }
        if digits == 0 || bytes[digits - 1] == b' ' {
            starts.push(brace);
        }
        at = brace;
    }
    let ends: Vec<usize> = starts
        .iter()
        .skip(1)
        .map(|&next| {
            let mut end = next - 1;
            while end > 0 && bytes[end - 1].is_ascii_digit() {
                end -= 1;
            }
            end.saturating_sub(1)
        })
        .chain(std::iter::once(inputs.len()))
        .collect();
    starts
        .into_iter()
        .zip(ends)
        .map(move |(start, end)| inputs[start..end].trim())
}

/// Fails unless `index` came from a raw dump in `dir`: for messages that
/// name what was expected.
pub fn refuse_unless_raw(dir: &Path, index: Option<&Index>) -> Result<()> {
    match index {
        Some(index) if index.format == RAW_FORMAT => Ok(()),
        _ => bail!(
            "{} is not a raw io dump: expected only the engine's files named by var id in hex (000001, 00000c, ...), as load_and_run --bin-io-dump and megenginelite's io_bin_dump write them",
            dir.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TITLE: &str = "var={id:18, layout:{1(864),6(144),12(12),12(1) Float32}, Float32, owner:conv(RELU[0],const{6,8,3,3}[6])[17]{ConvolutionForward}, name:Convolution[1], slot:0, CompNode(\"cpu0:0\" from \"cpu0:0\"), s, 4, 1} owner_opr_inputs=0={id:14, layout:{1(1152),8(144),12(12),12(1) Float32}, Float32, owner:FUSE_ADD_RELU(const{1,8,1,1}[4],Convolution[0])[13]{Elemwise}, name:RELU[0], slot:0, CompNode(\"cpu0:0\" from \"cpu0:0\"), s, 4, 8} 1={id:16, layout:{6(72),8(9),3(3),3(1) Float32}, Float32, owner:const{6,8,3,3}[15]{ImmutableTensor}, name:const{6,8,3,3}[6], slot:0, CompNode(\"cpu0:0\" from \"cpu0:0\"), s, 2, 2}";

    #[test]
    fn reads_a_var_and_its_operator_from_the_title() {
        let dumped = Dumped {
            title: TITLE.to_string(),
            shape: vec![1, 6, 12, 12],
            dtype: Ok(crate::tensor::DType::F32),
            quantized: None,
            data_offset: 0,
        };
        let var = raw_var("000012".into(), &dumped).unwrap();
        assert_eq!(var.id, 18);
        assert_eq!(var.name, "Convolution[1]");
        assert_eq!(var.operator, "conv(RELU[0],const{6,8,3,3}[6])[17]");
        assert_eq!(var.op_type, "ConvolutionForward");
        assert_eq!(var.inputs, ["RELU[0]", "const{6,8,3,3}[6]"]);
        let constant = "var={id:16, layout:{6(72) Float32}, Float32, owner:const{6,8,3,3}[15]{ImmutableTensor}, name:const{6,8,3,3}[6], slot:0, x, s, 2, 2} owner_opr_inputs=";
        let var = raw_var(
            "000010".into(),
            &Dumped {
                title: constant.into(),
                ..dumped.clone()
            },
        )
        .unwrap();
        assert!(var.inputs.is_empty());
        assert_eq!(var.op_type, "ImmutableTensor");
        // One input is written without its number.
        let one = "var={id:23, layout:{1(72) Float32}, Float32, owner:reduce5(RELU[1])[22]{Reduce}, name:Reduce[0], slot:0, x, s, 4, 8} owner_opr_inputs={id:21, layout:{1(864) Float32}, Float32, owner:FUSE_ADD_RELU(a,b)[20]{Elemwise}, name:RELU[1], slot:0, x, s, 4, 8}";
        let var = raw_var(
            "000017".into(),
            &Dumped {
                title: one.into(),
                ..dumped
            },
        )
        .unwrap();
        assert_eq!(var.inputs, ["RELU[1]"]);
    }

    #[test]
    fn knows_the_engine_file_names() {
        for name in ["000001", "00000c", "1000000", "00000c-inp0"] {
            assert!(is_dump_file(name), "{name}");
        }
        for name in ["index.json", "00001", "00000g", "000001-inp", "a.npy"] {
            assert!(!is_dump_file(name), "{name}");
        }
    }
}
