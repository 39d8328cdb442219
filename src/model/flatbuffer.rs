//! Just enough of the FlatBuffers wire format to read tables, vectors and
//! strings out of a graph, with every offset checked against the buffer.

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

    fn at(buf: &'a [u8], pos: usize) -> Result<Table<'a>> {
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
        pos.checked_add(read_u32(self.buf, pos)? as usize)
            .context("flatbuffer offset overflows")
    }

    pub fn u8(&self, index: usize) -> Result<Option<u8>> {
        self.field(index)?.map(|pos| byte(self.buf, pos)).transpose()
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
}
