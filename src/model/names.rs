//! Names the engine cannot write into its JSON, renamed before loading and
//! put back into whatever the engine reports.
//!
//! The graph profiler's file (which `profile`, `run --profile` and `dump
//! --io` read) is written by MegEngine 1.13's `json::String::writeto`. It
//! escapes `"`, `\`, `/`, `\b`, `\f`, `\n`, `\r` and `\t`, and asserts `ch >=
//! 1` on every other byte with `char` signed: a NUL or any byte of a
//! non-ASCII character ends the run ("assertion `ch >= 1' failed"), and the
//! other control characters go out raw, which no JSON reader takes. Empty
//! names, names of 10,000 characters, `%`, quotes, `\` and `/` come out
//! well (checked with 1.13 on `fixtures/named/`).
//!
//! Each such name becomes a placeholder `@mge<N>@` (with as many `_` after
//! `@mge` as keep the marker out of every name of the graph), the same in
//! every field that holds it: operators' names, vars' names, the names of
//! an operator's tensors (an input's), output aliases. The placeholders are
//! appended to the flatbuffer and those fields pointed at them; nothing
//! else moves. Names the engine makes of others (`conv(@mge0@,w)[4]`) hold
//! placeholders too, so a name is restored by replacing every placeholder in
//! it.

use std::borrow::Cow;
use std::collections::HashMap;

use anyhow::{Context, Result};

use super::flatbuffer::{self, Table};
use super::graph::{model, operator, output, tensor};
use super::{schema, GraphFormat};

/// The names of a graph the engine loads under placeholders, by placeholder.
#[derive(Clone, Debug, Default)]
pub struct EngineNames {
    /// The name placeholder N stands for.
    originals: Vec<String>,
    /// `@mge` and the `_` that keep it out of every name of the graph.
    marker: String,
}

/// Whether the engine's JSON writer writes `name` as it is (see the module's notes).
fn writable(name: &str) -> bool {
    name.bytes()
        .all(|byte| (0x20..0x80).contains(&byte) || b"\x08\x09\x0a\x0c\x0d".contains(&byte))
}

impl EngineNames {
    /// No name renamed.
    pub fn none() -> EngineNames {
        EngineNames::default()
    }

    pub fn is_empty(&self) -> bool {
        self.originals.is_empty()
    }

    fn placeholder(&self, index: usize) -> String {
        format!("{}{index}@", self.marker)
    }

    /// The name the engine knows the var or operator `name` by.
    pub fn engine_name<'a>(&self, name: &'a str) -> Cow<'a, str> {
        match self.originals.iter().position(|original| original == name) {
            Some(index) => Cow::Owned(self.placeholder(index)),
            None => Cow::Borrowed(name),
        }
    }

    /// `text` (a name, a message, a dump) with every placeholder replaced by the name it stands for.
    pub fn restore<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.restore_bytes(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // ASCII placeholders replaced by whole names keep the text UTF-8.
            Cow::Owned(bytes) => Cow::Owned(String::from_utf8(bytes).expect("UTF-8 with UTF-8 names in it")),
        }
    }

    /// As `restore`, for text that need not be UTF-8 (the engine's text io dump).
    pub fn restore_bytes<'a>(&self, text: &'a [u8]) -> Cow<'a, [u8]> {
        if self.is_empty() {
            return Cow::Borrowed(text);
        }
        let marker = self.marker.as_bytes();
        let mut restored = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.windows(marker.len()).position(|window| window == marker) {
            let after = &rest[at + marker.len()..];
            let digits = after.iter().take_while(|byte| byte.is_ascii_digit()).count();
            let original = match after.get(digits) {
                Some(b'@') if digits > 0 => std::str::from_utf8(&after[..digits])
                    .ok()
                    .and_then(|number| number.parse::<usize>().ok())
                    .and_then(|index| self.originals.get(index)),
                _ => None,
            };
            match original {
                Some(name) => {
                    restored.extend_from_slice(&rest[..at]);
                    restored.extend_from_slice(name.as_bytes());
                    rest = &after[digits + 1..];
                }
                None => {
                    restored.extend_from_slice(&rest[..at + marker.len()]);
                    rest = after;
                }
            }
        }
        if restored.is_empty() {
            return Cow::Borrowed(text);
        }
        restored.extend_from_slice(rest);
        Cow::Owned(restored)
    }
}

/// Where the names lie in each format's operators (`schema.fbs`, `schema_v2.fbs`).
struct NameFields {
    oprs: usize,
    /// `Operator.name`.
    operator_name: usize,
    /// `Operator.output_name: [string]` (FBS v1; FBS v2 names vars in `middle_tensors`).
    output_names: Option<usize>,
    /// `Operator.tensors: [Tensor]`, each named in its field 0.
    tensors: usize,
}

fn name_fields(format: GraphFormat) -> NameFields {
    match format {
        GraphFormat::FbsV1 => NameFields {
            oprs: 3,
            operator_name: 12,
            output_names: Some(5),
            tensors: 7,
        },
        GraphFormat::FbsV2 => NameFields {
            oprs: model::OPRS,
            operator_name: operator::NAME,
            output_names: None,
            tensors: operator::TENSORS,
        },
    }
}

/// Every name of the graph in `flatbuffer`: where its offset is stored, and the name.
fn name_slots(format: GraphFormat, flatbuffer: &[u8]) -> Result<Vec<(usize, &str)>> {
    let root = Table::root(flatbuffer)?;
    let fields = name_fields(format);
    let mut slots = Vec::new();
    for operator in root.tables(fields.oprs)? {
        slots.extend(operator.string_slot(fields.operator_name)?);
        if let Some(output_names) = fields.output_names {
            slots.extend(operator.string_slots(output_names)?);
        }
        for tensor in operator.tables(fields.tensors)? {
            slots.extend(tensor.string_slot(tensor::NAME)?);
        }
    }
    if format == GraphFormat::FbsV2 {
        for var in root.tables(model::MIDDLE_TENSORS)? {
            slots.extend(var.string_slot(tensor::NAME)?);
        }
        for alias in root.tables(model::OUTPUT_ALIAS)? {
            slots.extend(alias.string_slot(output::ALIAS_NAME)?);
        }
    }
    Ok(slots)
}

/// `graph` (one graph of `format`: a flatbuffer from `flatbuffer_start` to
/// its end, its length in the four bytes before) with the names the engine
/// cannot write under placeholders, and those names.
pub(super) fn rename(format: GraphFormat, graph: &[u8], flatbuffer_start: usize) -> Result<(Vec<u8>, EngineNames)> {
    let slots = name_slots(format, &graph[flatbuffer_start..]).context("cannot read the graph's names")?;
    let mut marker = String::from("@mge");
    while slots.iter().any(|(_, name)| name.contains(&marker)) {
        marker.push('_');
    }
    let mut names = EngineNames {
        originals: Vec::new(),
        marker,
    };
    for (_, name) in slots {
        if !writable(name) && !names.originals.iter().any(|original| original == name) {
            names.originals.push(name.to_string());
        }
    }
    let renamed = replace_names(format, graph, flatbuffer_start, |name| {
        (!writable(name)).then(|| names.engine_name(name).into_owned())
    })?;
    Ok((renamed, names))
}

/// `graph` (a graph the engine wrote of a network that knew `names` under
/// placeholders, framed as for `rename`) with the model's names back.
pub(super) fn restore(
    format: GraphFormat,
    graph: &[u8],
    flatbuffer_start: usize,
    names: &EngineNames,
) -> Result<Vec<u8>> {
    replace_names(format, graph, flatbuffer_start, |name| match names.restore(name) {
        Cow::Owned(restored) => Some(restored),
        Cow::Borrowed(_) => None,
    })
}

/// `graph` (framed as for `rename`) with each name that `replacement` gives
/// another for replaced: the new names are appended to the flatbuffer,
/// 4-aligned from its start as strings are and NUL-terminated, and the
/// fields pointed at them (every offset then points forward); nothing else moves.
fn replace_names(
    format: GraphFormat,
    graph: &[u8],
    flatbuffer_start: usize,
    replacement: impl Fn(&str) -> Option<String>,
) -> Result<Vec<u8>> {
    let slots = name_slots(format, &graph[flatbuffer_start..]).context("cannot read the graph's names")?;
    let mut edited = graph.to_vec();
    let mut placed: HashMap<String, usize> = HashMap::new();
    let mut pointed = Vec::new();
    for (slot, name) in slots {
        let Some(new_name) = replacement(name) else {
            continue;
        };
        let at = match placed.get(&new_name) {
            Some(&at) => at,
            None => {
                let aligned = (edited.len() - flatbuffer_start).next_multiple_of(4);
                edited.resize(flatbuffer_start + aligned, 0);
                edited.extend((new_name.len() as u32).to_le_bytes());
                edited.extend(new_name.as_bytes());
                edited.push(0);
                *placed.entry(new_name).or_insert(aligned)
            }
        };
        pointed.push((slot, at));
    }
    if pointed.is_empty() {
        return Ok(edited);
    }
    for (slot, at) in pointed {
        let offset = u32::try_from(at - slot).context("a graph of 4 GB or more")?;
        edited[flatbuffer_start + slot..][..4].copy_from_slice(&offset.to_le_bytes());
    }
    let len = u32::try_from(edited.len() - flatbuffer_start).context("a graph of 4 GB or more")?;
    edited[flatbuffer_start - 4..flatbuffer_start].copy_from_slice(&len.to_le_bytes());
    let root = match format {
        GraphFormat::FbsV1 => &schema::GRAPH_V1,
        GraphFormat::FbsV2 => &schema::MODEL_V2,
    };
    flatbuffer::verify(&edited[flatbuffer_start..], root).context("the graph with names replaced does not verify")?;
    Ok(edited)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::ModelFile;

    fn fixture(name: &str) -> ModelFile {
        ModelFile::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name), None).unwrap()
    }

    #[test]
    fn writes_what_the_engines_json_writer_writes() {
        let long = "n".repeat(10_000);
        for name in [
            "",
            "conv(data,w)[4]",
            "a/b\\c\"d%s",
            "line1\nline2\ttab",
            "del\x7f",
            &long,
        ] {
            assert!(writable(name), "{name:?}");
        }
        for name in ["输出", "é", "x\x1b[31m", "bell\x07", "nul\0"] {
            assert!(!writable(name), "{name:?}");
        }
    }

    /// Every field that held `输入` or `输出` holds its placeholder, every
    /// other name is kept, and the names come back from the engine's words.
    #[test]
    fn renames_every_field_that_holds_a_name() {
        let model = fixture("named/unicode.mge");
        let (graph, names) = model.with_writable_names(model.graph().to_vec()).unwrap();
        let renamed = ModelFile::parse(graph).unwrap();
        let (before, after) = (
            name_slots(GraphFormat::FbsV2, model.graph_flatbuffer()).unwrap(),
            name_slots(GraphFormat::FbsV2, renamed.graph_flatbuffer()).unwrap(),
        );
        assert_eq!(before.len(), after.len());
        let mut placeholders = 0;
        for ((_, original), (_, now)) in before.iter().zip(&after) {
            if writable(original) {
                assert_eq!(original, now);
            } else {
                assert!(writable(now) && now.starts_with("@mge"), "{now}");
                assert_eq!(names.restore(now), *original);
                assert_eq!(names.engine_name(original), *now);
                placeholders += 1;
            }
        }
        // The input's var and tensor, the output's var (MegEngine 1.13 stores no
        // operator names: the engine makes them of the vars', `conv(输入,...)`).
        assert_eq!(placeholders, 3, "{before:?}");
        assert_eq!(
            names.restore("conv(@mge0@,w)[4] @mge1@ @mge9@ @mge"),
            "conv(输入,w)[4] 输出 @mge9@ @mge"
        );
        assert_eq!(names.engine_name("w"), "w");
    }

    /// The names come back into a graph the engine wrote under placeholders,
    /// in either format.
    #[test]
    fn restores_the_names_of_a_renamed_graph() {
        for file in ["named/unicode_ops.mge", "named/unicode_fbs1.mge"] {
            let model = fixture(file);
            let (renamed, names) = model.with_writable_names(model.graph().to_vec()).unwrap();
            assert!(!names.is_empty(), "{file}");
            let restored = ModelFile::parse(ModelFile::restore_names(renamed, &names).unwrap()).unwrap();
            let format = model.graph_format();
            let names_of = |flatbuffer| -> Vec<String> {
                let slots = name_slots(format, flatbuffer).unwrap();
                slots.into_iter().map(|(_, name)| name.to_string()).collect()
            };
            assert_eq!(
                names_of(model.graph_flatbuffer()),
                names_of(restored.graph_flatbuffer()),
                "{file}"
            );
        }
    }

    #[test]
    fn keeps_a_graph_whose_names_are_all_written() {
        let model = fixture("conv_float.mge");
        let (graph, names) = model.with_writable_names(model.graph().to_vec()).unwrap();
        assert!(names.is_empty());
        assert_eq!(graph, model.graph());
        assert_eq!(names.restore("@mge0@"), "@mge0@");
    }

    #[test]
    fn the_marker_stays_out_of_every_name() {
        let names = EngineNames {
            originals: vec!["é".into()],
            marker: "@mge_".into(),
        };
        assert_eq!(names.restore("@mge0@ @mge_0@"), "@mge0@ é");
        assert_eq!(names.restore_bytes(b"\xff@mge_0@"), &b"\xff\xc3\xa9"[..]);
    }
}
