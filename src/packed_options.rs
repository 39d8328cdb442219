//! The engine options a Lite packed model carries, both ways: read for a run
//! (`Carried`), written by `mge tune --save-model` (`info_for`). Lite's
//! `LITE_default` parser applies what its info JSON can hold while it loads
//! the model (threads, inplace, device, the graph options); the rest (layouts,
//! the layout transform, algorithm search settings) `mge` keeps under the
//! info's `extra_info`, which Lite stores and ignores, and applies itself.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Map, Value};

use crate::engine::Device;
use crate::input_files;
use crate::model::pack::{self, Header, NewPack, Pack, CACHE_PARSER, DEFAULT_INFO_PARSER};
use crate::model::{ModelFile, Wrapping, NO_ENCRYPTION};
use crate::options::EngineOption;
use crate::output_files::write_atomically;

/// Where `mge`'s own options live in the info's `extra_info`.
const MGE_KEY: &str = "mge";

/// What a packed model brings to a run besides its graph.
#[derive(Debug, Default)]
pub struct Carried {
    /// The options its info sets, as `mge` spells them: Lite applies them
    /// while loading, over what the command line set.
    pub by_lite: Vec<EngineOption>,
    /// Settings of the info that no `mge` option names (`force_dynamic_alloc`...).
    pub unnamed: Vec<String>,
    /// `mge`'s options from the info's `extra_info`, as command-line words.
    pub by_mge: Vec<String>,
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
            && self.by_mge.is_empty()
            && self.fast_run_cache.is_none()
            && self.encrypted_info.is_none()
    }

    /// The keys `LITE_default` reads (MegEngine 1.13, `default_parse.h`).
    fn read_info(&mut self, info: &Value) -> Result<()> {
        if info.get("valid").and_then(Value::as_bool) != Some(true) {
            // Lite stops at `valid: false` (and fails without it).
            return Ok(());
        }
        let device = &info["device"];
        if device["type"].as_str() == Some("CUDA") {
            let id = device["device_id"].as_u64().unwrap_or(0);
            self.by_lite.push(EngineOption::Device(Device::Cuda(id as u32)));
        }
        if let Some(threads) = device["number_threads"].as_u64().filter(|threads| *threads > 1) {
            self.by_lite.push(EngineOption::Threads(threads));
        }
        let flags = [
            (&device["enable_inplace_model"], EngineOption::CpuInplace),
            (&device["use_tensorrt"], EngineOption::TensorRt),
        ];
        self.by_lite.extend(flags_set(&flags));
        let options = &info["options"];
        let flags = [
            (&options["weight_preprocess"], EngineOption::WeightPreprocess),
            (&options["fuse_preprocess"], EngineOption::FusePreprocess),
            (&options["fake_next_exec"], EngineOption::FakeFirst),
            (&options["const_shape"], EngineOption::ConstShape),
        ];
        self.by_lite.extend(flags_set(&flags));
        if options["var_sanity_check_first_run"] == Value::Bool(false) {
            self.by_lite.push(EngineOption::NoSanityCheck);
        }
        type Level = fn(i32) -> EngineOption;
        let levels: [(&str, Level); 4] = [
            ("jit_level", EngineOption::Jit),
            ("comp_node_seq_record_level", EngineOption::RecordCompSeq),
            ("graph_opt_level", EngineOption::GraphOptLevel),
            ("async_exec_level", EngineOption::AsyncLevel),
        ];
        for (key, option) in levels {
            if let Some(level) = options[key].as_i64() {
                self.by_lite.push(option(i32::try_from(level).context(key)?));
            }
        }
        for key in [
            "force_dynamic_alloc",
            "force_output_dynamic_alloc",
            "no_profiling_on_shape_change",
        ] {
            if options[key] == Value::Bool(true) {
                self.unnamed.push(key.to_string());
            }
        }
        if let Some(words) = info["extra_info"].get(MGE_KEY).map(|mge| &mge["options"]) {
            let words = words.as_array().context("extra_info.mge.options is not a list")?;
            self.by_mge = words
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

fn flags_set(flags: &[(&Value, EngineOption)]) -> Vec<EngineOption> {
    flags
        .iter()
        .filter(|(value, _)| **value == Value::Bool(true))
        .map(|(_, option)| option.clone())
        .collect()
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

/// Where Lite's info holds an option: its `device` or its `options` object.
enum InInfo {
    Device(&'static str, Value),
    Options(&'static str, Value),
    /// Nothing to hold: a default, or what stays on this machine.
    Nothing,
    /// Not in Lite's info: `mge`'s `extra_info`.
    Mge,
}

/// Where `option` goes in Lite's info (`LITE_default`'s keys), with
/// `fast_run_cache` embedded.
fn in_info(option: &EngineOption, fast_run_cache: bool) -> Result<InInfo> {
    use EngineOption::*;
    use InInfo::{Device as D, Options as O};
    Ok(match option {
        Device(crate::engine::Device::Cuda(id)) => D("device_id", json!(id)),
        // Lite applies a thread count above 1 only; 1 is its default.
        Threads(threads) if *threads > 1 => D("number_threads", json!(threads)),
        CpuInplace => D("enable_inplace_model", json!(true)),
        TensorRt => D("use_tensorrt", json!(true)),
        WeightPreprocess => O("weight_preprocess", json!(true)),
        FusePreprocess => O("fuse_preprocess", json!(true)),
        FakeFirst => O("fake_next_exec", json!(true)),
        ConstShape => O("const_shape", json!(true)),
        NoSanityCheck => O("var_sanity_check_first_run", json!(false)),
        Jit(level) => O("jit_level", json!(level)),
        RecordCompSeq(level) => O("comp_node_seq_record_level", json!(level)),
        GraphOptLevel(level) => O("graph_opt_level", json!(level)),
        AsyncLevel(level) => O("async_exec_level", json!(level)),
        // The embedded cache stands for these: a run reads it and profiles nothing.
        FastRun | FullRun if fast_run_cache => InInfo::Nothing,
        ModelKey(_) | ModelDecryption(_) => bail!("--save-model packs a plain model; this one is encrypted"),
        // Files of this machine, and the default device: not part of the model.
        Device(_) | Threads(_) | TensorRtCache(_) | COprLib(_) | FastRunCache(_) | NoAlgoCache => InInfo::Nothing,
        _ => InInfo::Mge,
    })
}

/// A pack's header and info JSON for a model named `name` run under
/// `options`, with `fast_run_cache` embedded. Returns them with the options
/// Lite's info cannot hold, which go to `extra_info` for `mge` to apply.
pub fn info_for(
    name: &str,
    options: &[EngineOption],
    fast_run_cache: bool,
) -> Result<(Header, Value, Vec<EngineOption>)> {
    let mut device = Map::new();
    let mut settings = Map::new();
    let mut by_mge = Vec::new();
    for option in options {
        match in_info(option, fast_run_cache)? {
            InInfo::Device(key, value) => {
                device.insert(key.into(), value);
            }
            InInfo::Options(key, value) => {
                settings.insert(key.into(), value);
            }
            InInfo::Nothing => {}
            InInfo::Mge => by_mge.push(option.clone()),
        }
    }
    if device.contains_key("device_id") {
        device.insert("type".into(), json!("CUDA"));
    }
    // What the engine would otherwise refuse: recording level 2, or 1 after a fake run, checks nothing first.
    let records = |level| options.contains(&EngineOption::RecordCompSeq(level));
    if records(2) || (records(1) && options.contains(&EngineOption::FakeFirst)) {
        settings.insert("var_sanity_check_first_run".into(), json!(false));
    }
    let mut info = json!({
        "valid": true,
        "name": name,
        "version": crate::runtime::DEFAULT_VERSION,
        "backend": "MGE",
        "options": settings,
        "extra_info": {MGE_KEY: {"options": by_mge.iter().flat_map(EngineOption::args).collect::<Vec<_>>()}},
    });
    if !device.is_empty() {
        // Lite requires a type where there is a device.
        device.entry("type").or_insert(json!("CPU"));
        info["device"] = Value::Object(device);
    }
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
    use crate::engine::GraphLayout;

    /// What `info_for` writes reads back as the same options, split between
    /// Lite's info and mge's extra_info.
    #[test]
    fn carried_options_read_back() {
        let options = [
            EngineOption::Threads(2),
            EngineOption::CpuInplace,
            EngineOption::WeightPreprocess,
            EngineOption::RecordCompSeq(1),
            EngineOption::Layout(GraphLayout::Nchw44),
            EngineOption::FastRun,
        ];
        let (header, info, by_mge) = info_for("m", &options, true).unwrap();
        assert_eq!(by_mge, [EngineOption::Layout(GraphLayout::Nchw44)]);
        assert_eq!(header.cache_parser.as_deref(), Some(CACHE_PARSER));
        let mut carried = Carried::default();
        carried.read_info(&info).unwrap();
        assert_eq!(carried.by_lite, options[..4]);
        assert_eq!(carried.by_mge, ["--layout", "nchw44"]);
        let mut ignored = Carried::default();
        ignored
            .read_info(&json!({"valid": false, "device": {"number_threads": 4}}))
            .unwrap();
        assert!(ignored.is_empty());
    }
}
