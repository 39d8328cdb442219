//! The engine options a Lite packed model carries, both ways: read for a run
//! (`Carried`), written by `mge tune --save-model` (`info_for`), each where
//! its definition says (`options::InPack`). Lite's `LITE_default` parser
//! applies what its info JSON can hold while it loads the model (threads,
//! inplace, device, the graph options); the rest of what chooses how the
//! engine computes (layouts, the layout transform, algorithm search settings)
//! `mge` keeps under the info's `extra_info`, which Lite stores and ignores,
//! and applies itself. A pack never carries an option that names a file, a
//! library or a cache of this machine: one that does is refused.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::cli::parse_engine_words;
use crate::engine::Device;
use crate::input_files;
use crate::model::pack::{self, Header, NewPack, Pack, CACHE_PARSER, DEFAULT_INFO_PARSER};
use crate::model::{ModelFile, Wrapping, NO_ENCRYPTION};
use crate::options::{Definition, EngineOption, InPack, InfoKey, InfoValue, DEFINITIONS};
use crate::output_files::write_atomically;

/// Where `mge`'s own options live in the info's `extra_info`.
const MGE_KEY: &str = "mge";

/// The info's settings that no `mge` option names, which Lite applies where they are true.
const UNNAMED_SETTINGS: [&str; 3] = [
    "force_dynamic_alloc",
    "force_output_dynamic_alloc",
    "no_profiling_on_shape_change",
];

/// What a packed model brings to a run besides its graph.
#[derive(Debug, Default)]
pub struct Carried {
    /// The options its info sets, as `mge` spells them: Lite applies them
    /// while loading, over what the command line set.
    pub by_lite: Vec<EngineOption>,
    /// Settings of the info that no `mge` option names (`force_dynamic_alloc`...).
    pub unnamed: Vec<String>,
    /// The words of `mge`'s options in the info's `extra_info`, as the pack
    /// holds them (`by_mge` reads them for a run).
    pub mge_words: Vec<String>,
    /// The size of its embedded fast-run cache, which Lite installs while loading.
    pub fast_run_cache: Option<usize>,
    /// Its info could not be read: encrypted with this method.
    pub encrypted_info: Option<String>,
}

impl Carried {
    /// What `model` carries (nothing, unless it is packed).
    pub fn of(model: &ModelFile) -> Result<Carried> {
        let Wrapping::Packed(pack) = &model.wrapping else {
            return Ok(Carried::default());
        };
        let mut carried = Carried {
            fast_run_cache: pack
                .fast_run_cache
                .as_ref()
                .filter(|_| pack.header.is_fast_run_cache)
                .map(|range| range.len()),
            ..Carried::default()
        };
        if let Some(info) = info_json(model.bytes(), pack)? {
            carried.read_info(&info).context("the pack's info")?;
        } else if pack.info.is_some() && pack.header.info_decryption != NO_ENCRYPTION {
            carried.encrypted_info = Some(pack.header.info_decryption.clone());
        }
        Ok(carried)
    }

    pub fn is_empty(&self) -> bool {
        self.by_lite.is_empty()
            && self.unnamed.is_empty()
            && self.mge_words.is_empty()
            && self.fast_run_cache.is_none()
            && self.encrypted_info.is_none()
    }

    /// `mge`'s options of the info's `extra_info`, for a run. An option a
    /// pack never carries (one that names a file, a library or a cache of
    /// this machine) is refused, naming it: the user gives it, not the model.
    pub fn by_mge(&self) -> Result<Vec<EngineOption>> {
        let options = parse_engine_words(self.mge_words.iter().cloned())
            .map_err(anyhow::Error::msg)
            .context("the options in the pack's extra_info")?;
        for option in &options {
            let definition = option.kind().definition();
            if let InPack::Never(reason) = definition.in_pack {
                bail!(
                    "the pack carries {flag} in its extra_info, which a model may not carry: it {reason}; \
                    give {flag} on the command line",
                    flag = definition.flag
                );
            }
        }
        Ok(options)
    }

    /// Reads the keys `LITE_default` reads, where each option's definition
    /// says (MegEngine 1.13, `default_parse.h`).
    fn read_info(&mut self, info: &Value) -> Result<()> {
        if info.get("valid").and_then(Value::as_bool) != Some(true) {
            // Lite stops at `valid: false` (and fails without it).
            return Ok(());
        }
        let words: Vec<String> = DEFINITIONS
            .iter()
            .filter_map(|definition| match definition.in_pack {
                InPack::LiteInfo(key) => word_in_info(info, definition, key),
                _ => None,
            })
            .collect();
        self.by_lite = parse_engine_words(words).map_err(anyhow::Error::msg)?;
        let options = &info["options"];
        self.unnamed = UNNAMED_SETTINGS
            .iter()
            .filter(|key| options[**key] == Value::Bool(true))
            .map(|key| key.to_string())
            .collect();
        if let Some(words) = info["extra_info"].get(MGE_KEY).map(|mge| &mge["options"]) {
            let words = words.as_array().context("extra_info.mge.options is not a list")?;
            self.mge_words = words
                .iter()
                .map(|word| {
                    word.as_str()
                        .map(str::to_string)
                        .context("extra_info.mge.options holds a non-string")
                })
                .collect::<Result<_>>()?;
        }
        Ok(())
    }
}

/// The option of `definition` that `info` sets at `key`, as one word of the
/// command line (`--flag=VALUE`, which a value that starts with `-` needs).
fn word_in_info(info: &Value, definition: &Definition, key: InfoKey) -> Option<String> {
    let held = &info[key.object][key.key];
    let flag = definition.flag;
    match key.value {
        InfoValue::Switch(on) => (*held == Value::Bool(on)).then(|| flag.to_string()),
        InfoValue::Number { least } => held
            .as_i64()
            .filter(|number| *number >= least)
            .map(|number| format!("{flag}={number}")),
        InfoValue::CudaId => (info[key.object]["type"].as_str() == Some("CUDA"))
            .then(|| format!("{flag}=cuda:{}", held.as_u64().unwrap_or(0))),
    }
}

/// `option`'s value as Lite's info holds it at `key`; none where Lite's
/// default stands for it.
fn value_in_info(option: &EngineOption, key: InfoKey) -> Option<Value> {
    match key.value {
        InfoValue::Switch(on) => Some(json!(on)),
        InfoValue::Number { least } => {
            let number: i64 = option.flag_and_value().1?.to_str()?.parse().ok()?;
            (number >= least).then(|| json!(number))
        }
        InfoValue::CudaId => match option {
            EngineOption::Device(Device::Cuda(id)) => Some(json!(id)),
            _ => None,
        },
    }
}

/// The pack's info as JSON, where it is plain and parsed by `LITE_default`
/// (which stops at a NUL byte).
fn info_json(file: &[u8], pack: &Pack) -> Result<Option<Value>> {
    let header = &pack.header;
    let Some(range) = &pack.info else {
        return Ok(None);
    };
    if header.info_decryption != NO_ENCRYPTION || header.info_parser != DEFAULT_INFO_PARSER {
        return Ok(None);
    }
    let data = &file[range.clone()];
    let text = data.split(|byte| *byte == 0).next().unwrap_or_default();
    let info = serde_json::from_slice(text).context("the pack's info is not JSON")?;
    Ok(Some(info))
}

/// A pack's header and info JSON for a model named `name` run under
/// `options`, with `fast_run_cache` embedded, each option where its
/// definition says. Returns them with the options Lite's info cannot hold,
/// which go to `extra_info` for `mge` to apply; those a pack never carries
/// stay out.
pub fn info_for(
    name: &str,
    options: &[EngineOption],
    fast_run_cache: bool,
) -> Result<(Header, Value, Vec<EngineOption>)> {
    let mut info = json!({
        "valid": true,
        "name": name,
        "version": crate::runtime::DEFAULT_VERSION,
        "backend": "MGE",
        "options": {},
    });
    let mut by_mge = Vec::new();
    for option in options {
        match option.kind().definition().in_pack {
            InPack::LiteInfo(key) => {
                if let Some(value) = value_in_info(option, key) {
                    info[key.object][key.key] = value;
                }
            }
            // The embedded cache stands for these: a run reads it and profiles nothing.
            InPack::ExtraInfo if fast_run_cache && matches!(option, EngineOption::FastRun | EngineOption::FullRun) => {}
            InPack::ExtraInfo => by_mge.push(option.clone()),
            InPack::Never(_) => {}
        }
    }
    if let Some(device) = info.get_mut("device").and_then(Value::as_object_mut) {
        // Lite requires a type where there is a device.
        let kind = if device.contains_key("device_id") {
            "CUDA"
        } else {
            "CPU"
        };
        device.insert("type".into(), json!(kind));
    }
    // What the engine would otherwise refuse: recording level 2, or 1 after a fake run, checks nothing first.
    let records = |level| options.contains(&EngineOption::RecordCompSeq(level));
    if records(2) || (records(1) && options.contains(&EngineOption::FakeFirst)) {
        info["options"]["var_sanity_check_first_run"] = json!(false);
    }
    let words: Vec<String> = by_mge.iter().flat_map(EngineOption::args).collect();
    info["extra_info"] = json!({MGE_KEY: {"options": words}});
    let header = Header {
        name: name.to_string(),
        info_decryption: NO_ENCRYPTION.into(),
        info_parser: DEFAULT_INFO_PARSER.into(),
        model_decryption: NO_ENCRYPTION.into(),
        cache_parser: fast_run_cache.then(|| CACHE_PARSER.to_string()),
        is_fast_run_cache: fast_run_cache,
    };
    Ok((header, info, by_mge))
}

/// Fails for a model `save_model` cannot pack.
pub fn ensure_packable(model: &ModelFile) -> Result<()> {
    if !matches!(model.wrapping, Wrapping::Bare) {
        bail!("--save-model packs a plain model; this one is already packed or encrypted");
    }
    Ok(())
}

/// Writes `out`: `model`'s graph (a container's with its real outputs)
/// packed with `options` and, when given, the fast-run cache in `cache`.
/// Returns the options Lite's info cannot hold, kept in its `extra_info`.
pub fn save_model(
    out: &Path,
    model: &ModelFile,
    options: &[EngineOption],
    cache: Option<&Path>,
) -> Result<Vec<EngineOption>> {
    ensure_packable(model)?;
    let name = out
        .file_stem()
        .map_or_else(|| "model".into(), |stem| stem.to_string_lossy().into_owned());
    let (graph, _) = model.graph_with_real_outputs()?;
    let cache = cache
        .map(|file| input_files::read(file, &input_files::FAST_RUN_CACHE))
        .transpose()?;
    let (header, info, by_mge) = info_for(&name, options, cache.is_some())?;
    let info = serde_json::to_vec(&info)?;
    let file = pack::write(&NewPack {
        header: &header,
        info: Some(&info),
        fast_run_cache: cache.as_deref(),
        data: &graph,
    });
    write_atomically(out, &file).context("--save-model")?;
    Ok(by_mge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::tests::{example, with_what_it_requires};
    use crate::options::OptionKind;

    fn read_back(info: &Value) -> Carried {
        let mut carried = Carried::default();
        carried.read_info(info).unwrap();
        carried
    }

    /// Every option, written as `tune --save-model` writes it, reads back as
    /// itself from where its definition puts it: Lite's info, or mge's
    /// `extra_info`; one that a pack never carries is not written, and a
    /// pack that carries it anyway is refused, naming it.
    #[test]
    fn every_option_reads_back_from_where_a_pack_holds_it() {
        for &kind in OptionKind::ALL {
            let (option, _) = example(kind);
            let options = with_what_it_requires(&option);
            let (_, info, by_mge) = info_for("m", &options, false).unwrap();
            let carried = read_back(&info);
            let words = option.args();
            match kind.definition().in_pack {
                InPack::LiteInfo(_) => {
                    assert!(carried.by_lite.contains(&option), "{option:?}: {info}");
                    assert!(carried.mge_words.is_empty() && by_mge.is_empty(), "{option:?}: {info}");
                }
                InPack::ExtraInfo => {
                    assert_eq!(carried.by_lite, [], "{option:?}: {info}");
                    assert_eq!(carried.mge_words, words, "{option:?}");
                    assert_eq!(carried.by_mge().unwrap(), std::slice::from_ref(&option));
                }
                InPack::Never(reason) => {
                    let of_its_kind = |options: &[EngineOption]| options.iter().any(|read| read.kind() == kind);
                    assert!(!of_its_kind(&carried.by_lite), "{option:?}: {info}");
                    assert!(by_mge.is_empty() && carried.mge_words.is_empty(), "{option:?}: {info}");
                    let smuggled = Carried {
                        mge_words: options.iter().flat_map(EngineOption::args).collect(),
                        ..Carried::default()
                    };
                    let refusal = smuggled.by_mge().unwrap_err().to_string();
                    let flag = kind.definition().flag;
                    assert!(
                        refusal.contains(&format!("carries {flag} ")) && refusal.contains(reason),
                        "{refusal}"
                    );
                    assert!(
                        refusal.contains(&format!("give {flag} on the command line")),
                        "{refusal}"
                    );
                }
            }
        }
    }

    /// Options of Lite's info and mge's together, with an embedded cache,
    /// which stands for the algorithm search; Lite's defaults write nothing,
    /// and an info that is not valid carries nothing.
    #[test]
    fn carried_options_read_back() {
        let options = [
            EngineOption::Threads(2),
            EngineOption::CpuInplace,
            EngineOption::WeightPreprocess,
            EngineOption::RecordCompSeq(1),
            EngineOption::Layout(crate::engine::GraphLayout::Nchw44),
            EngineOption::FastRun,
            EngineOption::Threads(1),
            EngineOption::Device(Device::Cpu),
            EngineOption::COprLib("libx.so".into()),
        ];
        let (header, info, by_mge) = info_for("m", &options, true).unwrap();
        assert_eq!(by_mge, [EngineOption::Layout(crate::engine::GraphLayout::Nchw44)]);
        assert_eq!(header.cache_parser.as_deref(), Some(CACHE_PARSER));
        let carried = read_back(&info);
        assert_eq!(carried.by_lite, options[..4]);
        assert_eq!(carried.mge_words, ["--layout", "nchw44"]);
        assert!(read_back(&json!({"valid": false, "device": {"number_threads": 4}})).is_empty());
    }
}
