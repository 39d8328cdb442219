//! The algorithm cache's files: kept whole, merged, checked, set aside.

use super::*;
use crate::runtime::Origin;

/// An engine cache of one category with `items` (key, value).
fn engine_cache(items: &[(&[u8], &[u8])]) -> Vec<u8> {
    let blob = |bytes: &[u8]| [&(bytes.len() as u32).to_le_bytes()[..], bytes].concat();
    let mut cache = 1u32.to_le_bytes().to_vec();
    cache.extend(blob(b"profile:plat=cpu:ConvolutionForward"));
    cache.extend((items.len() as u32).to_le_bytes());
    for (key, value) in items {
        cache.extend(blob(key));
        cache.extend(blob(value));
    }
    cache
}

/// A runtime that is a file of ours, as `--lite-lib` names one.
fn located(dir: &Path) -> Located {
    let path = dir.join("liblite.so");
    std::fs::write(&path, b"not a library").unwrap();
    Located {
        path,
        origin: Origin::Option,
        install: None,
    }
}

fn fast_run(threads: usize) -> NetworkOptions {
    NetworkOptions {
        algo_search: AlgoSearch::FastRun,
        threads: Some(threads),
        ..NetworkOptions::default()
    }
}

fn record(profiling_s: f64) -> ModelRecord {
    ModelRecord {
        profiling_s: Some(profiling_s),
        forward_ms: Some(10.0),
    }
}

#[test]
fn the_key_is_the_runtime_the_cpu_and_the_options_that_choose_algorithms() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = located(dir.path());
    let key = |options: &NetworkOptions| Key::new(&runtime, options).unwrap();
    assert_eq!(key(&fast_run(2)), key(&fast_run(2)));
    assert_ne!(key(&fast_run(2)), key(&fast_run(1)));
    let full = NetworkOptions {
        algo_search: AlgoSearch::FullRun,
        ..fast_run(2)
    };
    assert_ne!(key(&full), key(&fast_run(2)));
    let preprocessed = NetworkOptions {
        weight_preprocess: true,
        ..fast_run(2)
    };
    assert_ne!(key(&preprocessed), key(&fast_run(2)));
    // Recording the kernel sequence picks no algorithm: the same file.
    let recorded = NetworkOptions {
        record_comp_seq: Some(2),
        ..fast_run(2)
    };
    assert_eq!(key(&recorded), key(&fast_run(2)));
    // Another runtime file is another key.
    let other = dir.path().join("other.so");
    std::fs::write(&other, b"another library").unwrap();
    let elsewhere = Located {
        path: other,
        ..runtime.clone()
    };
    assert_ne!(Key::new(&elsewhere, &fast_run(2)).unwrap(), key(&fast_run(2)));
    // A layout changes the operators: the same file, another model record.
    let digest = model_digest(b"model");
    let nchw44 = NetworkOptions {
        layout: Some(crate::engine::GraphLayout::Nchw44),
        ..fast_run(2)
    };
    assert_ne!(model_identity(&digest, &nchw44), model_identity(&digest, &fast_run(2)));
    assert_eq!(
        model_identity(&digest, &recorded),
        model_identity(&digest, &fast_run(2))
    );
}

#[test]
fn what_is_written_is_read_back_and_merged_with_what_another_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let cache = AlgoCache::in_home(dir.path().to_path_buf());
    let key = Key::new(&located(dir.path()), &fast_run(2)).unwrap();
    assert!(matches!(cache.read(&key).unwrap(), Found::Nothing));
    assert_eq!(cache.usage(), (0, 0));
    cache
        .write(
            &key,
            &engine_cache(&[(b"conv1", b"algo A")]),
            Some(("one".into(), record(20.0))),
        )
        .unwrap();
    cache
        .write(
            &key,
            &engine_cache(&[(b"conv2", b"algo B")]),
            Some(("two".into(), record(3.0))),
        )
        .unwrap();
    let Found::Held(held) = cache.read(&key).unwrap() else {
        panic!("the cache holds what was written");
    };
    assert_eq!(
        held.engine_cache,
        engine_cache(&[(b"conv1", b"algo A"), (b"conv2", b"algo B")])
    );
    assert_eq!(held.models["one"], record(20.0));
    assert_eq!(held.models["two"], record(3.0));
    // A run that measured no profiling keeps the record of one that did.
    cache
        .write(&key, &engine_cache(&[]), Some(("one".into(), ModelRecord::default())))
        .unwrap();
    assert_eq!(cache.held(&key).unwrap().models["one"], record(20.0));
    let (files, bytes) = cache.usage();
    assert_eq!(files, 1);
    assert_eq!(bytes, std::fs::metadata(cache.file(&key)).unwrap().len());
    // The folder is the user's alone.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(cache.dir()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn a_damaged_or_foreign_file_is_set_aside_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let cache = AlgoCache::in_home(dir.path().to_path_buf());
    let runtime = located(dir.path());
    let key = Key::new(&runtime, &fast_run(2)).unwrap();
    cache
        .write(&key, &engine_cache(&[(b"conv1", b"algo A")]), None)
        .unwrap();
    let file = cache.file(&key);
    let whole = std::fs::read(&file).unwrap();
    let mut flipped = whole.clone();
    *flipped.last_mut().unwrap() ^= 1;
    let foreign = {
        let text = String::from_utf8_lossy(&whole).replace("threads=2", "threads=3");
        text.into_bytes()
    };
    for (bytes, why) in [
        (flipped, "damaged: its contents differ from what was written (SHA-256)"),
        (whole[..whole.len() - 3].to_vec(), "damaged: its contents differ"),
        (b"garbage".to_vec(), "damaged: it does not start as mge writes one"),
        (MAGIC.to_vec(), "damaged: its header is cut short"),
        (foreign, "foreign: written for another runtime, CPU or options"),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        assert!(cache.held(&key).is_none());
        let Found::SetAside(note) = cache.read(&key).unwrap() else {
            panic!("{why}: not set aside");
        };
        let aside = file.with_extension("algo.set-aside");
        assert!(
            note.starts_with(&format!("the algorithm cache {} is {why}", file.display()))
                && note.ends_with(&format!("set aside as {}; fast-run profiles again", aside.display())),
            "{note}"
        );
        assert_eq!(std::fs::read(&aside).unwrap(), bytes);
        assert!(matches!(cache.read(&key).unwrap(), Found::Nothing));
    }
}

/// Processes write at once under the lock: each writer's algorithms are kept.
#[test]
fn writers_at_once_keep_every_algorithm() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = located(dir.path());
    let key = Key::new(&runtime, &fast_run(2)).unwrap();
    std::thread::scope(|scope| {
        for writer in 0..8u8 {
            let (home, key) = (dir.path().to_path_buf(), key.clone());
            scope.spawn(move || {
                let cache = AlgoCache::in_home(home);
                let name = [b'k', writer];
                cache.write(&key, &engine_cache(&[(&name, b"v")]), None).unwrap();
            });
        }
    });
    let held = AlgoCache::in_home(dir.path().to_path_buf()).held(&key).unwrap();
    for writer in 0..8u8 {
        let name = [b'k', writer];
        assert!(
            held.engine_cache.windows(2).any(|window| window == name),
            "writer {writer}"
        );
    }
}
