//! Just enough of the FlatBuffers wire format to read tables, vectors and
//! strings out of a graph, with every offset checked against the buffer, and
//! to verify a whole graph against its schema before the engine, which trusts
//! its input, reads it.

use std::iter::StepBy;
use std::ops::Range;

use anyhow::{bail, Context, Result};

/// A table inside a flatbuffer.
#[derive(Clone, Copy)]
pub struct Table<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Table<'a> {
    /// The root table of a flatbuffer (not size-prefixed).
    pub fn root(buf: &'a [u8]) -> Result<Table<'a>> {
        let root = read_u32(buf, 0)? as usize;
        Table::at(buf, root)
    }

    /// The table at `pos` of `buf`.
    pub fn at(buf: &'a [u8], pos: usize) -> Result<Table<'a>> {
        let table = Table { buf, pos };
        // Checked here so that `field` can trust the vtable's position.
        table.vtable()?;
        Ok(table)
    }

    fn vtable(&self) -> Result<usize> {
        let soffset = i64::from(read_u32(self.buf, self.pos)? as i32);
        let vtable = usize::try_from(self.pos as i64 - soffset).context("flatbuffer vtable before the buffer")?;
        read_u16(self.buf, vtable)?;
        Ok(vtable)
    }

    /// The position of field `index`, or `None` when it holds its default.
    pub fn field(&self, index: usize) -> Result<Option<usize>> {
        let vtable = self.vtable()?;
        let vtable_len = read_u16(self.buf, vtable)? as usize;
        let entry = 4 + 2 * index;
        if entry + 2 > vtable_len {
            return Ok(None);
        }
        let offset = read_u16(self.buf, vtable + entry)? as usize;
        Ok((offset != 0).then_some(self.pos + offset))
    }

    /// Where the offset stored at `pos` points.
    fn follow(&self, pos: usize) -> Result<usize> {
        follow(self.buf, pos)
    }

    pub fn u8(&self, index: usize) -> Result<Option<u8>> {
        self.field(index)?.map(|pos| byte(self.buf, pos)).transpose()
    }

    pub fn u32(&self, index: usize) -> Result<Option<u32>> {
        self.field(index)?.map(|pos| read_u32(self.buf, pos)).transpose()
    }

    pub fn u64(&self, index: usize) -> Result<Option<u64>> {
        let Some(pos) = self.field(index)? else {
            return Ok(None);
        };
        Ok(Some(u64::from_le_bytes(slice(self.buf, pos, 8)?.try_into().unwrap())))
    }

    /// The table's vtable and the table itself, as bytes of its buffer (the
    /// table's first 4 say where its vtable is), each within its bounds.
    pub fn raw(&self) -> Result<(&'a [u8], &'a [u8])> {
        let vtable = self.vtable()?;
        let vtable_len = read_u16(self.buf, vtable)? as usize;
        let object_len = read_u16(self.buf, vtable + 2)? as usize;
        if vtable_len < 4 || !vtable_len.is_multiple_of(2) || object_len < 4 {
            bail!("malformed vtable at {vtable} (size {vtable_len}, table size {object_len})");
        }
        Ok((
            slice(self.buf, vtable, vtable_len)?,
            slice(self.buf, self.pos, object_len)?,
        ))
    }

    /// Where the table starts in its buffer.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The buffer the table lies in.
    pub fn buffer(&self) -> &'a [u8] {
        self.buf
    }

    /// The bytes of a vector of structs of `size` bytes each; `None` when absent.
    pub fn structs(&self, index: usize, size: usize) -> Result<Option<&'a [u8]>> {
        let Some(pos) = self.field(index)? else {
            return Ok(None);
        };
        let start = self.follow(pos)?;
        let len = read_u32(self.buf, start)? as usize;
        let bytes = len.checked_mul(size).context("flatbuffer vector too long")?;
        Ok(Some(slice(self.buf, start + 4, bytes)?))
    }

    /// Each field stored in the table (not left at its default), by index,
    /// with the bytes from it to the next stored field or the table's end:
    /// its value and any padding, for tables of scalars.
    pub fn stored_fields(&self) -> Result<Vec<(usize, &'a [u8])>> {
        let vtable = self.vtable()?;
        let vtable_len = read_u16(self.buf, vtable)? as usize;
        let object_len = read_u16(self.buf, vtable + 2)? as usize;
        let mut offsets: Vec<(usize, usize)> = (0..vtable_len.saturating_sub(4) / 2)
            .map(|index| Ok((index, read_u16(self.buf, vtable + 4 + 2 * index)? as usize)))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .filter(|&(_, offset)| offset != 0)
            .collect();
        offsets.sort_by_key(|&(_, offset)| offset);
        let ends: Vec<usize> = offsets
            .iter()
            .skip(1)
            .map(|&(_, offset)| offset)
            .chain([object_len])
            .collect();
        let mut fields: Vec<(usize, &'a [u8])> = offsets
            .iter()
            .zip(ends)
            .map(|(&(index, offset), end)| Ok((index, slice(self.buf, self.pos + offset, end.saturating_sub(offset))?)))
            .collect::<Result<Vec<_>>>()?;
        fields.sort_by_key(|&(index, _)| index);
        Ok(fields)
    }

    /// Where the object field `index` refers to (a table, vector or string)
    /// starts, or `None` when the field is absent.
    pub fn target(&self, index: usize) -> Result<Option<usize>> {
        self.field(index)?.map(|pos| self.follow(pos)).transpose()
    }

    pub fn f32(&self, index: usize) -> Result<Option<f32>> {
        self.field(index)?
            .map(|pos| read_u32(self.buf, pos).map(f32::from_bits))
            .transpose()
    }

    pub fn table(&self, index: usize) -> Result<Option<Table<'a>>> {
        match self.field(index)? {
            Some(pos) => Ok(Some(Table::at(self.buf, self.follow(pos)?)?)),
            None => Ok(None),
        }
    }

    pub fn string(&self, index: usize) -> Result<Option<&'a str>> {
        self.field(index)?
            .map(|pos| self.string_at(self.follow(pos)?))
            .transpose()
    }

    /// A string field with where its offset is stored (to point it elsewhere).
    pub fn string_slot(&self, index: usize) -> Result<Option<(usize, &'a str)>> {
        self.field(index)?
            .map(|pos| Ok((pos, self.string_at(self.follow(pos)?)?)))
            .transpose()
    }

    /// A vector of strings, each with where its offset is stored.
    pub fn string_slots(&self, index: usize) -> Result<Vec<(usize, &'a str)>> {
        self.vector(index)?
            .into_iter()
            .map(|pos| Ok((pos, self.string_at(self.follow(pos)?)?)))
            .collect()
    }

    fn string_at(&self, start: usize) -> Result<&'a str> {
        let len = read_u32(self.buf, start)? as usize;
        let bytes = slice(self.buf, start + 4, len)?;
        std::str::from_utf8(bytes).context("flatbuffer string is not UTF-8")
    }

    /// The positions of a vector's 4-byte elements; empty when absent.
    fn vector(&self, index: usize) -> Result<Vec<usize>> {
        let Some(pos) = self.field(index)? else {
            return Ok(Vec::new());
        };
        let start = self.follow(pos)?;
        let len = read_u32(self.buf, start)? as usize;
        slice(
            self.buf,
            start + 4,
            len.checked_mul(4).context("flatbuffer vector too long")?,
        )?;
        Ok((0..len).map(|i| start + 4 + 4 * i).collect())
    }

    /// Where a vector of bytes lies in the buffer; `None` when absent.
    pub fn bytes(&self, index: usize) -> Result<Option<Range<usize>>> {
        let Some(pos) = self.field(index)? else {
            return Ok(None);
        };
        let start = self.follow(pos)?;
        let len = read_u32(self.buf, start)? as usize;
        slice(self.buf, start + 4, len)?;
        Ok(Some(start + 4..start + 4 + len))
    }

    pub fn u32s(&self, index: usize) -> Result<Vec<u32>> {
        self.vector(index)?
            .into_iter()
            .map(|pos| read_u32(self.buf, pos))
            .collect()
    }

    pub fn strings(&self, index: usize) -> Result<Vec<&'a str>> {
        self.vector(index)?
            .into_iter()
            .map(|pos| self.string_at(self.follow(pos)?))
            .collect()
    }

    /// A vector of tables; empty when absent.
    pub fn tables(&self, index: usize) -> Result<Vec<Table<'a>>> {
        self.vector(index)?
            .into_iter()
            .map(|pos| Table::at(self.buf, self.follow(pos)?))
            .collect()
    }
}

/// What a table field holds, as far as verifying the buffer needs to know.
#[derive(Clone, Copy)]
pub enum Field {
    /// Scalars, enums and structs of this many bytes, stored in the table.
    Inline(usize),
    String,
    Table(&'static Schema),
    /// A vector of inline elements of this many bytes.
    Vector(usize),
    Strings,
    Tables(&'static Schema),
    /// A union's value; its type is the field before it.
    Union(Members),
    /// A vector of unions; their types are the vector field before it.
    Unions(Members),
}

/// The schema of a union's member of a given type; `None` for a member that
/// holds scalars only, verified as a table whose fields lie inside it.
pub type Members = fn(u8) -> Option<&'static Schema>;

/// A table type: its fields in declaration order (a union takes two).
pub struct Schema {
    pub name: &'static str,
    pub fields: &'static [Field],
    /// Fields the schema marks `(required)`.
    pub required: &'static [usize],
}

/// A table of scalars only, or one of a newer schema: fields are checked to
/// lie inside the table.
pub static SCALARS: Schema = Schema {
    name: "param",
    fields: &[],
    required: &[],
};

/// The work verifying a buffer may take, in elements read (a table's vtable
/// entries, a vector's elements, a string's bytes), for each byte of it, and
/// at least. FlatBuffers lets many offsets point at one table, vector or
/// string, so a small buffer can stand for an endless graph; every reader of
/// a verified graph expands no more than the verifier walked. A real graph
/// reads each element about once: sharing that multiplies it is refused.
const WORK_PER_BYTE: u64 = 16;
const WORK_FLOOR: u64 = 1 << 20;
/// Nesting deeper than any schema here allows.
const MAX_DEPTH: usize = 64;

/// Checks that every offset reachable from the root table of `buf` under
/// `root` lands inside the buffer: vtables, tables, vectors, strings.
pub fn verify(buf: &[u8], root: &'static Schema) -> Result<()> {
    let budget = WORK_FLOOR.saturating_add(WORK_PER_BYTE.saturating_mul(buf.len() as u64));
    let mut verifier = Verifier {
        buf,
        budget,
        work_left: budget,
    };
    let pos = verifier.offset(0)?;
    verifier.table(pos, root, 0)
}

struct Verifier<'a> {
    buf: &'a [u8],
    budget: u64,
    work_left: u64,
}

impl Verifier<'_> {
    /// Counts `elements` read against the budget.
    fn charge(&mut self, elements: usize) -> Result<()> {
        match self.work_left.checked_sub(elements as u64) {
            Some(left) => {
                self.work_left = left;
                Ok(())
            }
            None => bail!(
                "its tables are shared so that reading it means reading more than {} elements, \
                 {WORK_PER_BYTE} for each of its {} bytes: a crafted graph, not a dump",
                self.budget,
                self.buf.len()
            ),
        }
    }

    /// Where the offset stored at `pos` points, checked to be inside the buffer.
    fn offset(&self, pos: usize) -> Result<usize> {
        let value = read_u32(self.buf, pos)?;
        if value > i32::MAX as u32 {
            bail!("flatbuffer offset {value} at {pos} is negative");
        }
        let target = pos + value as usize;
        if target >= self.buf.len() {
            bail!(
                "flatbuffer offset at {pos} points to {target}, past the end of the graph ({} bytes)",
                self.buf.len()
            );
        }
        Ok(target)
    }

    fn table(&mut self, pos: usize, schema: &'static Schema, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            bail!("flatbuffer tables nest deeper than {MAX_DEPTH}");
        }
        let what = || format!("{} table at {pos}", schema.name);
        let vtable = Table { buf: self.buf, pos }.vtable().with_context(what)?;
        let vtable_len = read_u16(self.buf, vtable)? as usize;
        let object_len = read_u16(self.buf, vtable + 2).with_context(what)? as usize;
        if vtable_len < 4 || !vtable_len.is_multiple_of(2) || object_len < 4 {
            bail!(
                "{}: malformed vtable at {vtable} (size {vtable_len}, table size {object_len})",
                what()
            );
        }
        slice(self.buf, vtable, vtable_len).with_context(what)?;
        slice(self.buf, pos, object_len).with_context(what)?;
        let field_count = (vtable_len - 4) / 2;
        self.charge(1 + field_count)?;
        for &required in schema.required {
            if required >= field_count || read_u16(self.buf, vtable + 4 + 2 * required)? == 0 {
                bail!("{}: required field {required} is missing", what());
            }
        }
        for index in 0..field_count {
            let offset = read_u16(self.buf, vtable + 4 + 2 * index)? as usize;
            if offset == 0 {
                continue;
            }
            let field = schema.fields.get(index).copied().unwrap_or(Field::Inline(1));
            let size = match field {
                Field::Inline(size) => size,
                _ => 4,
            };
            if offset < 4 || offset + size > object_len {
                bail!(
                    "{}: field {index} ({size} bytes at {offset}) lies outside the table ({object_len} bytes)",
                    what()
                );
            }
            self.field(pos, vtable, index, pos + offset, field, depth)
                .with_context(|| format!("{}, field {index}", what()))?;
        }
        Ok(())
    }

    fn field(
        &mut self,
        table: usize,
        vtable: usize,
        index: usize,
        at: usize,
        field: Field,
        depth: usize,
    ) -> Result<()> {
        match field {
            Field::Inline(_) => Ok(()),
            Field::String => self.string(self.offset(at)?),
            Field::Table(schema) => self.table(self.offset(at)?, schema, depth + 1),
            Field::Vector(element) => self.vector(self.offset(at)?, element).map(drop),
            Field::Strings => {
                for element in self.vector(self.offset(at)?, 4)? {
                    self.string(self.offset(element)?)?;
                }
                Ok(())
            }
            Field::Tables(schema) => {
                for element in self.vector(self.offset(at)?, 4)? {
                    self.table(self.offset(element)?, schema, depth + 1)?;
                }
                Ok(())
            }
            Field::Union(members) => {
                let tag = match self.sibling(table, vtable, index)? {
                    Some(tag_at) => byte(self.buf, tag_at)?,
                    None => 0,
                };
                self.table(self.offset(at)?, members(tag).unwrap_or(&SCALARS), depth + 1)
            }
            Field::Unions(members) => {
                let values = self.vector(self.offset(at)?, 4)?;
                let tags = match self.sibling(table, vtable, index)? {
                    Some(tags_at) => self.vector(self.offset(tags_at)?, 1)?,
                    None => (0..0).step_by(1),
                };
                if tags.len() != values.len() {
                    bail!("{} union values but {} types", values.len(), tags.len());
                }
                for (value, tag) in values.into_iter().zip(tags) {
                    let schema = members(byte(self.buf, tag)?).unwrap_or(&SCALARS);
                    self.table(self.offset(value)?, schema, depth + 1)?;
                }
                Ok(())
            }
        }
    }

    /// Where the field before `index` (a union's type) is, if present.
    fn sibling(&self, table: usize, vtable: usize, index: usize) -> Result<Option<usize>> {
        let Some(before) = index.checked_sub(1) else {
            return Ok(None);
        };
        let offset = read_u16(self.buf, vtable + 4 + 2 * before)? as usize;
        Ok((offset != 0).then_some(table + offset))
    }

    /// The positions of a vector's elements, checked to lie inside the buffer.
    fn vector(&mut self, start: usize, element: usize) -> Result<StepBy<Range<usize>>> {
        let len = read_u32(self.buf, start)? as usize;
        let bytes = len.checked_mul(element).context("flatbuffer vector too long")?;
        slice(self.buf, start + 4, bytes)?;
        self.charge(len)?;
        Ok((start + 4..start + 4 + bytes).step_by(element))
    }

    /// A string: its bytes and the NUL after them inside the buffer.
    fn string(&mut self, start: usize) -> Result<()> {
        let len = read_u32(self.buf, start)? as usize;
        let with_nul = slice(
            self.buf,
            start + 4,
            len.checked_add(1).context("flatbuffer string too long")?,
        )?;
        self.charge(len)?;
        if with_nul[len] != 0 {
            bail!("flatbuffer string at {start} is not NUL-terminated");
        }
        Ok(())
    }
}

/// Where the offset stored at `pos` of `buf` points.
pub fn follow(buf: &[u8], pos: usize) -> Result<usize> {
    pos.checked_add(read_u32(buf, pos)? as usize)
        .context("flatbuffer offset overflows")
}

/// The vector at `start` of `buf`, of elements of `element` bytes: its
/// length, then its elements, as bytes of the buffer.
pub fn vector_bytes(buf: &[u8], start: usize, element: usize) -> Result<&[u8]> {
    let len = read_u32(buf, start)? as usize;
    let bytes = len
        .checked_mul(element)
        .and_then(|bytes| bytes.checked_add(4))
        .context("flatbuffer vector too long")?;
    slice(buf, start, bytes)
}

/// The string at `start` of `buf`: its length, its bytes and the NUL after them.
pub fn string_bytes(buf: &[u8], start: usize) -> Result<&[u8]> {
    let len = read_u32(buf, start)? as usize;
    slice(buf, start, len.checked_add(5).context("flatbuffer string too long")?)
}

fn slice(buf: &[u8], pos: usize, len: usize) -> Result<&[u8]> {
    match pos.checked_add(len) {
        Some(end) if end <= buf.len() => Ok(&buf[pos..end]),
        _ => bail!(
            "flatbuffer field at {pos} runs past the end of the graph ({} bytes)",
            buf.len()
        ),
    }
}

fn byte(buf: &[u8], pos: usize) -> Result<u8> {
    Ok(slice(buf, pos, 1)?[0])
}

fn read_u16(buf: &[u8], pos: usize) -> Result<u16> {
    Ok(u16::from_le_bytes(slice(buf, pos, 2)?.try_into().unwrap()))
}

fn read_u32(buf: &[u8], pos: usize) -> Result<u32> {
    Ok(u32::from_le_bytes(slice(buf, pos, 4)?.try_into().unwrap()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// root -> table { 0: u8 7, 1: absent, 2: f32 1.5, 3: string "hi" }
    fn sample() -> Vec<u8> {
        let mut buf = 16u32.to_le_bytes().to_vec(); // the root table is at 16
        for entry in [12u16, 16, 4, 0, 8, 12] {
            buf.extend(entry.to_le_bytes()); // vtable at 4: sizes, then field offsets
        }
        buf.extend(12i32.to_le_bytes()); // table at 16, its vtable 12 bytes back
        buf.extend([7u8, 0, 0, 0]);
        buf.extend(1.5f32.to_bits().to_le_bytes());
        buf.extend(4u32.to_le_bytes()); // at 28: the string is 4 bytes on, at 32
        buf.extend(2u32.to_le_bytes());
        buf.extend(b"hi\0\0");
        buf
    }

    #[test]
    fn reads_fields_and_defaults() {
        let buf = sample();
        let root = Table::root(&buf).unwrap();
        assert_eq!(root.u8(0).unwrap(), Some(7));
        assert_eq!(root.u8(1).unwrap(), None);
        assert_eq!(root.f32(2).unwrap(), Some(1.5));
        assert_eq!(root.string(3).unwrap(), Some("hi"));
        assert_eq!(root.string(9).unwrap(), None);
        assert!(root.tables(9).unwrap().is_empty());
    }

    #[test]
    fn refuses_offsets_outside_the_buffer() {
        let mut buf = sample();
        let len = buf.len();
        buf.truncate(len - 3);
        assert!(Table::root(&buf).unwrap().string(3).is_err());
        assert!(Table::root(&[0xff, 0xff, 0xff, 0x7f]).is_err());
        assert!(Table::root(&[]).is_err());
    }

    static SAMPLE: Schema = Schema {
        name: "Sample",
        fields: &[Field::Inline(1), Field::Inline(1), Field::Inline(4), Field::String],
        required: &[],
    };

    #[test]
    fn verifies_a_well_formed_buffer() {
        verify(&sample(), &SAMPLE).unwrap();
        // A field the schema does not know is checked to lie inside the table.
        verify(&sample(), &SCALARS).unwrap();
    }

    /// A field the engine reads without checking it is there (an Operator's
    /// type, in a mutant that crashed the engine) must be present.
    #[test]
    fn verification_refuses_a_missing_required_field() {
        static REQUIRING: Schema = Schema {
            name: "Sample",
            fields: SAMPLE.fields,
            required: &[1],
        };
        let err = format!("{:#}", verify(&sample(), &REQUIRING).unwrap_err());
        assert!(err.contains("required field 1 is missing"), "{err}");
    }

    #[test]
    fn verification_refuses_what_the_reader_would_trust() {
        type Edit = fn(&mut Vec<u8>);
        let cases: [(&str, Edit); 6] = [
            ("vtable", |buf| buf[16..20].copy_from_slice(&0i32.to_le_bytes())),
            ("vtable", |buf| buf[4..6].copy_from_slice(&3u16.to_le_bytes())),
            ("outside the table", |buf| {
                buf[12..14].copy_from_slice(&14u16.to_le_bytes())
            }),
            ("past the end", |buf| buf[28..32].copy_from_slice(&400u32.to_le_bytes())),
            ("runs past the end", |buf| {
                buf[32..36].copy_from_slice(&9u32.to_le_bytes())
            }),
            ("NUL", |buf| buf[38..40].copy_from_slice(b"xx")),
        ];
        for (expected, edit) in cases {
            let mut buf = sample();
            edit(&mut buf);
            let err = format!("{:#}", verify(&buf, &SAMPLE).expect_err(expected));
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }
}
