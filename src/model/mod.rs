//! Model files: plain graphs (FBS v1 or v2) and `mgbtest0` testcase containers,
//! split into graphs with every length checked against the file.

use std::fmt;
use std::ops::Range;
use std::path::Path;

use anyhow::{bail, Context, Result};

mod assertions;
mod flatbuffer;
mod unassert;

pub use assertions::{checked_output, Assertion};

/// How MegEngine names the input holding an output's expected value.
pub const EXPECTATION_SUFFIX: &str = ":expect";

const CONTAINER_MAGIC: &[u8; 8] = b"mgbtest0";
const FBS_V2_IDENTIFIER: &[u8; 4] = b"mgv2";
/// `MGB_MAGIC` (with feature bits) and `MAGIC_V0` of the FBS v1 format.
const FBS_V1_MAGIC: u32 = 0x4342_474D;
const FBS_V1_MAGIC_V0: u32 = 0x5342_474D;
/// The serialization of MegBrain before FBS (MegEngine 0.x), which Lite does not read.
const LEGACY_MAGIC: &[u8; 7] = b"mgb0001";

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
    pub format: GraphFormat,
    bytes: Vec<u8>,
    graph: Range<usize>,
    /// The flatbuffer inside the model graph.
    graph_flatbuffer: Range<usize>,
    testcases: Option<Vec<Range<usize>>>,
}

impl ModelFile {
    pub fn read(path: &Path) -> Result<ModelFile> {
        let metadata = std::fs::metadata(path).with_context(|| format!("cannot read model {}", path.display()))?;
        // A FIFO or a device would block or never end: a model is a file.
        if !metadata.is_file() {
            bail!("model {} is not a regular file", path.display());
        }
        let bytes = std::fs::read(path).with_context(|| format!("cannot read model {}", path.display()))?;
        ModelFile::parse(bytes).with_context(|| format!("{} is not a usable MegEngine model", path.display()))
    }

    pub fn parse(bytes: Vec<u8>) -> Result<ModelFile> {
        let mut reader = Reader { bytes: &bytes, pos: 0 };
        let testcase_count = if bytes.starts_with(CONTAINER_MAGIC) {
            reader.pos = CONTAINER_MAGIC.len();
            Some(reader.u32("the testcase count")? as usize)
        } else {
            None
        };
        let (format, graph, graph_flatbuffer) = reader.graph("the model graph")?;
        let testcases = match testcase_count {
            None => None,
            Some(count) => {
                // Each graph takes at least 8 bytes, so a count beyond that is a lie.
                if count > reader.remaining() / 8 {
                    bail!(
                        "the container claims {count} testcases but only {} bytes follow the model",
                        reader.remaining()
                    );
                }
                let mut ranges = Vec::with_capacity(count);
                for index in 0..count {
                    if reader.remaining() == 0 {
                        bail!("the container's header counts {count} testcases but the file holds {index}");
                    }
                    ranges.push(reader.graph(&format!("testcase {index}"))?.1);
                }
                Some(ranges)
            }
        };
        Ok(ModelFile {
            format,
            bytes,
            graph,
            graph_flatbuffer,
            testcases,
        })
    }

    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_container(&self) -> bool {
        self.testcases.is_some()
    }

    /// The model graph (for a plain model, the graph as found in the file).
    pub fn graph(&self) -> &[u8] {
        &self.bytes[self.graph.clone()]
    }

    /// The AssertEqual operators of the model graph: what a testcase checks.
    pub fn assertions(&self) -> Result<Vec<Assertion>> {
        assertions::read(self.format, &self.bytes[self.graph_flatbuffer.clone()])
            .context("cannot read the model's AssertEqual operators")
    }

    /// The model graph to run on other feeds than a container's testcases: its
    /// outputs moved from the AssertEqual operators to the vars they check (see
    /// `unassert`), with the name of each output's var where it changed.
    pub fn graph_with_real_outputs(&self) -> Result<(Vec<u8>, Vec<Option<String>>)> {
        let mut graph = self.graph().to_vec();
        if !self.is_container() {
            return Ok((graph, Vec::new()));
        }
        let flatbuffer = self.graph_flatbuffer.start - self.graph.start..self.graph_flatbuffer.end - self.graph.start;
        let names = unassert::rewrite(self.format, &mut graph[flatbuffer])
            .context("cannot take the model's outputs from before its AssertEqual operators")?;
        Ok((graph, names))
    }

    /// The testcase graphs of a container, in file order (none for a plain model).
    pub fn testcases(&self) -> impl Iterator<Item = &[u8]> {
        self.testcases.iter().flatten().map(|range| &self.bytes[range.clone()])
    }

    pub fn testcase_count(&self) -> usize {
        self.testcases.as_ref().map_or(0, Vec::len)
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, len: usize, what: &str) -> Result<&[u8]> {
        if len > self.remaining() {
            bail!(
                "truncated: {what} needs {len} bytes at offset {} but the file ends {} bytes later",
                self.pos,
                self.remaining()
            );
        }
        let slice = &self.bytes[self.pos..self.pos + len];
        self.pos += len;
        Ok(slice)
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().unwrap()))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().unwrap()))
    }

    /// Reads one serialized graph, in either format; returns its byte range and
    /// that of the flatbuffer inside it.
    fn graph(&mut self, what: &str) -> Result<(GraphFormat, Range<usize>, Range<usize>)> {
        let start = self.pos;
        let head = &self.bytes[start..];
        if head.len() >= 12 && &head[8..12] == FBS_V2_IDENTIFIER {
            // A size-prefixed flatbuffer: u32 size, then `size` bytes.
            let size = self.u32(what)? as usize;
            self.take(size, what)?;
            return Ok((GraphFormat::FbsV2, start..self.pos, start + 4..self.pos));
        }
        let magic = if head.len() >= 4 {
            u32::from_le_bytes(head[..4].try_into().unwrap())
        } else {
            0
        };
        if head.starts_with(LEGACY_MAGIC) {
            bail!("{what} is a legacy MegBrain graph (`mgb0001`), a format MegEngine Lite 1.13 cannot load: only FBS v1 and v2 graphs (MegEngine 1.x `trace.dump`) load");
        }
        if magic != FBS_V1_MAGIC && magic != FBS_V1_MAGIC_V0 {
            bail!("{what} at offset {start} is neither an FBS v2 graph (identifier `mgv2`) nor an FBS v1 graph (magic `MGBC`/`MGBS`)");
        }
        self.u32(what)?;
        if magic == FBS_V1_MAGIC {
            self.u64(what)?; // feature bits
        }
        self.u32(what)?; // reserved
        let tensor_bytes = usize::try_from(self.u64(what)?).unwrap_or(usize::MAX);
        self.take(tensor_bytes, what)?;
        let size = self.u32(what)? as usize;
        let flatbuffer = self.pos;
        self.take(size, what)?;
        Ok((GraphFormat::FbsV1, start..self.pos, flatbuffer..self.pos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2_graph(payload_len: usize) -> Vec<u8> {
        let mut graph = (payload_len as u32).to_le_bytes().to_vec();
        let mut payload = vec![0u8; payload_len];
        payload[4..8].copy_from_slice(FBS_V2_IDENTIFIER);
        graph.extend(payload);
        graph
    }

    fn v1_graph(tensor_len: usize, fbs_len: usize) -> Vec<u8> {
        let mut graph = FBS_V1_MAGIC.to_le_bytes().to_vec();
        graph.extend(0u64.to_le_bytes());
        graph.extend(0u32.to_le_bytes());
        graph.extend((tensor_len as u64).to_le_bytes());
        graph.extend(vec![7u8; tensor_len]);
        graph.extend((fbs_len as u32).to_le_bytes());
        graph.extend(vec![9u8; fbs_len]);
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
        let model = ModelFile::parse(v2_graph(40)).unwrap();
        assert_eq!(model.format, GraphFormat::FbsV2);
        assert!(!model.is_container());
        assert_eq!(model.graph().len(), 44);
        assert_eq!(model.testcase_count(), 0);
    }

    #[test]
    fn reads_a_plain_v1_graph() {
        let model = ModelFile::parse(v1_graph(16, 20)).unwrap();
        assert_eq!(model.format, GraphFormat::FbsV1);
        assert_eq!(model.graph().len(), 4 + 8 + 4 + 8 + 16 + 4 + 20);
    }

    #[test]
    fn splits_a_container() {
        let (model, case0, case1) = (v2_graph(40), v2_graph(12), v2_graph(20));
        let parsed = ModelFile::parse(container(2, &[model.clone(), case0.clone(), case1.clone()])).unwrap();
        assert!(parsed.is_container());
        assert_eq!(parsed.graph(), &model[..]);
        let cases: Vec<&[u8]> = parsed.testcases().collect();
        assert_eq!(cases, [&case0[..], &case1[..]]);
    }

    #[test]
    fn rejects_a_count_beyond_the_file() {
        let err = ModelFile::parse(container(u32::MAX, &[v2_graph(40)])).err().unwrap();
        assert!(err.to_string().contains("claims 4294967295 testcases"), "{err}");
    }

    #[test]
    fn says_when_the_file_holds_fewer_testcases_than_counted() {
        let err = ModelFile::parse(container(2, &[v2_graph(40), v2_graph(12)]))
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
        let mut graph = v2_graph(40);
        graph.truncate(30);
        assert!(ModelFile::parse(graph).err().unwrap().to_string().contains("truncated"));
        let mut graph = v1_graph(16, 20);
        graph[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(ModelFile::parse(graph).err().unwrap().to_string().contains("truncated"));
    }

    #[test]
    fn rejects_what_is_not_a_model() {
        for bytes in [b"hello world, not a model".to_vec(), Vec::new(), b"mgbtest0".to_vec()] {
            assert!(ModelFile::parse(bytes).is_err());
        }
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
            let assertions = ModelFile::read(&root.join(file)).unwrap().assertions().unwrap();
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
