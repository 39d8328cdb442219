//! `mge compare A.mge B.mge --structure`: the two models' graphs compared
//! from their files (`model::diff`), no engine; and the same diff for the
//! reports of two runs and of two folders.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::exit::CheckFailed;
use crate::input_files;
use crate::model::diff::{diff_graphs, StructureDiff};
use crate::model::{Method, ModelFile, ModelGraph};
use crate::report::made_by::Making;
use crate::report::print;
use crate::report::structure::StructureReport;
use crate::settings::EngineSettings;
use crate::text::path_text;

/// What opens one side's model for its graph, as the engine gets it: the
/// method of a bare encrypted model (`--model-decryption`) and the user's
/// key (`--model-key`), else each method's built-in key.
pub struct Opening {
    bare_method: Option<Method>,
    /// Read once; never shown nor written.
    key: Option<Vec<u8>>,
}

impl Opening {
    /// A side's opening, from its engine settings.
    pub fn of(settings: &EngineSettings) -> Opening {
        Opening {
            bare_method: settings.network.bare_model_decryption.and_then(Method::from_name),
            key: settings.model_key.clone(),
        }
    }

    /// The graph of the model at `path`, decrypted where it is encrypted.
    fn graph(&self, path: &Path) -> Result<ModelGraph> {
        let file = ModelFile::read(path, self.bare_method)?;
        // As the engine's load refuses it (`prepare::ready_runtime`).
        if self.key.is_some() && file.decryption_methods().is_empty() {
            bail!("--model-key: the model is not encrypted (the key of one side alone goes in its --a-options or --b-options)");
        }
        file.model_graph(self.key.as_deref())
    }
}

/// How the graphs of models `a` and `b` differ, each opened by its side's `opening`.
pub fn structure_of(models: [&Path; 2], openings: [&Opening; 2]) -> Result<StructureDiff> {
    let graph = |at: usize| {
        openings[at]
            .graph(models[at])
            .with_context(|| format!("the structure of {}", path_text(models[at])))
    };
    diff_graphs(&graph(0)?, &graph(1)?)
}

/// `--structure`: the report, and exit 1 when the graphs differ.
pub fn compare_structures(models: [&Path; 2], openings: [&Opening; 2], json: bool) -> Result<()> {
    let started = Instant::now();
    for model in models {
        input_files::claim(model)?;
    }
    let structure = structure_of(models, openings)?;
    let same = structure.same();
    let report = StructureReport {
        a: path_text(models[0]),
        b: path_text(models[1]),
        structure,
        seconds: started.elapsed().as_secs_f64(),
    };
    print(&report, json, &Making::without_engine())?;
    match same {
        true => Ok(()),
        false => Err(CheckFailed("the graphs differ".into()).into()),
    }
}
