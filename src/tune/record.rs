//! The record of a search: what each candidate measured, kept in the
//! algorithm cache's folder beside the algorithms its fast-run candidates
//! used, so that a later tune of the same model (the same runtime, CPU,
//! feeds, fixed options, candidates, output rules and budget) measures only
//! what decides: the baseline, then the record's winners against it back to
//! back. The search's figures only screen; the confirmation's rounds, taken
//! anew every time, decide the best.
//!
//! A record is used only where the baseline measured now takes within
//! `DRIFT` of what it took then: a load, a clock or feeds that changed since
//! make the search measure anew.
//! `--search-again` always does; the algorithm cache's opt-outs keep no record.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::candidate::Candidate;
use super::trial::TrialStatus;
use super::{Row, Skipped, Tuning, Untried};
use crate::options::EngineOption;
use crate::runner::rounds::Measured;

/// The baseline now may take this factor more or less than the record's
/// (median against median): beyond it, the machine or the feeds changed.
const DRIFT: f64 = 1.2;

/// No search, nor any trial of one, lasts longer than twice the longest
/// `--budget`: a time beyond it in a record was never measured.
const LONGEST_SECONDS: f64 = 2.0 * crate::cli::MAX_SECONDS;

/// A search as a record keeps it. A candidate is written as its options'
/// places in the tune's singles (part of the key), so that a record can
/// only ever name options this tune would try itself.
#[derive(Serialize, Deserialize)]
pub struct SearchRecord {
    /// What the record is valid for (`key`): a record under another is foreign.
    key: String,
    /// When the search ended, in seconds since the Unix epoch.
    ended_s: u64,
    /// What the search took, the baseline's calibration included.
    took: Duration,
    baseline: RowRecord,
    rows: Vec<RowRecord>,
    untried: Vec<UntriedRecord>,
}

#[derive(Serialize, Deserialize)]
struct RowRecord {
    options: Vec<usize>,
    status: TrialStatus,
    measured: Option<Measured>,
    err: Option<f64>,
    reason: Option<String>,
    took: Duration,
}

#[derive(Serialize, Deserialize)]
struct UntriedRecord {
    options: Vec<usize>,
    why: Skipped,
}

/// A record read back: the search's rows as the search keeps them.
pub struct RecordedSearch {
    pub baseline: Row,
    pub rows: Vec<Row>,
    pub untried: Vec<Untried>,
    /// How long ago the search ended, and what it took.
    pub age: Duration,
    pub took: Duration,
}

/// What a record is valid for: this build of mge, the runtime and CPU (the
/// algorithm cache's key of the baseline's options), the model, the
/// baseline's command line (its feeds and fixed options), the candidates,
/// the output rules and the budget, each as text.
pub fn key(
    algo_key: &str,
    model_digest: &str,
    baseline: &str,
    singles: &[EngineOption],
    rules: &str,
    budget: Duration,
) -> String {
    let singles: Vec<String> = singles.iter().map(|option| option.args().join(" ")).collect();
    format!(
        "mge={};{algo_key};model={model_digest};baseline={baseline};singles={};rules={rules};budget={}",
        env!("CARGO_PKG_VERSION"),
        singles.join(","),
        budget.as_secs_f64()
    )
}

impl SearchRecord {
    /// The record of `tuning`'s search, whose candidates are made of
    /// `singles`; `None` for a search that was itself read from a record.
    pub fn of(tuning: &Tuning, singles: &[EngineOption], key: String) -> Option<SearchRecord> {
        let super::Searched::Now { took, .. } = tuning.searched else {
            return None;
        };
        let places = |candidate: &Candidate| -> Option<Vec<usize>> {
            candidate
                .0
                .iter()
                .map(|option| singles.iter().position(|single| single == option))
                .collect()
        };
        let row = |row: &Row| -> Option<RowRecord> {
            Some(RowRecord {
                options: places(&row.candidate)?,
                status: row.status,
                measured: row.measured,
                err: row.err,
                reason: row.reason.clone(),
                took: row.took,
            })
        };
        let ended_s = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
        Some(SearchRecord {
            key,
            ended_s,
            took,
            baseline: row(&tuning.baseline)?,
            rows: tuning.rows.iter().map(row).collect::<Option<_>>()?,
            untried: tuning
                .untried
                .iter()
                .map(|untried| {
                    Some(UntriedRecord {
                        options: places(&untried.candidate)?,
                        why: untried.why,
                    })
                })
                .collect::<Option<_>>()?,
        })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a record is plain data")
    }

    /// The record in `bytes`, for `key` and `singles`: a damaged or foreign
    /// one (naming an option `singles` does not hold, or one twice; holding
    /// figures no run measures) says why.
    pub fn read(bytes: &[u8], key: &str, singles: &[EngineOption]) -> Result<RecordedSearch, String> {
        let record: SearchRecord =
            serde_json::from_slice(bytes).map_err(|_| "damaged: it is not a record mge writes".to_string())?;
        if record.key != key {
            return Err("foreign: written for another model, runtime, CPU or settings".into());
        }
        if !time_measured(record.took) {
            return Err(NOT_MEASURED.into());
        }
        let candidate = |places: &[usize]| -> Result<Candidate, String> {
            if places
                .iter()
                .enumerate()
                .any(|(at, place)| places[..at].contains(place))
            {
                return Err("damaged: it names an option twice in one candidate".into());
            }
            places
                .iter()
                .map(|place| singles.get(*place).cloned())
                .collect::<Option<_>>()
                .map(Candidate)
                .ok_or_else(|| "damaged: it names an option tune does not try".to_string())
        };
        let row = |row: RowRecord| -> Result<Row, String> {
            if !row.measured_sound() {
                return Err(NOT_MEASURED.into());
            }
            Ok(Row {
                candidate: candidate(&row.options)?,
                status: row.status,
                measured: row.measured,
                err: row.err,
                reason: row.reason,
                took: row.took,
            })
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |now| now.as_secs());
        Ok(RecordedSearch {
            baseline: row(record.baseline)?,
            rows: record.rows.into_iter().map(row).collect::<Result<_, _>>()?,
            untried: record
                .untried
                .into_iter()
                .map(|untried| {
                    Ok(Untried {
                        candidate: candidate(&untried.options)?,
                        why: untried.why,
                    })
                })
                .collect::<Result<_, String>>()?,
            age: Duration::from_secs(now.saturating_sub(record.ended_s)),
            took: record.took,
        })
    }
}

/// Why a record holding a figure no run gives is refused.
const NOT_MEASURED: &str = "damaged: it holds figures no run measures";

impl RowRecord {
    /// Whether every figure is one a trial could have measured: times
    /// positive (medians, means) or not negative (the rest) and within
    /// `LONGEST_SECONDS`, an interval in order, loads, spreads and errors
    /// not negative, nothing infinite or not a number.
    fn measured_sound(&self) -> bool {
        let not_negative = |value: Option<f64>| value.is_none_or(|value| value.is_finite() && value >= 0.0);
        let ms = |ms: f64| ms.is_finite() && (0.0..=LONGEST_SECONDS * 1e3).contains(&ms);
        let measured = self.measured.as_ref().is_none_or(|measured| {
            ms(measured.median_ms)
                && measured.median_ms > 0.0
                && ms(measured.mean_ms)
                && measured.mean_ms > 0.0
                && measured
                    .interval_ms
                    .is_none_or(|[low, high]| ms(low) && ms(high) && low <= high)
                && [measured.timing, measured.load, measured.window]
                    .into_iter()
                    .chain(measured.profiling)
                    .all(time_measured)
                && not_negative(measured.other_load_cores)
                && not_negative(measured.spread_percent)
        });
        measured && not_negative(self.err) && time_measured(self.took)
    }
}

/// Whether `time` is one a search or a trial could have taken.
fn time_measured(time: Duration) -> bool {
    time.as_secs_f64() <= LONGEST_SECONDS
}

impl RecordedSearch {
    /// Whether the search may be taken from this record, the baseline
    /// measured `now`: else why it is measured anew. The baseline is the
    /// probe: a machine whose load or clock changed since, or feeds that
    /// did, show in its time, and so does a record made under a load that
    /// is gone (or one that came).
    pub fn usable(&self, now: &Measured) -> Result<(), String> {
        let then = self
            .baseline
            .measured
            .as_ref()
            .ok_or("damaged: its baseline has no figures")?;
        let drift = now.median_ms / then.median_ms;
        if !(1.0 / DRIFT..=DRIFT).contains(&drift) {
            return Err(format!(
                "the baseline now takes {:.3} ms, {:.2}x the {:.3} ms it took then (beyond {DRIFT}x: the machine, its load or the feeds changed)",
                now.median_ms, drift, then.median_ms
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::scripted::{search, Outcome, Scripted};

    fn recorded_bytes(singles: &[EngineOption]) -> Vec<u8> {
        let mut machine = Scripted::new(1, |options, _| {
            Outcome::Runs(if options.iter().any(|option| option == "--fast-run") {
                30.0
            } else {
                60.0
            })
        });
        let tuning = search(&mut machine, &[], 120);
        SearchRecord::of(&tuning, singles, "key".into()).unwrap().to_bytes()
    }

    fn singles() -> Vec<EngineOption> {
        crate::tune::candidate::singles(&[], crate::engine::Device::Cpu, 2)
    }

    /// A record reads back only under its own key and with the singles it
    /// was written of; anything else is said, never followed.
    #[test]
    fn a_record_reads_back_only_as_it_was_written() {
        let singles = singles();
        let bytes = recorded_bytes(&singles);
        let read = SearchRecord::read(&bytes, "key", &singles).unwrap();
        assert!(read.rows.iter().any(|row| row.candidate.to_string() == "--fast-run"));
        assert!(read.age < Duration::from_secs(60));
        let why = |result: Result<RecordedSearch, String>| result.err().expect("refused");
        assert_eq!(
            why(SearchRecord::read(&bytes, "another", &singles)),
            "foreign: written for another model, runtime, CPU or settings"
        );
        assert_eq!(
            why(SearchRecord::read(b"{\"key\": 1}", "key", &singles)),
            "damaged: it is not a record mge writes"
        );
        // Fewer singles than the record's places: a place beyond them names nothing tune tries.
        assert_eq!(
            why(SearchRecord::read(&bytes, "key", &singles[..1])),
            "damaged: it names an option tune does not try"
        );
    }

    /// A record whose figures no trial could have measured (a median below
    /// or at zero, a time beyond any budget, an interval out of order, a
    /// load below zero), or whose candidate names an option twice, is
    /// damaged: never shown as measured, nor its rows taken as winners.
    #[test]
    fn a_record_of_figures_no_run_measures_is_damaged() {
        let singles = singles();
        let bytes = recorded_bytes(&singles);
        let written: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let most = serde_json::json!({"secs": u64::MAX, "nanos": 999_999_999});
        let edits: [(&str, serde_json::Value); 12] = [
            ("/rows/0/measured/median_ms", (-1.0).into()),
            ("/rows/0/measured/median_ms", 0.0.into()),
            ("/rows/0/measured/median_ms", 1e308.into()),
            ("/baseline/measured/median_ms", (-1.0).into()),
            ("/rows/0/measured/mean_ms", 0.0.into()),
            ("/rows/0/measured/interval_ms", serde_json::json!([2.0, 1.0])),
            ("/rows/0/measured/other_load_cores", (-1.0).into()),
            ("/rows/0/measured/spread_percent", (-1e308).into()),
            ("/rows/0/measured/timing", most.clone()),
            ("/rows/0/err", (-1.0).into()),
            ("/rows/0/took", most.clone()),
            ("/took", most),
        ];
        for (pointer, value) in edits {
            let mut record = written.clone();
            *record.pointer_mut(pointer).expect(pointer) = value.clone();
            let edited = serde_json::to_vec(&record).unwrap();
            assert_eq!(
                SearchRecord::read(&edited, "key", &singles).err().as_deref(),
                Some("damaged: it holds figures no run measures"),
                "{pointer} = {value}"
            );
        }
        let mut record = written;
        let place = record.pointer("/rows/0/options/0").unwrap().clone();
        *record.pointer_mut("/rows/0/options").unwrap() = serde_json::json!([place, place]);
        assert_eq!(
            SearchRecord::read(&serde_json::to_vec(&record).unwrap(), "key", &singles)
                .err()
                .as_deref(),
            Some("damaged: it names an option twice in one candidate")
        );
    }

    /// The key holds every setting that changes what a search finds.
    #[test]
    fn the_key_changes_with_every_setting() {
        let singles = singles();
        let budget = Duration::from_secs(120);
        let base = key("algo", "model", "mge run m.mge", &singles, "rules", budget);
        let others = [
            key("algo2", "model", "mge run m.mge", &singles, "rules", budget),
            key("algo", "model2", "mge run m.mge", &singles, "rules", budget),
            key("algo", "model", "mge run m.mge --seed=1", &singles, "rules", budget),
            key("algo", "model", "mge run m.mge", &singles[1..], "rules", budget),
            key("algo", "model", "mge run m.mge", &singles, "rules2", budget),
            key("algo", "model", "mge run m.mge", &singles, "rules", budget * 2),
        ];
        assert!(others.iter().all(|other| *other != base));
    }
}
