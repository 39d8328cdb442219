//! Objects of a verified flatbuffer copied into a new one by their schema
//! (`schema`): each table, vector and string reached from those asked for,
//! once, at the alignment it had, and nothing else. `cut` writes a graph's
//! part so, without the rest of the graph.

use std::collections::HashMap;

use anyhow::{bail, Context, Result};

use super::builder::{Builder, Offset};
use super::flatbuffer::{follow, string_bytes, vector_bytes, Field, Members, Schema, Table, SCALARS};

/// The alignment kept of a vector of bytes: a tensor's values, which the
/// engine may read in place, stay where they were modulo 16 (the most any
/// type needs).
const TENSOR_ALIGN: usize = 16;

/// A field of a table copied otherwise: pointed at a new object, or left out.
pub(super) type Replaced = (usize, Option<Offset>);

/// What an object was copied as, with where it lay: a table of a schema, a
/// string, a vector of elements of a size.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Table(*const Schema),
    String,
    Vector(usize),
}

pub(super) struct Copier<'a> {
    source: &'a [u8],
    /// Where the source's alignment is counted from: this many bytes before
    /// it (a graph's size prefix).
    prefix: usize,
    /// What was copied, by where it lay: an object several refer to stays one.
    copied: HashMap<(usize, Kind), Offset>,
}

impl<'a> Copier<'a> {
    pub(super) fn new(source: &'a [u8], prefix: usize) -> Copier<'a> {
        Copier {
            source,
            prefix,
            copied: HashMap::new(),
        }
    }

    /// A copy of the table at `at` of `schema` into `builder`, the fields
    /// `replaced` pointing elsewhere or left out, every other field as it
    /// is, the objects it refers to copied.
    pub(super) fn table(
        &mut self,
        builder: &mut Builder,
        at: usize,
        schema: &'static Schema,
        replaced: &[Replaced],
    ) -> Result<Offset> {
        let key = (at, Kind::Table(schema));
        if let Some(&copy) = self.copied.get(&key).filter(|_| replaced.is_empty()) {
            return Ok(copy);
        }
        let table = Table::at(self.source, at)?;
        let (vtable, bytes) = table.raw()?;
        let mut vtable = vtable.to_vec();
        for &(index, target) in replaced {
            if target.is_some() && table.field(index)?.is_none() {
                bail!("a {} table without field {index}, which the copy replaces", schema.name);
            }
        }
        let mut offsets = Vec::new();
        for index in 0..(vtable.len() - 4) / 2 {
            let Some(position) = table.field(index)? else {
                continue;
            };
            let within = position - at;
            let target = match replaced.iter().find(|(field, _)| *field == index) {
                Some(&(_, target)) => target,
                None => self.field(builder, table, schema, index)?,
            };
            match target {
                Some(_) if within + 4 > bytes.len() => {
                    bail!("a {} table's field {index} lies outside it", schema.name)
                }
                Some(target) => offsets.push((within, target)),
                None if replaced.iter().any(|(field, _)| *field == index) => {
                    vtable[4 + 2 * index..6 + 2 * index].fill(0);
                }
                None => {}
            }
        }
        let copy = builder.copied_table(&vtable, bytes, at + self.prefix, &offsets);
        if replaced.is_empty() {
            self.copied.insert(key, copy);
        }
        Ok(copy)
    }

    /// The copy of the object that field `index` of `table` (of `schema`)
    /// refers to; `None` for a field held in the table (a scalar, a struct).
    fn field(
        &mut self,
        builder: &mut Builder,
        table: Table,
        schema: &'static Schema,
        index: usize,
    ) -> Result<Option<Offset>> {
        let field = schema.fields.get(index).copied().unwrap_or(Field::Inline(1));
        if let Field::Inline(_) = field {
            return Ok(None);
        }
        let target = table.target(index)?.context("a field present refers to nothing")?;
        // A union's types are the field before it.
        let types = index.checked_sub(1);
        let copy = match field {
            Field::String => self.string(builder, target)?,
            Field::Table(schema) => self.table(builder, target, schema, &[])?,
            Field::Vector(element) => self.vector(builder, target, element)?,
            Field::Strings => self.offsets(builder, target, |copier, builder, at, _| copier.string(builder, at))?,
            Field::Tables(schema) => self.offsets(builder, target, |copier, builder, at, _| {
                copier.table(builder, at, schema, &[])
            })?,
            Field::Union(members) => {
                let kind = match types {
                    Some(types) => table.u8(types)?.unwrap_or(0),
                    None => 0,
                };
                self.table(builder, target, member(members, kind), &[])?
            }
            Field::Unions(members) => {
                let kinds = match types {
                    Some(types) => table.structs(types, 1)?.unwrap_or_default(),
                    None => &[],
                };
                self.offsets(builder, target, |copier, builder, at, element| {
                    let kind = *kinds.get(element).context("a vector of unions longer than its types")?;
                    copier.table(builder, at, member(members, kind), &[])
                })?
            }
            Field::Inline(_) => return Ok(None),
        };
        Ok(Some(copy))
    }

    fn string(&mut self, builder: &mut Builder, at: usize) -> Result<Offset> {
        let bytes = string_bytes(self.source, at)?;
        Ok(self.object(builder, at, Kind::String, bytes))
    }

    /// A vector of elements of `element` bytes, held in it.
    fn vector(&mut self, builder: &mut Builder, at: usize, element: usize) -> Result<Offset> {
        let bytes = vector_bytes(self.source, at, element)?;
        Ok(self.object(builder, at, Kind::Vector(element), bytes))
    }

    /// `bytes`, which lay at `at` as a `kind`, copied once, as aligned as
    /// it needs: a string's length and a vector's (`u32`), a vector's
    /// elements of 8 bytes, a tensor's values (bytes read in place).
    fn object(&mut self, builder: &mut Builder, at: usize, kind: Kind, bytes: &[u8]) -> Offset {
        let align = match kind {
            Kind::Vector(1) => TENSOR_ALIGN,
            Kind::Vector(element) if element.is_multiple_of(8) => 8,
            _ => 4,
        };
        let prefix = self.prefix;
        *self
            .copied
            .entry((at, kind))
            .or_insert_with(|| builder.copied(bytes, at + prefix, align, &[]))
    }

    /// A vector of offsets, each element's object copied by `copy` (given
    /// where it lies and its place in the vector).
    fn offsets(
        &mut self,
        builder: &mut Builder,
        at: usize,
        mut copy: impl FnMut(&mut Self, &mut Builder, usize, usize) -> Result<Offset>,
    ) -> Result<Offset> {
        let count = vector_bytes(self.source, at, 4)?.len() / 4 - 1;
        let mut targets = Vec::with_capacity(count);
        for element in 0..count {
            let target = follow(self.source, at + 4 + 4 * element)?;
            targets.push(copy(self, builder, target, element)?);
        }
        Ok(builder.offsets(&targets))
    }
}

/// The schema of a union's member of type `kind`: one of scalars only where
/// the union names none.
fn member(members: Members, kind: u8) -> &'static Schema {
    members(kind).unwrap_or(&SCALARS)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::flatbuffer::verify;
    use crate::model::schema::MODEL_V2;
    use crate::model::structure::{Operator, Param, Structure, Tensor, Var};
    use crate::model::{GraphFormat, ModelFile, FBS_V2_IDENTIFIER};

    /// A graph copied whole from its root reads as it did: every operator,
    /// var, parameter and constant, at the alignment it had.
    #[test]
    fn a_graph_copied_whole_reads_as_it_was() {
        for name in ["conv_float.mge", "reduce_nan.mge", "two_inputs.mge", "deconv.mge"] {
            let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
            let model = ModelFile::read(&file, None).unwrap();
            let flatbuffer = &model.graph()[4..];
            let original = Structure::read(GraphFormat::FbsV2, flatbuffer, &[]).unwrap();
            let mut builder = Builder::new();
            let root = Copier::new(flatbuffer, 4)
                .table(&mut builder, original.root.position(), &MODEL_V2, &[])
                .unwrap();
            let copy = builder.finish(root, FBS_V2_IDENTIFIER, true);
            verify(&copy[4..], &MODEL_V2).unwrap();
            let copied = Structure::read(GraphFormat::FbsV2, &copy[4..], &[]).unwrap();
            assert_eq!(copied.dumped, original.dumped, "{name}");
            assert_eq!(copied.outputs, original.outputs, "{name}");
            let vars = |graph: &Structure| -> Vec<String> {
                let described = |var: &Var| format!("{:?} {:?} {:?}", var.name, var.shape, var.dtype);
                graph.vars.iter().map(described).collect()
            };
            assert_eq!(vars(&copied), vars(&original), "{name}");
            for (a, b) in copied.operators.iter().zip(&original.operators) {
                assert_eq!(
                    (&a.op_type, a.name, &a.inputs, &a.outputs),
                    (&b.op_type, b.name, &b.inputs, &b.outputs)
                );
                // Each parameter's type and the bytes of its fields.
                let params = |operator: &Operator| -> Vec<String> {
                    let described = |param: &Param| format!("{} {:?}", param.tag, param.table.stored_fields().unwrap());
                    operator.params.iter().map(described).collect()
                };
                assert_eq!(params(a), params(b), "{name}: {}", a.op_type);
                for (x, y) in a.tensors.iter().zip(&b.tensors) {
                    assert_eq!((x.name, &x.shape, x.dtype, x.data), (y.name, &y.shape, y.dtype, y.data));
                    // Read in place: the values stay where they were modulo 16.
                    let at = |tensor: &Tensor, buffer: &[u8]| {
                        (tensor.data.as_ptr() as usize - buffer.as_ptr() as usize) % TENSOR_ALIGN
                    };
                    assert_eq!(at(x, &copy[4..]), at(y, flatbuffer), "{name}");
                }
            }
            assert_eq!(copied.operators.len(), original.operators.len());
        }
    }
}
