//! `run --expect`: what the outputs are expected to be. The files are
//! claimed with the settings, read and held against the model's outputs
//! (names, dtypes, shapes) once it is loaded, before any run, and compared
//! with the outputs after the timed runs.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::compare::{compare_values, Rules};
use crate::feeds;
use crate::input_files;
use crate::output_files::npy_file_names;
use crate::report::run::ExpectReport;
use crate::tensor::npy::Npz;
use crate::tensor::{format_shape, HostTensor, TensorInfo};
use crate::text::quoted_list;

/// One `--expect`: `NAME:FILE.npy`, `FILE.npy`, `FILE.npz` or `DIR`.
pub enum Expectation {
    /// One output's expected value.
    Output { output: String, file: PathBuf },
    /// The value of the model's one output.
    Lone(PathBuf),
    /// Every output's, each the array of the output's name.
    Bundle(PathBuf),
    /// A folder of `NAME.npy`, named as `--outputs DIR` names them; its
    /// files, claimed as the settings were made.
    Folder { dir: PathBuf, files: Vec<PathBuf> },
}

/// What the spec of `--expect` accepts, for its errors.
const FORMS: &str = "NAME:FILE.npy, FILE.npy (a model with one output), FILE.npz holding an array per output, \
                     or a folder of NAME.npy as --outputs writes them";

impl Expectation {
    /// Reads `spec` and claims the files it names as inputs of the command.
    pub fn read(spec: &str) -> Result<Expectation> {
        let whole = Path::new(spec);
        let lower = spec.to_ascii_lowercase();
        let expectation = match spec.rsplit_once(':') {
            Some((output, file)) if !output.is_empty() && !file.is_empty() && !whole.exists() => Expectation::Output {
                output: output.to_string(),
                file: PathBuf::from(file),
            },
            _ if whole.is_dir() => Expectation::Folder {
                dir: whole.to_path_buf(),
                files: npy_files_in(whole).with_context(|| format!("--expect {spec}"))?,
            },
            _ if lower.ends_with(".npz") => Expectation::Bundle(whole.to_path_buf()),
            _ if lower.ends_with(".npy") => Expectation::Lone(whole.to_path_buf()),
            _ => bail!("--expect {spec}: expected {FORMS}"),
        };
        for file in expectation.files() {
            if !file.is_file() {
                bail!("--expect {spec}: {} is not a file", file.display());
            }
            input_files::claim(&file)?;
        }
        Ok(expectation)
    }

    /// The files it reads.
    pub fn files(&self) -> Vec<PathBuf> {
        match self {
            Expectation::Output { file, .. } | Expectation::Lone(file) | Expectation::Bundle(file) => {
                vec![file.clone()]
            }
            Expectation::Folder { dir, files } => files.iter().map(|file| dir.join(file)).collect(),
        }
    }

    /// The spec again, with `place` for where each file is now (`--repro`'s copies).
    pub fn spec(&self, mut place: impl FnMut(&Path) -> Result<PathBuf>) -> Result<String> {
        Ok(match self {
            Expectation::Output { output, file } => format!("{output}:{}", place(file)?.display()),
            Expectation::Lone(file) | Expectation::Bundle(file) => place(file)?.display().to_string(),
            Expectation::Folder { dir, files } => {
                let mut copied = None;
                for file in files {
                    let placed = place(&dir.join(file))?;
                    copied = placed.parent().map(Path::to_path_buf);
                }
                copied.unwrap_or_default().display().to_string()
            }
        })
    }
}

/// The `.npy` files directly in `dir`, by name; none is an error.
fn npy_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read the folder {}", dir.display()))? {
        let name = PathBuf::from(entry?.file_name());
        if name
            .extension()
            .is_some_and(|extension| extension.eq_ignore_ascii_case("npy"))
        {
            files.push(name);
        }
    }
    if files.is_empty() {
        bail!("the folder holds no .npy file");
    }
    files.sort();
    Ok(files)
}

/// An output's expected value, in the output's dtype, and where it came from.
pub struct Expected {
    name: String,
    value: HostTensor,
    source: String,
}

/// Reads every expected value in its output's dtype and holds it against
/// the model's `outputs`: each names an output, and has its shape where the
/// model's inputs were fed in their declared shapes (`shapes_known`; other
/// shapes may change the outputs'). So a wrong name, file or shape is refused
/// before any run, not after the timed ones.
pub fn expected_values(
    expectations: &[Expectation],
    outputs: &[TensorInfo],
    shapes_known: bool,
    rules: &Rules,
) -> Result<Vec<Expected>> {
    let outputs = Outputs::new(outputs);
    let mut expected = Vec::new();
    for expectation in expectations {
        expected.extend(read_expectation(expectation, &outputs)?);
    }
    rules.check_names(expected.iter().map(|expected| expected.name.as_str()))?;
    if shapes_known {
        for expected in &expected {
            check_shape(expected, &outputs.named(&expected.name)?.shape)?;
        }
    }
    Ok(expected)
}

/// The model's outputs, found by name.
struct Outputs<'a> {
    infos: &'a [TensorInfo],
    names: Vec<&'a str>,
}

impl<'a> Outputs<'a> {
    fn new(infos: &'a [TensorInfo]) -> Outputs<'a> {
        Outputs {
            infos,
            names: infos.iter().map(|output| output.name.as_str()).collect(),
        }
    }

    /// The output called `name`; where there is none, an error that lists them.
    fn named(&self, name: &str) -> Result<&'a TensorInfo> {
        self.infos.iter().find(|output| output.name == name).with_context(|| {
            format!(
                "the model has no output '{name}' (outputs: {})",
                quoted_list(&self.names)
            )
        })
    }
}

/// The values one `--expect` gives, each matched to its output.
fn read_expectation(expectation: &Expectation, outputs: &Outputs) -> Result<Vec<Expected>> {
    match expectation {
        Expectation::Output { output: name, file } => {
            let source = format!("{name}:{}", file.display());
            let info = outputs.named(name).with_context(|| format!("--expect {source}"))?;
            Ok(vec![read_npy(info, file, file.display().to_string())?])
        }
        Expectation::Lone(file) => {
            let [info] = outputs.infos else {
                bail!(
                    "--expect {}: the model has {} outputs ({}): say which this file holds, NAME:{}",
                    file.display(),
                    outputs.infos.len(),
                    quoted_list(&outputs.names),
                    file.display()
                );
            };
            Ok(vec![read_npy(info, file, file.display().to_string())?])
        }
        Expectation::Bundle(file) => read_bundle(file, outputs),
        Expectation::Folder { dir, files } => read_folder(dir, files, outputs),
    }
}

/// `info`'s expected value from the .npy `file`, which `source` names.
fn read_npy(info: &TensorInfo, file: &Path, source: String) -> Result<Expected> {
    Ok(Expected {
        name: info.name.clone(),
        value: feeds::load_npy(file, info.dtype).with_context(|| format!("--expect {source}"))?,
        source,
    })
}

/// A .npz bundle's arrays, each the expected value of the output of its key.
fn read_bundle(file: &Path, outputs: &Outputs) -> Result<Vec<Expected>> {
    let keys = Npz::open(file)
        .with_context(|| format!("--expect {}", file.display()))?
        .keys();
    let mut expected = Vec::new();
    for key in keys {
        let info = outputs
            .named(&key)
            .with_context(|| format!("--expect {}: array '{key}'", file.display()))?;
        let value =
            feeds::load_npz_array(file, &key, info.dtype).with_context(|| format!("--expect {}", file.display()))?;
        let source = format!("{}:{key}", file.display());
        expected.push(Expected {
            name: key,
            value,
            source,
        });
    }
    Ok(expected)
}

/// A folder's `files`, each the expected value of the output whose file
/// `--outputs` names so; a file of no output is refused.
fn read_folder(dir: &Path, files: &[PathBuf], outputs: &Outputs) -> Result<Vec<Expected>> {
    let written = npy_file_names(outputs.names.iter().copied());
    if let Some(stray) = files.iter().find(|file| !written.contains(file)) {
        bail!(
            "--expect {}: {} is the file of no output (the outputs' files, as --outputs names them: {})",
            dir.display(),
            stray.display(),
            quoted_list(written.iter().map(|name| name.display().to_string()))
        );
    }
    outputs
        .infos
        .iter()
        .zip(&written)
        .filter(|(_, file)| files.contains(file))
        .map(|(info, file)| {
            let path = dir.join(file);
            read_npy(info, &path, path.display().to_string())
        })
        .collect()
}

/// Refuses an expected value whose shape is not its output's `declared` one.
fn check_shape(expected: &Expected, declared: &[usize]) -> Result<()> {
    // A 0 is a dimension the engine does not know before the run.
    if !declared.contains(&0) && *declared != expected.value.shape {
        bail!(
            "--expect: output '{}' has shape {}, {} holds {}",
            expected.name,
            format_shape(declared),
            expected.source,
            format_shape(&expected.value.shape)
        );
    }
    Ok(())
}

/// Each expected value against the output of its name after the runs.
pub fn check_expectations(
    expected: Vec<Expected>,
    outputs: &[(String, HostTensor)],
    rules: &Rules,
) -> Result<Vec<ExpectReport>> {
    expected
        .into_iter()
        .map(|Expected { name, value, source }| {
            let actual = &outputs
                .iter()
                .find(|(output, _)| *output == name)
                .expect("checked against the model's outputs")
                .1;
            let criterion = rules.criterion(&name);
            let Some(comparison) = compare_values(actual.view(), value.view(), &criterion) else {
                bail!(
                    "--expect: output '{name}' has shape {}, {source} holds {}",
                    format_shape(&actual.shape),
                    format_shape(&value.shape)
                );
            };
            Ok(ExpectReport {
                name,
                file: source,
                err: comparison.err,
                stat_err: comparison.judged.filter(|_| criterion.judges_more_than_the_largest()),
                left_out: comparison.left_out,
                tolerance: criterion.tolerance,
                topk: comparison.topk,
                passed: comparison.passed,
                first_mismatch: comparison.first_mismatch,
            })
        })
        .collect()
}
