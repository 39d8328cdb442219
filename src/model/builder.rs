//! Just enough of a FlatBuffers builder to write graphs: tables, vectors and
//! strings, built back to front as FlatBuffers builders do, so that every
//! offset points forward. It can also build in front of an existing buffer,
//! whose objects the new ones may then refer to: a graph is edited by
//! writing a new root before it, and everything not changed stays as it was.
//! Or it copies objects of another buffer as they were (`copied`), at the
//! alignment they had there: a graph's part written alone (`copy`).

use std::collections::HashMap;

/// A written object, or one of the existing buffer, by its distance from the
/// end of the final buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offset(usize);

/// A table field's value.
#[derive(Clone, Copy, Debug)]
pub enum Value {
    Bool(bool),
    U8(u8),
    U32(u32),
    F32(f32),
    U64(u64),
    Offset(Offset),
}

impl Value {
    fn size(self) -> usize {
        match self {
            Value::Bool(_) | Value::U8(_) => 1,
            Value::U32(_) | Value::F32(_) | Value::Offset(_) => 4,
            Value::U64(_) => 8,
        }
    }
}

/// The largest alignment of anything written (a `u64`, or a tensor's data).
const MAX_ALIGN: usize = 16;

pub struct Builder {
    /// The buffer's tail, reversed: byte i is at distance i + 1 from the end.
    reversed: Vec<u8>,
    /// Where alignment is counted from: the final buffer's start must fall on
    /// a multiple of `MAX_ALIGN` from the end, shifted by this.
    shift: usize,
    /// The length of the existing buffer the builder writes in front of.
    existing: usize,
    /// The vtables of copied tables, each written once.
    vtables: HashMap<Vec<u8>, Offset>,
}

impl Builder {
    /// A builder for a new buffer.
    pub fn new() -> Builder {
        Builder {
            reversed: Vec::new(),
            shift: 0,
            existing: 0,
            vtables: HashMap::new(),
        }
    }

    /// A builder that writes in front of `buffer`, keeping every object of it
    /// where its alignment was: `buffer` was aligned from a start `prefix`
    /// bytes before it (FBS v2 graphs count their size prefix).
    pub fn before(buffer: &[u8], prefix: usize) -> Builder {
        Builder {
            reversed: buffer.iter().rev().copied().collect(),
            shift: (buffer.len() + prefix) % MAX_ALIGN,
            existing: buffer.len(),
            vtables: HashMap::new(),
        }
    }

    /// An object of the existing buffer at `position` from its start.
    pub fn existing(&self, position: usize) -> Offset {
        Offset(self.existing - position)
    }

    fn len(&self) -> usize {
        self.reversed.len()
    }

    /// Pads so that `len` more bytes start on an `align` boundary of the final buffer.
    fn align(&mut self, len: usize, align: usize) {
        self.align_to(len, align, 0);
    }

    /// Pads so that `len` more bytes start at `residue` modulo `align` (a
    /// divisor of `MAX_ALIGN`) from the final buffer's start.
    fn align_to(&mut self, len: usize, align: usize, residue: usize) {
        let end = self.len() + len + residue + MAX_ALIGN - self.shift;
        let padding = (align - end % align) % align;
        self.reversed.extend(std::iter::repeat_n(0, padding));
    }

    /// Places `bytes` (in order) in front of what was written; returns where they start.
    fn place(&mut self, bytes: &[u8]) -> Offset {
        self.reversed.extend(bytes.iter().rev());
        Offset(self.len())
    }

    /// The offset from a field at `field` to `target`, both as distances from the end.
    fn relative(field: usize, target: Offset) -> u32 {
        u32::try_from(field - target.0).expect("a graph smaller than 4 GB")
    }

    pub fn string(&mut self, text: &str) -> Offset {
        let len = 4 + text.len() + 1;
        self.align(len, 4);
        let mut bytes = (text.len() as u32).to_le_bytes().to_vec();
        bytes.extend(text.as_bytes());
        bytes.push(0);
        self.place(&bytes)
    }

    /// A vector of bytes, aligned for data read in place (a tensor's values).
    pub fn bytes(&mut self, data: &[u8]) -> Offset {
        self.align(data.len(), MAX_ALIGN);
        self.place(data);
        self.align(4, 4);
        self.place(&(data.len() as u32).to_le_bytes())
    }

    pub fn u32s(&mut self, values: &[u32]) -> Offset {
        self.align(4 + 4 * values.len(), 4);
        let mut bytes = (values.len() as u32).to_le_bytes().to_vec();
        values.iter().for_each(|value| bytes.extend(value.to_le_bytes()));
        self.place(&bytes)
    }

    pub fn offsets(&mut self, targets: &[Offset]) -> Offset {
        let len = 4 + 4 * targets.len();
        self.align(len, 4);
        // The vector's start will be at `len() + len` from the end.
        let start = self.len() + len;
        let mut bytes = (targets.len() as u32).to_le_bytes().to_vec();
        for (index, target) in targets.iter().enumerate() {
            bytes.extend(Self::relative(start - 4 - 4 * index, *target).to_le_bytes());
        }
        self.place(&bytes)
    }

    /// A table of `(field index, value)`, its vtable written just before it.
    pub fn table(&mut self, fields: &[(usize, Value)]) -> Offset {
        // The table: its soffset, then the fields, largest first, each aligned.
        let mut sorted: Vec<(usize, Value)> = fields.to_vec();
        sorted.sort_by_key(|(_, value)| std::cmp::Reverse(value.size()));
        let mut layout = Vec::new();
        let mut size: usize = 4;
        for (index, value) in &sorted {
            size = size.next_multiple_of(value.size());
            layout.push((*index, *value, size));
            size += value.size();
        }
        let align = sorted.first().map_or(4, |(_, value)| value.size().max(4));
        let size = size.next_multiple_of(align);
        self.align(size, align);
        let start = self.len() + size;
        let mut table = vec![0u8; size];
        for &(_, value, at) in &layout {
            let bytes = match value {
                Value::Bool(on) => vec![u8::from(on)],
                Value::U8(byte) => vec![byte],
                Value::U32(number) => number.to_le_bytes().to_vec(),
                Value::F32(number) => number.to_le_bytes().to_vec(),
                Value::U64(number) => number.to_le_bytes().to_vec(),
                Value::Offset(target) => Self::relative(start - at, target).to_le_bytes().to_vec(),
            };
            table[at..at + bytes.len()].copy_from_slice(&bytes);
        }
        // The vtable goes right before the table: the table's soffset is its length.
        let slots = fields.iter().map(|(index, _)| index + 1).max().unwrap_or(0);
        let mut vtable = vec![0u16; 2 + slots];
        vtable[0] = (4 + 2 * slots) as u16;
        vtable[1] = size as u16;
        for &(index, _, at) in &layout {
            vtable[2 + index] = at as u16;
        }
        let vtable_len = 2 * vtable.len();
        table[..4].copy_from_slice(&(vtable_len as i32).to_le_bytes());
        let table_offset = self.place(&table);
        let vtable_bytes: Vec<u8> = vtable.iter().flat_map(|entry| entry.to_le_bytes()).collect();
        // The vtable needs 2-byte alignment, which ending at the table's 4-aligned start gives.
        self.place(&vtable_bytes);
        table_offset
    }

    /// `bytes` of another buffer, where they lay at `position` from its
    /// start (aligned as this buffer's is), placed at that position modulo
    /// `align`, the offsets at `offsets` (positions in `bytes`, each with
    /// its 4 bytes inside them) pointing to objects of this buffer.
    pub fn copied(&mut self, bytes: &[u8], position: usize, align: usize, offsets: &[(usize, Offset)]) -> Offset {
        self.align_to(bytes.len(), align, position % align);
        self.place_pointing(bytes.to_vec(), offsets)
    }

    /// A table of another buffer, as `copied` places it (`table` its bytes,
    /// the first 4 where its vtable is), at its position modulo 8 (its
    /// largest scalar's alignment at most), with the vtable `vtable`: one
    /// written already where a table had the same, else just before it.
    pub fn copied_table(
        &mut self,
        vtable: &[u8],
        table: &[u8],
        position: usize,
        offsets: &[(usize, Offset)],
    ) -> Offset {
        const TABLE_ALIGN: usize = 8;
        self.align_to(table.len(), TABLE_ALIGN, position % TABLE_ALIGN);
        let start = self.len() + table.len();
        let mut table = table.to_vec();
        // Where the vtable is, from the table's start: before it (positive), or after it.
        let soffset = match self.vtables.get(vtable) {
            Some(written) => i32::try_from(written.0 as i64 - start as i64).expect("a graph smaller than 2 GB"),
            None => vtable.len() as i32,
        };
        table[..4].copy_from_slice(&soffset.to_le_bytes());
        let copy = self.place_pointing(table, offsets);
        if !self.vtables.contains_key(vtable) {
            // A vtable's length is even, and the table starts 4-aligned as it did: the vtable is 2-aligned.
            let written = self.place(vtable);
            self.vtables.insert(vtable.to_vec(), written);
        }
        copy
    }

    /// Places `bytes`, aligned already, the offsets at `offsets` pointing to their targets.
    fn place_pointing(&mut self, mut bytes: Vec<u8>, offsets: &[(usize, Offset)]) -> Offset {
        let start = self.len() + bytes.len();
        for &(at, target) in offsets {
            bytes[at..at + 4].copy_from_slice(&Self::relative(start - at, target).to_le_bytes());
        }
        self.place(&bytes)
    }

    /// The finished buffer: the root offset, the file identifier, the objects;
    /// with `size_prefix`, its length first (FBS v2 graphs).
    pub fn finish(mut self, root: Offset, identifier: &[u8; 4], size_prefix: bool) -> Vec<u8> {
        let prefix = if size_prefix { 4 } else { 0 };
        // Root offset and identifier: 8 bytes, then the buffer start on a boundary.
        self.align(8 + prefix, MAX_ALIGN);
        self.place(identifier);
        let root_field = self.len() + 4;
        self.place(&Self::relative(root_field, root).to_le_bytes());
        if size_prefix {
            let len = self.len() as u32;
            self.place(&len.to_le_bytes());
        }
        self.reversed.reverse();
        self.reversed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::flatbuffer::Table;

    #[test]
    fn writes_what_the_reader_reads() {
        let mut builder = Builder::new();
        let name = builder.string("conv");
        let ids = builder.u32s(&[3, 5]);
        let inner = builder.table(&[(0, Value::U32(7))]);
        let list = builder.offsets(&[inner, inner]);
        let root = builder.table(&[
            (0, Value::Offset(name)),
            (1, Value::U64(1 << 40)),
            (2, Value::Offset(ids)),
            (3, Value::Offset(list)),
            (5, Value::U8(9)),
        ]);
        let buffer = builder.finish(root, b"mgv2", true);
        assert_eq!(
            u32::from_le_bytes(buffer[..4].try_into().unwrap()) as usize,
            buffer.len() - 4
        );
        let flatbuffer = &buffer[4..];
        assert_eq!(&flatbuffer[4..8], b"mgv2");
        let root = Table::root(flatbuffer).unwrap();
        assert_eq!(root.string(0).unwrap(), Some("conv"));
        assert_eq!(root.u32s(2).unwrap(), [3, 5]);
        assert_eq!(root.u8(5).unwrap(), Some(9));
        assert_eq!(root.u8(4).unwrap(), None);
        let tables = root.tables(3).unwrap();
        assert_eq!(tables[1].u32(0).unwrap(), Some(7));
    }

    #[test]
    fn builds_in_front_of_an_existing_buffer() {
        let mut first = Builder::new();
        let name = first.string("kept");
        let root = first.table(&[(0, Value::Offset(name))]);
        let old = first.finish(root, b"mgv2", false);
        let old_root = u32::from_le_bytes(old[..4].try_into().unwrap()) as usize;
        let mut builder = Builder::before(&old, 0);
        let table = builder.existing(old_root);
        let list = builder.offsets(&[table]);
        let root = builder.table(&[(2, Value::Offset(list))]);
        let buffer = builder.finish(root, b"mgv2", false);
        assert_eq!((buffer.len() - old.len()) % MAX_ALIGN, 0);
        let tables = Table::root(&buffer).unwrap().tables(2).unwrap();
        assert_eq!(tables[0].string(0).unwrap(), Some("kept"));
    }
}
