//! Lite's packed models (`lite/src/parse_model/pack_model.fbs`, MegEngine
//! 1.13): the tag `packed_model`, then a `PackModel` flatbuffer (not
//! size-prefixed, no identifier: it runs to the end of the file) holding one
//! model: a header naming its methods, an optional info (a JSON the engine
//! applies, a fast-run cache) and the model's data, maybe encrypted.
//! Read with every offset verified, as the engine verifies none; written for
//! `mge tune --save-model`.

use std::ops::Range;

use anyhow::{bail, Context, Result};

use super::flatbuffer::Field::{Inline, String, Table, Tables, Vector};
use super::flatbuffer::{verify, Schema, Table as Reader};

pub const PACK_TAG: &[u8; 12] = b"packed_model";

/// The info parser Lite registers: the info is a JSON.
pub const DEFAULT_INFO_PARSER: &str = "LITE_default";
/// The only parser of an embedded fast-run cache.
pub const CACHE_PARSER: &str = "LITE_parse_cache";

static PACK_MODEL: Schema = Schema {
    name: "PackModel",
    fields: &[Tables(&MODEL)],
    required: &[0],
};

static MODEL: Schema = Schema {
    name: "Model",
    // header, info, data.
    fields: &[Table(&HEADER), Table(&INFO), Table(&DATA)],
    // Lite asserts data is there, but dereferences the header unchecked.
    required: &[0, 2],
};

static HEADER: Schema = Schema {
    name: "ModelHeader",
    // name, info_decryption_method, info_parse_method, model_decryption_method,
    // info_cache_parse_method, is_fast_run_cache.
    fields: &[String, String, String, String, String, Inline(1)],
    // Lite dereferences these four without checking they are there.
    required: &[0, 1, 2, 3],
};

static INFO: Schema = Schema {
    name: "ModelInfo",
    // data, algo_policy, binary_cache.
    fields: &[Vector(1), Vector(1), Vector(1)],
    required: &[],
};

static DATA: Schema = Schema {
    name: "ModelData",
    fields: &[Vector(1)],
    // Lite reads the data's size unchecked.
    required: &[0],
};

/// A pack's header: what the model is called and how its parts are encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: std::string::String,
    pub info_decryption: std::string::String,
    pub info_parser: std::string::String,
    pub model_decryption: std::string::String,
    pub cache_parser: Option<std::string::String>,
    pub is_fast_run_cache: bool,
}

/// A packed model's parts, as byte ranges of the file.
#[derive(Debug)]
pub struct Pack {
    pub header: Header,
    /// The info data (the JSON, maybe encrypted).
    pub info: Option<Range<usize>>,
    /// The fast-run cache the engine installs while it loads the model.
    pub fast_run_cache: Option<Range<usize>>,
    pub data: Range<usize>,
}

impl Pack {
    /// Reads the pack `file` holds (it starts with `PACK_TAG`), verified.
    pub fn read(file: &[u8]) -> Result<Pack> {
        let start = PACK_TAG.len();
        let buf = &file[start..];
        verify(buf, &PACK_MODEL).context("the pack's flatbuffer is malformed")?;
        let models = Reader::root(buf)?.tables(0)?;
        let [model] = models[..] else {
            bail!(
                "the pack holds {} models; Lite loads packs of exactly one",
                models.len()
            );
        };
        let header = model.table(0)?.context("the pack's model has no header")?;
        let string =
            |index: usize| -> Result<Option<std::string::String>> { Ok(header.string(index)?.map(str::to_string)) };
        let required = |index: usize| string(index).map(Option::unwrap_or_default);
        let header_fields = Header {
            name: required(0)?,
            info_decryption: required(1)?,
            info_parser: required(2)?,
            model_decryption: required(3)?,
            cache_parser: string(4)?,
            is_fast_run_cache: header.u8(5)?.unwrap_or(0) != 0,
        };
        let absolute = |range: Range<usize>| range.start + start..range.end + start;
        let (info, fast_run_cache) = match model.table(1)? {
            Some(info) => (info.bytes(0)?.map(absolute), info.bytes(1)?.map(absolute)),
            None => (None, None),
        };
        let data = model.table(2)?.context("the pack's model has no data")?;
        let data = data.bytes(0)?.context("the pack's model data is empty")?;
        if data.is_empty() {
            bail!("the pack's model data is empty");
        }
        Ok(Pack {
            header: header_fields,
            info,
            fast_run_cache,
            data: absolute(data),
        })
    }
}

/// The parts of a pack to write.
pub struct NewPack<'a> {
    pub header: &'a Header,
    pub info: Option<&'a [u8]>,
    pub fast_run_cache: Option<&'a [u8]>,
    pub data: &'a [u8],
}

/// The packed model file for `pack`.
pub fn write(pack: &NewPack) -> Vec<u8> {
    use Value::{Bool, Bytes, Str};
    let header = pack.header;
    let header = Value::Table(vec![
        Some(Str(&header.name)),
        Some(Str(&header.info_decryption)),
        Some(Str(&header.info_parser)),
        Some(Str(&header.model_decryption)),
        header.cache_parser.as_deref().map(Str),
        Some(Bool(header.is_fast_run_cache)),
    ]);
    let info = (pack.info.is_some() || pack.fast_run_cache.is_some())
        .then(|| Value::Table(vec![pack.info.map(Bytes), pack.fast_run_cache.map(Bytes)]));
    let model = vec![Some(header), info, Some(Value::Table(vec![Some(Bytes(pack.data))]))];
    let mut writer = Writer { buf: vec![0; 4] };
    let root = writer.table(&[Some(Value::Tables(vec![model]))]);
    writer.patch(0, root);
    let mut file = PACK_TAG.to_vec();
    file.extend(writer.buf);
    file
}

/// What a field of a table being written holds.
enum Value<'a> {
    Str(&'a str),
    Bytes(&'a [u8]),
    Bool(bool),
    Table(Vec<Option<Value<'a>>>),
    Tables(Vec<Vec<Option<Value<'a>>>>),
}

/// Writes a flatbuffer front to back: each table after its vtable, the
/// objects it refers to after it (offsets point forward, as they must).
struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn align(&mut self) {
        self.buf.resize(self.buf.len().next_multiple_of(4), 0);
    }

    /// Stores at `at` the offset from `at` to `target`.
    fn patch(&mut self, at: usize, target: usize) {
        let offset = u32::try_from(target - at).expect("a pack fits a flatbuffer's 32-bit offsets");
        self.buf[at..at + 4].copy_from_slice(&offset.to_le_bytes());
    }

    /// Writes a table of `fields` (absent ones left out) and what they refer to; returns its position.
    fn table(&mut self, fields: &[Option<Value>]) -> usize {
        // Inline: a 4-byte offset per reference, then a byte per bool.
        let mut slots = Vec::new();
        let mut size: usize = 4;
        for field in fields {
            slots.push(field.as_ref().map(|value| {
                let at = size;
                size += if matches!(value, Value::Bool(_)) { 1 } else { 4 };
                at
            }));
        }
        let size = size.next_multiple_of(4);
        self.align();
        let vtable = self.buf.len();
        let entries = [4 + 2 * fields.len(), size]
            .into_iter()
            .chain(slots.iter().map(|slot| slot.unwrap_or(0)));
        for entry in entries {
            let entry = u16::try_from(entry).expect("small tables");
            self.buf.extend(entry.to_le_bytes());
        }
        self.align();
        let table = self.buf.len();
        self.buf.extend(((table - vtable) as i32).to_le_bytes());
        self.buf.resize(table + size, 0);
        for (field, slot) in fields.iter().zip(slots) {
            let (Some(value), Some(slot)) = (field, slot) else {
                continue;
            };
            match value {
                Value::Bool(on) => self.buf[table + slot] = u8::from(*on),
                other => {
                    let target = self.object(other);
                    self.patch(table + slot, target);
                }
            }
        }
        table
    }

    /// Writes a string, a byte vector, a table or a vector of tables; returns its position.
    fn object(&mut self, value: &Value) -> usize {
        self.align();
        let at = self.buf.len();
        match value {
            Value::Str(text) => {
                self.buf.extend((text.len() as u32).to_le_bytes());
                self.buf.extend(text.as_bytes());
                self.buf.push(0);
            }
            Value::Bytes(bytes) => {
                self.buf.extend((bytes.len() as u32).to_le_bytes());
                self.buf.extend(*bytes);
            }
            Value::Table(fields) => return self.table(fields),
            Value::Tables(tables) => {
                self.buf.extend((tables.len() as u32).to_le_bytes());
                self.buf.resize(at + 4 + 4 * tables.len(), 0);
                for (index, fields) in tables.iter().enumerate() {
                    let table = self.table(fields);
                    self.patch(at + 4 + 4 * index, table);
                }
            }
            Value::Bool(_) => unreachable!("bools are stored inline"),
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            name: "conv".into(),
            info_decryption: "NONE".into(),
            info_parser: DEFAULT_INFO_PARSER.into(),
            model_decryption: "NONE".into(),
            cache_parser: Some(CACHE_PARSER.into()),
            is_fast_run_cache: true,
        }
    }

    #[test]
    fn reads_what_it_writes() {
        let header = header();
        let file = write(&NewPack {
            header: &header,
            info: Some(b"{\"valid\":false}"),
            fast_run_cache: Some(&[0, 0, 0, 0]),
            data: b"graph bytes",
        });
        let pack = Pack::read(&file).unwrap();
        assert_eq!(pack.header, header);
        assert_eq!(&file[pack.info.unwrap()], b"{\"valid\":false}");
        assert_eq!(&file[pack.fast_run_cache.unwrap()], &[0, 0, 0, 0]);
        assert_eq!(&file[pack.data], b"graph bytes");
        let bare = write(&NewPack {
            header: &header,
            info: None,
            fast_run_cache: None,
            data: b"g",
        });
        let pack = Pack::read(&bare).unwrap();
        assert!(pack.info.is_none() && pack.fast_run_cache.is_none());
    }

    /// The header strings Lite dereferences unchecked must be there.
    #[test]
    fn refuses_a_header_without_its_methods() {
        let mut header = header();
        header.cache_parser = None;
        let file = write(&NewPack {
            header: &header,
            info: None,
            fast_run_cache: None,
            data: b"g",
        });
        // The model_decryption_method slot (field 3) of the header's vtable, zeroed.
        let mut broken = file.clone();
        let vtable = (0..broken.len() - 16)
            .find(|&at| broken[at..at + 16] == [16, 0, 24, 0, 4, 0, 8, 0, 12, 0, 16, 0, 0, 0, 20, 0])
            .expect("the header's vtable");
        broken[vtable + 10..vtable + 12].copy_from_slice(&[0, 0]);
        let err = format!("{:#}", Pack::read(&broken).unwrap_err());
        assert!(err.contains("required field 3 is missing"), "{err}");
        assert!(Pack::read(&file[..file.len() - 3]).is_err());
    }
}
