//! Model files: plain graphs (FBS v1 or v2), `mgbtest0` testcase containers,
//! split into graphs with every length checked against the file, and the
//! wrappings MegEngine Lite loads: packed models (`pack`), encrypted ones
//! (`cipher`).

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::ops::Range;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::input_files;
use crate::memory::{self, OutOfMemory};
use crate::text;

mod assertions;
mod builder;
mod cipher;
mod copy;
mod cost;
mod cut;
pub mod diff;
mod dtypes;
mod edit;
mod flatbuffer;
mod graph;
mod names;
pub mod pack;
mod schema;
mod structure;
mod type_names;
mod unassert;

pub use assertions::{checked_output, Assertion, DEFAULT_MAXERR};
pub use cipher::{Method, NO_ENCRYPTION};
pub use cost::GraphCost;
pub use cut::{CutGraph, CutPoint};
pub use dtypes::engine_dtype_name;
pub use edit::TensorSpec;
pub use names::EngineNames;
use pack::{Pack, PACK_TAG};
pub use structure::{Quantization, Structure};

/// How MegEngine names the input holding an output's expected value.
pub const EXPECTATION_SUFFIX: &str = ":expect";

const CONTAINER_MAGIC: &[u8; 8] = b"mgbtest0";
const FBS_V2_IDENTIFIER: &[u8; 4] = b"mgv2";
/// The legacy MegBrain format, which Lite 1.13 cannot load.
const LEGACY_MAGIC: &[u8; 7] = b"mgb0001";
/// `MGB_MAGIC` (with feature bits) and `MAGIC_V0` of the FBS v1 format.
const FBS_V1_MAGIC: u32 = 0x4342_474D;
const FBS_V1_MAGIC_V0: u32 = 0x5342_474D;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    FbsV1,
    FbsV2,
}

impl fmt::Display for GraphFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GraphFormat::FbsV1 => "fbs-v1",
            GraphFormat::FbsV2 => "fbs-v2",
        })
    }
}

/// A model file read into memory, with the byte ranges of its graphs.
pub struct ModelFile {
    bytes: Vec<u8>,
    pub wrapping: Wrapping,
    /// The graphs, unless they are encrypted.
    graphs: Option<Graphs>,
}

/// How a file holds its graph.
pub enum Wrapping {
    /// As MegEngine dumps it: a graph or a testcase container.
    Bare,
    /// In a Lite pack, which names its own methods.
    Packed(Pack),
    /// Encrypted with this method, which the file does not name.
    Encrypted(Method),
}

/// A model graph's bytes, owned, to read its `Structure` from.
pub struct ModelGraph {
    pub format: GraphFormat,
    /// How the file holds it (`ModelFile::format`, with the format of a
    /// graph decrypted: `AES_default-encrypted fbs-v2`).
    pub file_format: String,
    /// Whether the file is a testcase container.
    pub container: bool,
    /// The file's bytes, or what its model decrypted to, and where in them
    /// the graph's flatbuffer and the tensor values of an FBS v1 graph lie.
    bytes: Vec<u8>,
    flatbuffer: Range<usize>,
    tensors: Range<usize>,
}

impl ModelGraph {
    pub fn structure(&self) -> Result<Structure<'_>> {
        Structure::read(
            self.format,
            &self.bytes[self.flatbuffer.clone()],
            &self.bytes[self.tensors.clone()],
        )
    }
}

/// Where the graphs lie in the file.
struct Graphs {
    format: GraphFormat,
    graph: Range<usize>,
    /// The flatbuffer inside the model graph.
    graph_flatbuffer: Range<usize>,
    /// The model graph's tensor values before its flatbuffer (FBS v1; empty for FBS v2).
    graph_tensors: Range<usize>,
    testcases: Option<Vec<Range<usize>>>,
}

/// One operator of a model graph, by the names of its vars.
#[derive(Clone, Debug)]
pub struct GraphOperator {
    pub name: Option<String>,
    pub op_type: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

impl ModelFile {
    /// Reads a model file only as far as its framing says: a header that does
    /// not fit is refused before the rest of the file is read. `encrypted`
    /// names the method of a bare encrypted model, whose file does not.
    pub fn read(path: &Path, encrypted: Option<Method>) -> Result<ModelFile> {
        let (file, len) = input_files::open(path, &input_files::MODEL)?;
        ModelFile::from_reader(file, Some(len), encrypted).map_err(|err| match OutOfMemory::caused(&err) {
            true => err.context(format!("cannot read {}", path.display())),
            false => err.context(format!("{} is not a usable MegEngine model", path.display())),
        })
    }

    /// A model file in memory, checked as `read` checks one on disk.
    pub fn parse(bytes: Vec<u8>) -> Result<ModelFile> {
        let len = bytes.len() as u64;
        ModelFile::from_reader(std::io::Cursor::new(bytes), Some(len), None)
    }

    /// `len`: the length of the source, where known.
    fn from_reader(source: impl Read, len: Option<u64>, encrypted: Option<Method>) -> Result<ModelFile> {
        let mut reader = Reader {
            source,
            len: len.and_then(|len| usize::try_from(len).ok()),
            bytes: Vec::new(),
            pos: 0,
        };
        if reader.peek(PACK_TAG.len())? == PACK_TAG {
            if let Some(method) = encrypted {
                bail!("--model-decryption {method} names the method of a bare encrypted model; this is a Lite packed model, whose header names its own");
            }
            return ModelFile::packed(reader.rest()?);
        }
        if let Some(method) = encrypted {
            let bytes = reader.rest()?;
            method
                .check_framing(&bytes)
                .with_context(|| format!("--model-decryption {method}"))?;
            return Ok(ModelFile {
                bytes,
                wrapping: Wrapping::Encrypted(method),
                graphs: None,
            });
        }
        let graphs = match reader.graphs(0) {
            Ok(graphs) => graphs,
            Err(err) if reader.pos == 0 => return Err(what_the_file_is(reader.peek(64)?, err)),
            Err(err) => return Err(err),
        };
        Ok(ModelFile {
            bytes: reader.bytes,
            wrapping: Wrapping::Bare,
            graphs: Some(graphs),
        })
    }

    /// A Lite pack: verified, and its graph too where it is not encrypted.
    fn packed(bytes: Vec<u8>) -> Result<ModelFile> {
        let pack = Pack::read(&bytes)?;
        let header = &pack.header;
        for (method, data, what) in [
            (&header.model_decryption, Some(&pack.data), "model data"),
            (&header.info_decryption, pack.info.as_ref(), "info"),
        ] {
            if let (Some(method), Some(data)) = (Method::from_name(method), data) {
                method
                    .check_framing(&bytes[data.clone()])
                    .with_context(|| format!("the pack's {what}"))?;
            }
        }
        let graphs = match header.model_decryption.as_str() {
            NO_ENCRYPTION => {
                let data = &bytes[pack.data.clone()];
                let mut reader = Reader {
                    source: data,
                    len: Some(data.len()),
                    bytes: Vec::new(),
                    pos: 0,
                };
                let graphs = reader.graphs(0).context("the pack's model data")?;
                if graphs.testcases.is_some() {
                    bail!("it packs a testcase container, which MegEngine Lite cannot load (it hands the packed data to its graph loader, which knows no container): pack the plain model, and check the container unpacked");
                }
                Some(graphs.shifted(pack.data.start))
            }
            _ => None,
        };
        Ok(ModelFile {
            bytes,
            wrapping: Wrapping::Packed(pack),
            graphs,
        })
    }

    /// How the file holds its graph, for reports: `fbs-v2`, `packed fbs-v2`,
    /// `packed, AES_default-encrypted`.
    pub fn format(&self) -> String {
        let graph = |graphs: &Option<Graphs>| graphs.as_ref().map(|graphs| graphs.format.to_string());
        match &self.wrapping {
            Wrapping::Bare => graph(&self.graphs).unwrap_or_default(),
            Wrapping::Packed(pack) => match graph(&self.graphs) {
                Some(format) => format!("packed {format}"),
                None => format!("packed, {}-encrypted", pack.header.model_decryption),
            },
            Wrapping::Encrypted(method) => format!("{method}-encrypted"),
        }
    }

    #[cfg(test)]
    pub fn graph_format(&self) -> GraphFormat {
        self.graphs.as_ref().expect("a graph that is not encrypted").format
    }

    #[cfg(test)]
    pub fn graph_flatbuffer(&self) -> &[u8] {
        &self.bytes[self
            .graphs
            .as_ref()
            .expect("a graph that is not encrypted")
            .graph_flatbuffer
            .clone()]
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether the graph was verified (it is not encrypted).
    pub fn is_verified(&self) -> bool {
        self.graphs.is_some()
    }

    /// The methods the engine decrypts the file's parts with.
    pub fn decryption_methods(&self) -> Vec<&str> {
        match &self.wrapping {
            Wrapping::Bare => Vec::new(),
            Wrapping::Encrypted(method) => vec![method.name()],
            Wrapping::Packed(pack) => {
                let header = &pack.header;
                let mut methods = vec![header.model_decryption.as_str()];
                if pack.info.is_some() && header.info_decryption != header.model_decryption {
                    methods.push(header.info_decryption.as_str());
                }
                methods.retain(|method| *method != NO_ENCRYPTION);
                methods
            }
        }
    }
}

impl Graphs {
    /// The same graphs, found `by` bytes further into the file.
    fn shifted(self, by: usize) -> Graphs {
        let shift = |range: Range<usize>| range.start + by..range.end + by;
        Graphs {
            format: self.format,
            graph: shift(self.graph),
            graph_flatbuffer: shift(self.graph_flatbuffer),
            graph_tensors: shift(self.graph_tensors),
            testcases: self
                .testcases
                .map(|testcases| testcases.into_iter().map(shift).collect()),
        }
    }
}

impl<R: Read> Reader<R> {
    /// The graphs of a plain model or a container, read from the start; up
    /// to `padding` zero bytes may follow them (a decrypted model's).
    fn graphs(&mut self, padding: usize) -> Result<Graphs> {
        let reader = self;
        let testcase_count = if reader.peek(CONTAINER_MAGIC.len())? == CONTAINER_MAGIC {
            reader.take(CONTAINER_MAGIC.len(), "the container header")?;
            Some(reader.u32("the testcase count")?)
        } else {
            None
        };
        let (format, graph, graph_flatbuffer, graph_tensors) = reader.graph("the model graph")?;
        let testcases = match testcase_count {
            None => None,
            Some(count) => Some(
                (0..count)
                    .map(|index| {
                        if reader.peek(1)?.is_empty() {
                            bail!("the container's header counts {count} testcases but the file holds {index}");
                        }
                        Ok(reader.graph(&format!("testcase {index}"))?.1)
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        let after = reader.peek(padding + 1)?;
        if after.len() > padding || after.iter().any(|byte| *byte != 0) {
            // Whatever follows the last graph is no part of the model: a lowered
            // testcase count, or another file appended. Running what the count
            // says would pass a check on a subset of its testcases.
            let what = match testcase_count {
                Some(count) => format!("after the {count} testcases the container's count announces"),
                None => "after the model graph".to_string(),
            };
            bail!("unexpected data at offset {} {what}", reader.pos);
        }
        Ok(Graphs {
            format,
            graph,
            graph_flatbuffer,
            graph_tensors,
            testcases,
        })
    }
}

impl ModelFile {
    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_container(&self) -> bool {
        self.graphs.as_ref().is_some_and(|graphs| graphs.testcases.is_some())
    }

    /// What the engine loads as the model: the graph as found in a bare
    /// file, or the whole file, which the engine unwraps itself.
    pub fn graph(&self) -> &[u8] {
        match (&self.wrapping, &self.graphs) {
            (Wrapping::Bare, Some(graphs)) => &self.bytes[graphs.graph.clone()],
            _ => &self.bytes,
        }
    }

    /// The graphs of a container (only a bare file holds one).
    fn container(&self) -> Option<&Graphs> {
        self.graphs.as_ref().filter(|graphs| graphs.testcases.is_some())
    }

    /// The AssertEqual operators of the model graph: what a testcase checks.
    pub fn assertions(&self) -> Result<Vec<Assertion>> {
        let Some(graphs) = self.container() else {
            return Ok(Vec::new());
        };
        assertions::read(graphs.format, &self.bytes[graphs.graph_flatbuffer.clone()])
            .context("cannot read the model's AssertEqual operators")
    }

    /// The model graph with, for a container, its outputs taken from before its
    /// AssertEqual operators (see `unassert`), and the names those outputs had.
    pub fn graph_with_real_outputs(&self) -> Result<(Vec<u8>, Vec<Option<String>>)> {
        let mut graph = self.graph().to_vec();
        let Some(graphs) = self.container() else {
            return Ok((graph, Vec::new()));
        };
        let flatbuffer =
            graphs.graph_flatbuffer.start - graphs.graph.start..graphs.graph_flatbuffer.end - graphs.graph.start;
        let names = unassert::rewrite(graphs.format, &mut graph[flatbuffer])
            .context("cannot take the model's outputs from before its AssertEqual operators")?;
        Ok((graph, names))
    }

    /// `graph` (this model's, as `graph` or `graph_with_real_outputs` gives
    /// it) with the names the engine cannot write into its JSON under
    /// placeholders, and those names (see `names`).
    pub fn with_writable_names(&self, graph: Vec<u8>) -> Result<(Vec<u8>, EngineNames)> {
        // An encrypted graph's names are the engine's to see.
        let Some(graphs) = &self.graphs else {
            return Ok((graph, EngineNames::none()));
        };
        let flatbuffer_start = graphs.graph_flatbuffer.start - graphs.graph.start;
        if matches!(self.wrapping, Wrapping::Bare) {
            return names::rename(graphs.format, &graph, flatbuffer_start);
        }
        let (_, names) = names::rename(graphs.format, &self.bytes[graphs.graph.clone()], flatbuffer_start)?;
        if !names.is_empty() {
            bail!(
                "the model names vars or operators with non-ASCII or control characters, which the engine's profiler cannot write, \
                 and it is {}: give the plain model, whose names mge replaces for the engine",
                self.format()
            );
        }
        Ok((graph, names))
    }

    /// A graph the engine wrote of a network that knew `names` under
    /// placeholders (a layout-transformed model), with the model's names back.
    pub fn restore_names(bytes: Vec<u8>, names: &EngineNames) -> Result<Vec<u8>> {
        if names.is_empty() {
            return Ok(bytes);
        }
        let model = ModelFile::parse(bytes)?;
        match (&model.wrapping, &model.graphs) {
            (Wrapping::Bare, Some(graphs)) if graphs.testcases.is_none() => {
                names::restore(graphs.format, &model.bytes, graphs.graph_flatbuffer.start, names)
            }
            _ => bail!("the engine wrote no plain graph"),
        }
    }

    /// Fails unless the model graph can be edited (an FBS v2 graph, as
    /// MegEngine dumps it), which `what` needs.
    pub fn check_editable(&self, what: &str) -> Result<()> {
        self.editable_flatbuffer(what).map(drop)
    }

    /// The model graph's flatbuffer, refused unless `check_editable` passes.
    fn editable_flatbuffer(&self, what: &str) -> Result<&[u8]> {
        if !matches!(self.wrapping, Wrapping::Bare) {
            bail!(
                "{what} needs the model as MegEngine dumps it, and this one is {}: give the plain model",
                self.format()
            );
        }
        self.v2_flatbuffer(what)
    }

    /// The model graph's flatbuffer, refused unless FBS v2 (what `what` needs).
    fn v2_flatbuffer(&self, what: &str) -> Result<&[u8]> {
        let Some(graphs) = &self.graphs else {
            bail!("{what} reads the model's graph, and this one is {}", self.format());
        };
        if graphs.format != GraphFormat::FbsV2 {
            bail!(
                "{what} needs an FBS v2 graph, and this one is FBS v1 (an older MegEngine, or dump_format=\"FBS\"): \
                 dump it again with MegEngine 1.13's trace.dump"
            );
        }
        Ok(&self.bytes[graphs.graph_flatbuffer.clone()])
    }

    /// The model graph's quantized vars by name, each with its dtype's scale:
    /// what the engine's io dump leaves out (its files keep the dtype, not
    /// the scale). Empty for an encrypted graph, which is not read here.
    pub fn quantized_vars(&self) -> Result<HashMap<String, Quantization>> {
        let Some(graphs) = &self.graphs else {
            return Ok(HashMap::new());
        };
        let structure = Structure::read(
            graphs.format,
            &self.bytes[graphs.graph_flatbuffer.clone()],
            &self.bytes[graphs.graph_tensors.clone()],
        )?;
        Ok(structure
            .vars
            .iter()
            .zip(structure.quantizations())
            .filter_map(|(var, quantization)| Some((var.name?.to_string(), quantization?)))
            .collect())
    }

    /// The model graph's operators in the graph's order (every operator after
    /// those it reads from), each with the names of the vars it reads and
    /// writes. Empty for an encrypted graph, which is not read here.
    pub fn operators(&self) -> Result<Vec<GraphOperator>> {
        let Some(graphs) = &self.graphs else {
            return Ok(Vec::new());
        };
        let structure = Structure::read(
            graphs.format,
            &self.bytes[graphs.graph_flatbuffer.clone()],
            &self.bytes[graphs.graph_tensors.clone()],
        )?;
        let var_name = |id: &u32| {
            let name = structure.vars.get(*id as usize).and_then(|var| var.name);
            name.map_or_else(|| format!("var {id}"), str::to_string)
        };
        Ok(structure
            .operators
            .iter()
            .map(|operator| GraphOperator {
                name: operator.name.map(str::to_string),
                op_type: operator.op_type.clone(),
                inputs: operator.inputs.iter().map(var_name).collect(),
                outputs: operator.outputs.iter().map(var_name).collect(),
            })
            .collect())
    }

    /// The model's cost without running it (see `cost`).
    pub fn cost(&self) -> Result<GraphCost> {
        let flatbuffer = self.v2_flatbuffer("--ops")?;
        Ok(cost::graph_cost(&Structure::read(GraphFormat::FbsV2, flatbuffer, &[])?))
    }

    /// The model graph as the engine runs it, to read its structure: a
    /// container's outputs are the vars its assertions check; an encrypted
    /// graph decrypted as the engine decrypts it, with `key` (`--model-key`)
    /// or else its method's built-in key. The file's bytes become the
    /// graph's, decrypted in place: a large model is not copied.
    pub fn model_graph(self, key: Option<&[u8]>) -> Result<ModelGraph> {
        let file_format = self.format();
        let (mut bytes, graphs, file_format) = match self.graphs {
            Some(graphs) => (self.bytes, graphs, file_format),
            None => {
                let (plain, graphs) = ModelFile::decrypted(self.bytes, &self.wrapping, key)?;
                let format = format!("{file_format} {}", graphs.format);
                (plain, graphs, format)
            }
        };
        if graphs.testcases.is_some() {
            unassert::rewrite(graphs.format, &mut bytes[graphs.graph_flatbuffer.clone()])
                .context("cannot take the model's outputs from before its AssertEqual operators")?;
        }
        Ok(ModelGraph {
            format: graphs.format,
            file_format,
            container: graphs.testcases.is_some(),
            bytes,
            flatbuffer: graphs.graph_flatbuffer,
            tensors: graphs.graph_tensors,
        })
    }

    /// Whether the encrypted model decrypts with `key` (else its method's
    /// built-in key) to a graph that verifies, as `model_graph` decrypts it:
    /// a copy is decrypted, the file kept for the engine.
    pub fn decrypts(&self, key: Option<&[u8]>) -> Result<()> {
        let mut copy = memory::with_capacity(self.bytes.len(), "the model decrypted")?;
        copy.extend_from_slice(&self.bytes);
        ModelFile::decrypted(copy, &self.wrapping, key).map(drop)
    }

    /// The encrypted model (a bare file, or a pack's model data) decrypted
    /// with `key`, else its method's built-in key, and its graph, checked as
    /// any graph is: the model that was encrypted, to the byte. A wrong key
    /// is one line (the method's hash, else a graph that does not verify).
    /// `bytes`, the file's, become the plain model's.
    fn decrypted(mut bytes: Vec<u8>, wrapping: &Wrapping, key: Option<&[u8]>) -> Result<(Vec<u8>, Graphs)> {
        let method = match wrapping {
            Wrapping::Encrypted(method) => *method,
            Wrapping::Packed(pack) => {
                let name = &pack.header.model_decryption;
                let method = Method::from_name(name).with_context(|| {
                    format!(
                        "the pack's model data is encrypted with {}, a method MegEngine Lite does not register",
                        text::printable(name)
                    )
                })?;
                bytes.truncate(pack.data.end);
                bytes.drain(..pack.data.start);
                method
            }
            Wrapping::Bare => bail!("the model is not encrypted"),
        };
        let built_in;
        let (key, whose) = match key {
            Some(key) => {
                method.check_key(key).context("--model-key")?;
                (key, "the key given (--model-key)")
            }
            None => {
                built_in = method.built_in_key();
                (&built_in[..], "its built-in key")
            }
        };
        let wrong = |why: String| {
            anyhow::anyhow!(
                "the model does not decrypt with {method} and {whose}: {why}; the key or the method is wrong, or the file is damaged"
            )
        };
        let plain = method.decrypt(bytes, key).map_err(|err| wrong(format!("{err:#}")))?;
        let mut reader = Reader::holding(plain);
        let graphs = reader.graphs(method.padding()).map_err(|err| {
            let wrong = wrong("what it decrypts to is no MegEngine graph".into());
            anyhow::anyhow!("{wrong} ({err:#})")
        })?;
        if graphs.testcases.is_some() {
            bail!("it decrypts to a testcase container, which MegEngine Lite cannot load (it hands the decrypted data to its graph loader, which knows no container): encrypt the plain model");
        }
        let mut plain = reader.bytes;
        plain.truncate(graphs.graph.end);
        Ok((plain, graphs))
    }

    /// Where `--reduce` may cut the model graph (see `cut`), in the graph's order.
    pub fn cut_points(&self) -> Result<Vec<CutPoint>> {
        cut::cut_points(self.editable_flatbuffer("--reduce")?).context("cannot read the model's operators")
    }

    /// The id of the model graph's one var named `name`; `None` where none or several are.
    pub fn var_named(&self, name: &str) -> Result<Option<u32>> {
        cut::var_named(self.editable_flatbuffer("--reduce")?, name)
    }

    /// The part of the model graph that computes var `var`, a plain model
    /// whose only output it is (a container's testcases and assertions left out).
    pub fn cut_at(&self, var: u32) -> Result<CutGraph> {
        let cut = cut::cut_at(self.editable_flatbuffer("--reduce")?, var)?;
        // What the engine will be handed is checked as any model file is.
        ModelFile::parse(cut.graph.clone()).context("the cut graph does not verify")?;
        Ok(cut)
    }

    /// Makes the vars named `names` outputs of the model graph, after its own.
    pub fn add_outputs(&mut self, names: &[String]) -> Result<()> {
        let graph = edit::with_outputs(self.editable_flatbuffer("a new output")?, names)?;
        self.replace_graph(graph)
    }

    /// A testcase container of this plain model: the model with an
    /// AssertEqual operator per output (`outputs`, as the engine reports
    /// them) at `maxerr`, and one testcase holding `values` (the inputs'
    /// and the `<output>:expect` values, any order).
    pub fn as_container(&self, outputs: &[TensorSpec], maxerr: f32, values: &[(TensorSpec, &[u8])]) -> Result<Vec<u8>> {
        if self.is_container() {
            bail!("it is a testcase container already: pack the plain model it was dumped from");
        }
        let flatbuffer = self.editable_flatbuffer("a testcase container")?;
        let model = edit::with_assertions(flatbuffer, outputs, maxerr)?;
        let mut sorted = values.to_vec();
        sorted.sort_by(|a, b| a.0.name.cmp(b.0.name));
        let mge_version = flatbuffer::Table::root(flatbuffer)?.u32(graph::model::MGE_VERSION)?;
        let testcase = edit::constants_graph(&sorted, mge_version);
        let mut container = CONTAINER_MAGIC.to_vec();
        container.extend(1u32.to_le_bytes());
        container.extend(model);
        container.extend(testcase);
        // What the engine will be handed is checked as any model file is.
        ModelFile::parse(container.clone()).context("the container written does not verify")?;
        Ok(container)
    }

    /// Puts `graph` (a whole graph, size-prefixed) in the model graph's place
    /// (of a bare file: `check_editable`).
    fn replace_graph(&mut self, graph: Vec<u8>) -> Result<()> {
        let range = self
            .graphs
            .as_ref()
            .context("the model's graph is not readable")?
            .graph
            .clone();
        let mut bytes = self.bytes[..range.start].to_vec();
        bytes.extend(graph);
        bytes.extend(&self.bytes[range.end..]);
        *self = ModelFile::parse(bytes).context("the edited graph does not verify")?;
        Ok(())
    }

    /// The testcase graphs of a container, in file order (none for a plain model).
    pub fn testcases(&self) -> impl Iterator<Item = &[u8]> {
        let testcases = self.container().and_then(|graphs| graphs.testcases.as_ref());
        testcases.into_iter().flatten().map(|range| &self.bytes[range.clone()])
    }

    pub fn testcase_count(&self) -> usize {
        self.testcases().count()
    }
}

/// A serialized graph's format and where it lies: the graph, the flatbuffer
/// inside it, the tensor values before the flatbuffer (FBS v1).
type GraphRanges = (GraphFormat, Range<usize>, Range<usize>, Range<usize>);

/// Reads graphs off a source, keeping what it read; asks the source only for
/// what the framing read so far announces.
/// Why a file whose first bytes are no model's is none, saying what it is:
/// empty, a kind of file known by its first bytes, text, the legacy format
/// (which `not_a_graph` says), or, for bytes of no known kind, what a
/// model starts with and that an encrypted one needs its method.
fn what_the_file_is(head: &[u8], not_a_graph: anyhow::Error) -> anyhow::Error {
    const KINDS: &[(&[u8], &str)] = &[
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"\x93NUMPY", "a NumPy array (.npy)"),
        (b"PK\x03\x04", "a zip archive (.npz, .whl, ...)"),
        (b"\x7fELF", "an ELF binary (a program or shared library)"),
        (b"\x1f\x8b", "a gzip archive"),
        (b"%PDF", "a PDF document"),
        (
            b"version https://git-lfs",
            "a Git LFS pointer, not the file it points to (`git lfs pull` fetches it)",
        ),
    ];
    if head.is_empty() {
        return anyhow::anyhow!("the file is empty");
    }
    if head.starts_with(LEGACY_MAGIC) {
        return not_a_graph;
    }
    if let Some((_, kind)) = KINDS.iter().find(|(magic, _)| head.starts_with(magic)) {
        return anyhow::anyhow!("it is {kind}");
    }
    // The head may end inside a character.
    let text = match std::str::from_utf8(head) {
        Ok(text) => Some(text),
        Err(err) if err.error_len().is_none() => std::str::from_utf8(&head[..err.valid_up_to()]).ok(),
        Err(_) => None,
    };
    if let Some(text) = text {
        if !text.contains('\0') {
            let line = text.lines().next().unwrap_or_default();
            let begins: String = line.chars().take(40).collect();
            let cut = if begins.len() < line.len() { "..." } else { "" };
            return anyhow::anyhow!("it is a text file ('{begins}{cut}')");
        }
    }
    anyhow::anyhow!(
        "its first bytes are those of no MegEngine format (an FBS v2 graph has `mgv2` at byte 8, \
         an FBS v1 graph starts with `MGBC` or `MGBS`, a testcase container with `mgbtest0`, \
         a Lite packed model with `packed_model`); an encrypted model needs --model-decryption METHOD"
    )
}

struct Reader<R> {
    source: R,
    /// The source's length, where known: a claim beyond it is refused unread.
    len: Option<usize>,
    bytes: Vec<u8>,
    pos: usize,
}

impl Reader<std::io::Empty> {
    /// A reader of bytes in memory.
    fn holding(bytes: Vec<u8>) -> Self {
        Reader {
            source: std::io::empty(),
            len: Some(bytes.len()),
            bytes,
            pos: 0,
        }
    }
}

impl<R: Read> Reader<R> {
    /// Reads from the source until `len` bytes from `pos` are held, or it ends.
    fn fill(&mut self, len: usize) -> Result<()> {
        let wanted = self.pos.saturating_add(len);
        if wanted > self.bytes.len() {
            // `take` then `read_to_end` grows the buffer as data arrives, not by
            // what a header claims.
            let missing = (wanted - self.bytes.len()) as u64;
            (&mut self.source)
                .take(missing)
                .read_to_end(&mut self.bytes)
                .context("cannot read the model")?;
        }
        Ok(())
    }

    /// Up to `len` bytes from `pos`, without moving on (fewer at the end).
    fn peek(&mut self, len: usize) -> Result<&[u8]> {
        self.fill(len)?;
        let end = self.bytes.len().min(self.pos + len);
        Ok(&self.bytes[self.pos..end])
    }

    fn take(&mut self, len: usize, what: &str) -> Result<Range<usize>> {
        let in_source = self.len.map(|total| total.saturating_sub(self.pos));
        if in_source.is_some_and(|in_source| len <= in_source) {
            let missing = (self.pos + len).saturating_sub(self.bytes.len());
            memory::reserve(&mut self.bytes, missing, "the model")?;
        }
        let remaining = match in_source {
            Some(in_source) if len > in_source => in_source,
            _ => {
                self.fill(len)?;
                self.bytes.len() - self.pos
            }
        };
        if len > remaining {
            bail!(
                "truncated: {what} needs {len} bytes at offset {} but the file ends {remaining} bytes later",
                self.pos
            );
        }
        let range = self.pos..self.pos + len;
        self.pos += len;
        Ok(range)
    }

    /// Everything left in the source.
    fn rest(&mut self) -> Result<Vec<u8>> {
        if let Some(len) = self.len {
            let missing = len.saturating_sub(self.bytes.len());
            memory::reserve(&mut self.bytes, missing, "the model")?;
        }
        self.fill(usize::MAX)?;
        Ok(std::mem::take(&mut self.bytes))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let range = self.take(4, what)?;
        Ok(u32::from_le_bytes(self.bytes[range].try_into().unwrap()))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let range = self.take(8, what)?;
        Ok(u64::from_le_bytes(self.bytes[range].try_into().unwrap()))
    }

    /// Reads one serialized graph, in either format, and verifies its
    /// flatbuffer; returns its byte range, that of the flatbuffer inside it
    /// and that of the tensor values before it (FBS v1).
    fn graph(&mut self, what: &str) -> Result<GraphRanges> {
        let start = self.pos;
        let head = self.peek(12)?;
        let (format, tensors, flatbuffer) = if head.len() == 12 && &head[8..12] == FBS_V2_IDENTIFIER {
            // A size-prefixed flatbuffer: u32 size, then `size` bytes.
            let size = self.u32(what)? as usize;
            let flatbuffer = self.take(size, what)?;
            (GraphFormat::FbsV2, flatbuffer.start..flatbuffer.start, flatbuffer)
        } else {
            if head.starts_with(LEGACY_MAGIC) {
                bail!("{what} is a legacy MegBrain graph (`mgb0001`), a format MegEngine Lite 1.13 cannot load: only FBS v1 and v2 graphs (MegEngine 1.x `trace.dump`) load");
            }
            let magic = match head.get(..4) {
                Some(magic) => u32::from_le_bytes(magic.try_into().unwrap()),
                None => 0,
            };
            if magic != FBS_V1_MAGIC && magic != FBS_V1_MAGIC_V0 {
                bail!("{what} at offset {start} is neither an FBS v2 graph (identifier `mgv2`) nor an FBS v1 graph (magic `MGBC`/`MGBS`)");
            }
            self.u32(what)?;
            if magic == FBS_V1_MAGIC {
                self.u64(what)?; // feature bits
            }
            self.u32(what)?; // reserved
            let tensor_bytes = usize::try_from(self.u64(what)?).unwrap_or(usize::MAX);
            let tensors = self.take(tensor_bytes, what)?;
            let size = self.u32(what)? as usize;
            (GraphFormat::FbsV1, tensors, self.take(size, what)?)
        };
        let root = match format {
            GraphFormat::FbsV1 => &schema::GRAPH_V1,
            GraphFormat::FbsV2 => &schema::MODEL_V2,
        };
        let bytes = &self.bytes[flatbuffer.clone()];
        flatbuffer::verify(bytes, root)
            .and_then(|()| match format {
                GraphFormat::FbsV1 => Ok(()),
                GraphFormat::FbsV2 => schema::check_v2_references(bytes),
            })
            .with_context(|| format!("{what} at offset {start} is malformed"))?;
        Ok((format, start..self.pos, flatbuffer, tensors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest valid graph flatbuffer, padded: a root table whose fields
    /// 2, 3 and 4 (`oprs` and `output_vars_idx` among them, in both schemas)
    /// hold the same empty vector.
    fn flatbuffer(len: usize) -> Vec<u8> {
        let mut buf = 24u32.to_le_bytes().to_vec(); // the root table is at 24
        buf.extend(FBS_V2_IDENTIFIER);
        for entry in [14u16, 16, 0, 0, 4, 8, 12, 0] {
            buf.extend(entry.to_le_bytes()); // vtable at 8 (14 bytes), then padding
        }
        buf.extend(16i32.to_le_bytes()); // the table, its vtable 16 bytes back
        for offset in [12u32, 8, 4, 0] {
            buf.extend(offset.to_le_bytes()); // fields at 28, 32, 36; the vector at 40
        }
        buf.resize(len, 0);
        buf
    }

    fn v2_graph(payload_len: usize) -> Vec<u8> {
        let mut graph = (payload_len as u32).to_le_bytes().to_vec();
        graph.extend(flatbuffer(payload_len));
        graph
    }

    fn v1_graph(tensor_len: usize, fbs_len: usize) -> Vec<u8> {
        let mut graph = FBS_V1_MAGIC.to_le_bytes().to_vec();
        graph.extend(0u64.to_le_bytes());
        graph.extend(0u32.to_le_bytes());
        graph.extend((tensor_len as u64).to_le_bytes());
        graph.extend(vec![7u8; tensor_len]);
        graph.extend((fbs_len as u32).to_le_bytes());
        graph.extend(flatbuffer(fbs_len));
        graph
    }

    fn container(count: u32, graphs: &[Vec<u8>]) -> Vec<u8> {
        let mut bytes = CONTAINER_MAGIC.to_vec();
        bytes.extend(count.to_le_bytes());
        graphs.iter().for_each(|g| bytes.extend(g));
        bytes
    }

    #[test]
    fn reads_a_plain_v2_graph() {
        let model = ModelFile::parse(v2_graph(48)).unwrap();
        assert_eq!(model.graph_format(), GraphFormat::FbsV2);
        assert!(!model.is_container());
        assert_eq!(model.graph().len(), 52);
        assert_eq!(model.testcase_count(), 0);
    }

    #[test]
    fn reads_a_plain_v1_graph() {
        let model = ModelFile::parse(v1_graph(16, 48)).unwrap();
        assert_eq!(model.graph_format(), GraphFormat::FbsV1);
        assert_eq!(model.graph().len(), 4 + 8 + 4 + 8 + 16 + 4 + 48);
    }

    #[test]
    fn splits_a_container() {
        let (model, case0, case1) = (v2_graph(48), v2_graph(48), v2_graph(56));
        let parsed = ModelFile::parse(container(2, &[model.clone(), case0.clone(), case1.clone()])).unwrap();
        assert!(parsed.is_container());
        assert_eq!(parsed.graph(), &model[..]);
        let cases: Vec<&[u8]> = parsed.testcases().collect();
        assert_eq!(cases, [&case0[..], &case1[..]]);
    }

    #[test]
    fn rejects_a_count_beyond_the_file() {
        let err = ModelFile::parse(container(u32::MAX, &[v2_graph(48)])).err().unwrap();
        assert!(
            format!("{err:#}").contains("header counts 4294967295 testcases but the file holds 0"),
            "{err:#}"
        );
        let err = ModelFile::parse(container(3, &[v2_graph(48), v2_graph(48), v2_graph(8)]))
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("testcase 1"), "{err:#}");
    }

    /// What follows the graphs would be silently ignored: testcases a lowered
    /// count leaves out, or bytes appended to a plain model.
    #[test]
    fn rejects_data_after_the_last_graph() {
        let graphs = [v2_graph(48), v2_graph(48), v2_graph(56)];
        let err = ModelFile::parse(container(1, &graphs)).err().unwrap();
        assert!(err.to_string().contains("after the 1 testcases"), "{err}");
        let mut plain = v2_graph(48);
        plain.push(0);
        let err = ModelFile::parse(plain).err().unwrap();
        assert!(err.to_string().contains("offset 52 after the model graph"), "{err}");
    }

    /// The edit that crashed the engine: the root table's vtable offset.
    #[test]
    fn rejects_a_graph_whose_flatbuffer_is_malformed() {
        for soffset in [0i32, 2, -4, 1000] {
            let mut graph = v2_graph(48);
            graph[4 + 24..4 + 28].copy_from_slice(&soffset.to_le_bytes());
            let err = ModelFile::parse(graph).err().unwrap();
            assert!(
                format!("{err:#}").contains("the model graph at offset 0 is malformed"),
                "{err:#}"
            );
        }
    }

    /// Every packed fixture's pack and plain graph verify; an encrypted graph
    /// is known by its method only; a packed container is refused in one line.
    #[test]
    fn reads_the_packed_fixtures() {
        let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/deploy");
        let plain = ModelFile::read(&deploy.join("conv_float_packed.pack"), None).unwrap();
        assert_eq!(plain.format(), "packed fbs-v2");
        assert!(plain.is_verified() && plain.decryption_methods().is_empty());
        assert_eq!(plain.graph(), plain.bytes(), "the engine gets the file as it is");
        let encrypted = ModelFile::read(&deploy.join("conv_float_packed_rc4_info.pack"), None).unwrap();
        assert_eq!(encrypted.format(), "packed, RC4_default-encrypted");
        assert_eq!(encrypted.decryption_methods(), ["RC4_default"]);
        let bare = ModelFile::read(&deploy.join("conv_float_aes.emod"), Some(Method::Aes)).unwrap();
        assert_eq!(bare.decryption_methods(), ["AES_default"]);
        let err = ModelFile::read(&deploy.join("conv_float_rc4.emod"), Some(Method::Aes))
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("16-byte blocks"), "{err:#}");
        let err = ModelFile::read(&deploy.join("conv_float_tc1_packed.pack"), None)
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("packs a testcase container"), "{err:#}");
        let mut truncated = std::fs::read(deploy.join("conv_float_packed.pack")).unwrap();
        truncated.truncate(200);
        assert!(ModelFile::parse(truncated).is_err());
    }

    /// Every encrypted fixture of `make_deploy_fixtures.py` (bare, packed,
    /// with the user's key) decrypts to the model that was encrypted, to the
    /// byte, as Lite loaded it when the fixtures were made; every key the
    /// manifest records Lite refusing is refused in one line.
    #[test]
    fn decrypts_the_encrypted_fixtures_with_their_keys() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(root.join("fixtures/deploy_manifest.json")).unwrap()).unwrap();
        let plain = std::fs::read(root.join("fixtures/conv_float.mge")).unwrap();
        let open = |file: &str, method: &str| {
            let bare = file.ends_with(".emod").then(|| Method::from_name(method).unwrap());
            ModelFile::read(&root.join(file), bare).unwrap()
        };
        let mut decrypted = 0;
        for case in manifest["packed"]
            .as_array()
            .unwrap()
            .iter()
            .chain(manifest["user_keys"].as_array().unwrap())
        {
            let (Some(method), file) = (case["encryption"].as_str(), case["file"].as_str().unwrap()) else {
                continue;
            };
            let key = case["key_file"]
                .as_str()
                .map(|key| std::fs::read(root.join(key)).unwrap());
            let model = open(file, method);
            let (bytes, graphs) = ModelFile::decrypted(model.bytes.clone(), &model.wrapping, key.as_deref()).unwrap();
            assert!(bytes == plain, "{file}");
            assert_eq!(graphs.format, GraphFormat::FbsV2, "{file}");
            let graph = model.model_graph(key.as_deref()).unwrap();
            assert!(
                graph.file_format.ends_with("-encrypted fbs-v2"),
                "{file}: {}",
                graph.file_format
            );
            decrypted += 1;
        }
        assert_eq!(decrypted, 9);
        for case in manifest["wrong_keys"].as_array().unwrap() {
            let (file, method) = (case["file"].as_str().unwrap(), case["method"].as_str().unwrap());
            let hex = case["wrong_key_hex"].as_str().unwrap();
            let key: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap())
                .collect();
            let err = format!("{:#}", open(file, method).model_graph(Some(&key)).err().unwrap());
            assert!(
                err.starts_with(&format!("the model does not decrypt with {method} and the key given")),
                "{file}: {err}"
            );
        }
        // A pack encrypted with the user's key, opened with the built-in one.
        let user = open("fixtures/deploy/conv_float_packed_rc4_userkey.pack", "RC4_default");
        let err = format!("{:#}", user.model_graph(None).err().unwrap());
        assert!(
            err.contains("RC4_default and its built-in key: the decrypted words do not match their keyed hash"),
            "{err}"
        );
    }

    /// What an RC4 method decrypts to: the graph, then the zeros that made
    /// its last 8-byte word whole; nothing else.
    #[test]
    fn a_decrypted_graph_may_end_in_its_methods_padding() {
        let graph = v2_graph(44);
        let padded = |tail: &[u8]| [graph.clone(), tail.to_vec()].concat();
        let graphs = Reader::holding(padded(&[0; 4])).graphs(7).unwrap();
        assert_eq!(graphs.graph, 0..48);
        for tail in [&[0u8; 8][..], &[0, 0, 1]] {
            let err = Reader::holding(padded(tail)).graphs(7).err().unwrap();
            assert!(err.to_string().contains("offset 48 after the model graph"), "{err}");
        }
        assert!(Reader::holding(padded(&[0])).graphs(0).is_err());
    }

    /// Every fixture and real graph passes the verifier.
    #[test]
    fn verifies_the_fixture_models() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut verified = 0;
        for entry in std::fs::read_dir(fixtures).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.extension().is_some_and(|ext| ext == "mge")
                && !name.contains("truncated")
                && !name.starts_with("not_a")
            {
                ModelFile::read(&path, None).unwrap_or_else(|err| panic!("{name}: {err:#}"));
                verified += 1;
            }
        }
        assert!(verified >= 14);
    }

    #[test]
    fn says_when_the_file_holds_fewer_testcases_than_counted() {
        let err = ModelFile::parse(container(2, &[v2_graph(48), v2_graph(48)]))
            .err()
            .unwrap();
        assert!(
            format!("{err:#}").contains("header counts 2 testcases but the file holds 1"),
            "{err:#}"
        );
    }

    #[test]
    fn names_the_legacy_megbrain_format() {
        // The first bytes of a real `mgb0001` dump (mgeconvert's test/resblock_l2loss.mge).
        let mut legacy = b"mgb0001".to_vec();
        legacy.extend([0x8a, 0x03, 0, 0, 0, 0xdc, 0x76, 0x1b, 0]);
        let err = ModelFile::parse(legacy).err().unwrap();
        assert!(
            format!("{err:#}").contains("legacy MegBrain graph (`mgb0001`)"),
            "{err:#}"
        );
    }

    #[test]
    fn rejects_truncated_graphs() {
        let mut graph = v2_graph(48);
        graph.truncate(30);
        assert!(ModelFile::parse(graph).err().unwrap().to_string().contains("truncated"));
        let mut graph = v1_graph(16, 48);
        graph[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(ModelFile::parse(graph).err().unwrap().to_string().contains("truncated"));
    }

    /// What a file is, rather than that an encrypted model needs its method.
    #[test]
    fn rejects_what_is_not_a_model_saying_what_it_is() {
        let refusal = |bytes: &[u8]| format!("{:#}", ModelFile::parse(bytes.to_vec()).err().unwrap());
        assert_eq!(refusal(b""), "the file is empty");
        assert_eq!(
            refusal(b"hello world, not a model\nsecond line"),
            "it is a text file ('hello world, not a model')"
        );
        assert_eq!(refusal(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), "it is a PNG image");
        assert!(refusal(b"mgb0001\x8a\x03\0\0\0\xdc\x76\x1b\0").starts_with(
            "the model graph is a legacy MegBrain graph (`mgb0001`), a format MegEngine Lite 1.13 cannot load"
        ));
        assert!(!refusal(b"mgb0001\x8a\x03\0\0\0\xdc\x76\x1b\0").contains("--model-decryption"));
        let unknown = refusal(&[
            0x3d, 0xa1, 0x07, 0xfe, 0x11, 0x00, 0x9c, 0x42, 0x80, 0x01, 0x02, 0x03, 0xee,
        ]);
        assert!(
            unknown.starts_with("its first bytes are those of no MegEngine format"),
            "{unknown}"
        );
        assert!(
            unknown.ends_with("an encrypted model needs --model-decryption METHOD"),
            "{unknown}"
        );
        assert!(ModelFile::parse(b"mgbtest0".to_vec()).is_err());
    }

    /// Against how `fixtures/make_fixtures.py` dumped each container.
    #[test]
    fn reads_the_assertions_of_the_fixture_containers() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(root.join("fixtures/manifest.json")).unwrap()).unwrap();
        let containers: Vec<&serde_json::Value> = manifest["models"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|model| model["container"] == true)
            .collect();
        assert!(containers.len() >= 8);
        for model in containers {
            let file = model["file"].as_str().unwrap();
            let assertions = ModelFile::read(&root.join(file), None).unwrap().assertions().unwrap();
            let mut checked: Vec<String> = assertions.iter().map(|a| format!("{}:expect", a.output())).collect();
            checked.sort();
            assert_eq!(checked, model["expect_inputs"].as_array().unwrap().clone(), "{file}");
            for assertion in &assertions {
                let dumped = &model["assert_equal"];
                assert_eq!(assertion.maxerr, dumped["maxerr"].as_f64().unwrap(), "{file}");
                assert_eq!(assertion.verbose, dumped["prints_err"].as_bool().unwrap(), "{file}");
            }
        }
    }
}
