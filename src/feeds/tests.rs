use std::io::Write;
use std::path::{Path, PathBuf};

use ::image::{ImageBuffer, Luma, Rgb, Rgba};
use ndarray::{array, ArrayD};
use ndarray_npy::{NpzWriter, ReadNpyExt, WriteNpyExt};
use tempfile::TempDir;
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

use super::spec::FeedSource;
use super::*;

fn input(name: &str, shape: &[usize], dtype: DType) -> TensorInfo {
    TensorInfo {
        name: name.to_string(),
        shape: shape.to_vec(),
        dtype,
    }
}

fn data_input() -> Vec<TensorInfo> {
    vec![input("data", &[2, 3], DType::F32)]
}

fn two_inputs() -> Vec<TensorInfo> {
    vec![input("data", &[2, 3], DType::F32), input("label", &[2], DType::I32)]
}

fn options(seed: u64) -> FeedOptions {
    FeedOptions {
        seed,
        resize_input: false,
    }
}

fn feed(specs: &[&str], inputs: &[TensorInfo]) -> Result<Vec<Feed>> {
    feed_with(specs, inputs, &options(0))
}

fn feed_with(specs: &[&str], inputs: &[TensorInfo], options: &FeedOptions) -> Result<Vec<Feed>> {
    let specs: Vec<FeedSpec> = specs.iter().map(|spec| FeedSpec::parse(spec)).collect();
    resolve(&specs, inputs, options)
}

/// The only feed of a one-input model.
fn tensor(spec: &str, info: TensorInfo) -> Result<HostTensor> {
    let mut feeds = feed(&[spec], &[info])?;
    Ok(feeds.remove(0).tensor)
}

fn error(result: Result<impl std::fmt::Debug>) -> String {
    format!("{:#}", result.expect_err("expected an error"))
}

fn values(tensor: &HostTensor) -> Vec<f64> {
    tensor.values().collect()
}

fn write(dir: &TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A version 1.0 `.npy` file, written by hand as NumPy does (header padded to 64 bytes).
fn npy_bytes(descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|dim| format!("{dim}, ")).collect();
    let fortran = if fortran { "True" } else { "False" };
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': ({}), }}",
        dims.concat()
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

fn decode(bytes: &[u8], dtype: DType) -> Result<HostTensor> {
    let whole = crate::tensor::npy::read_whole(bytes, bytes.len() as u64, &|_| Ok(()))?;
    npy::decode_npy(&whole, dtype).map(|(tensor, _)| tensor)
}

// ---- grammar ----

#[test]
fn single_input_needs_no_name() {
    let feeds = feed(&["[[1,2,3],[4,5,6]]"], &data_input()).unwrap();
    assert_eq!(feeds[0].name, "data");
    assert_eq!(feeds[0].source, "[[1,2,3],[4,5,6]]");
    let feeds = feed(&["data:[[1,2,3],[4,5,6]]"], &data_input()).unwrap();
    assert_eq!(feeds[0].source, "[[1,2,3],[4,5,6]]");
}

#[test]
fn names_match_the_longest_input_name() {
    let inputs = vec![input("out", &[1], DType::F32), input("out:expect", &[1], DType::F32)];
    let feeds = feed(&["out:expect:[2]", "out:[1]"], &inputs).unwrap();
    assert_eq!(feeds.len(), 2);
    assert_eq!((feeds[0].name.as_str(), values(&feeds[0].tensor)), ("out", vec![1.0]));
    assert_eq!(
        (feeds[1].name.as_str(), values(&feeds[1].tensor)),
        ("out:expect", vec![2.0])
    );
}

#[test]
fn feeds_come_in_model_order_and_may_leave_inputs_out() {
    let feeds = feed(&["label:[1,2]", "data:0"], &two_inputs()).unwrap();
    let names: Vec<&str> = feeds.iter().map(|feed| feed.name.as_str()).collect();
    assert_eq!(names, ["data", "label"]);
    let feeds = feed(&["label:[1,2]"], &two_inputs()).unwrap();
    assert_eq!(feeds.len(), 1);
    assert_eq!(feeds[0].tensor.dtype, DType::I32);
}

#[test]
fn unknown_name_lists_the_inputs() {
    let message = error(feed(&["lable:[1]"], &two_inputs()));
    assert_eq!(
        message,
        "unknown input 'lable' in 'lable:[1]': the model's inputs are 'data', 'label'"
    );
}

#[test]
fn paths_and_literals_with_colons_are_not_names() {
    for spec in [
        "/tmp/no:such.npy",
        "./a:b.png",
        "#rand(0:1)",
        "[1:2]",
        "-1:2",
        "3:x.npy",
    ] {
        let message = error(feed(&[spec], &data_input()));
        assert!(!message.contains("unknown input"), "{spec}: {message}");
        assert!(message.starts_with("input 'data'"), "{spec}: {message}");
    }
}

#[test]
fn unnamed_spec_with_several_inputs_is_an_error() {
    let message = error(feed(&["x.npy"], &two_inputs()));
    assert_eq!(
        message,
        "'x.npy' names no input, but the model has several inputs ('data', 'label'): write NAME:SOURCE"
    );
    // A `#rand` feeds every input only when it is the only spec.
    assert!(error(feed(&["#rand(0,1)", "label:[1,2]"], &two_inputs())).contains("several inputs"));
}

#[test]
fn an_input_fed_twice_is_an_error() {
    let message = error(feed(&["data:0", "data:1"], &data_input()));
    assert_eq!(message, "input 'data' is fed twice: from '0' and from '1'");
}

#[test]
fn empty_specs_are_errors() {
    assert_eq!(error(feed(&[""], &data_input())), "empty input spec");
    assert_eq!(
        error(feed(&["data:"], &data_input())),
        "input 'data': no source after the input name in 'data:'"
    );
}

#[test]
fn unknown_sources_say_what_is_expected() {
    assert_eq!(
        error(feed(&["data:weights.txt"], &data_input())),
        "input 'data': can't tell what 'weights.txt' is: expected #rand(MIN,MAX[,SHAPE]), a .npy/.npz file, \
         an image (png, jpg, bmp, ppm, pgm) or a JSON literal"
    );
    assert!(error(feed(&["#normal(0,1)"], &data_input())).contains("can't tell what '#normal(0,1)' is"));
}

#[test]
fn sources_are_classified() {
    let inputs = two_inputs();
    let parse = |text: &str| FeedSpec::parse(text).reading(&inputs).unwrap().source.clone();
    assert!(matches!(parse("data:a/b.NPY"), FeedSource::Npy(path) if path == Path::new("a/b.NPY")));
    assert!(matches!(parse("data:x.npz"), FeedSource::Npz { key: None, .. }));
    assert!(matches!(
        parse("data:dir/x.NPZ:label"),
        FeedSource::Npz { path, key: Some(key) } if path == Path::new("dir/x.NPZ") && key == "label"
    ));
    for image in ["a.png", "a.JPG", "a.jpeg", "a.bmp", "a.ppm", "a.Pgm"] {
        assert!(
            matches!(parse(&format!("data:{image}")), FeedSource::Image(_)),
            "{image}"
        );
    }
    for json in ["3.5", "-1", "2e3", "[1, 2]", "[]"] {
        assert!(matches!(parse(&format!("data:{json}")), FeedSource::Json(_)), "{json}");
    }
    assert!(matches!(parse("data:#rand(0,1)"), FeedSource::Random(_)));
    let message = error(FeedSpec::parse("data:[1,").reading(&inputs).map(|_| ()));
    assert!(
        message.starts_with("input 'data': invalid JSON literal '[1,': "),
        "{message}"
    );
    let message = error(FeedSpec::parse("data:x.npz:").reading(&inputs).map(|_| ()));
    assert_eq!(message, "input 'data': no array key after ':' in 'x.npz:'");
}

/// The SOURCE of `input`'s default spec, as it reads for the input.
fn default_source(input: &TensorInfo) -> String {
    let spec = default_spec(input);
    let reading = spec.reading(std::slice::from_ref(input)).unwrap();
    reading.source_text.to_string()
}

#[test]
fn default_specs_follow_the_dtype() {
    assert_eq!(default_source(&input("x", &[1], DType::F16)), "#rand(0,1)");
    assert_eq!(default_source(&input("x", &[1], DType::U8)), "#rand(0,255)");
    assert_eq!(default_source(&input("x", &[1], DType::I64)), "#rand(0,255)");
}

/// The defaults are made for each input, not written out and read back:
/// names that hold `:` or look like a source get theirs all the same.
#[test]
fn every_input_gets_its_default_whatever_its_name() {
    let inputs = vec![
        input("a", &[1], DType::F32),
        input("a:b", &[2], DType::U8),
        input("#rand(0,1)", &[3], DType::I8),
    ];
    let defaults: Vec<FeedSpec> = inputs.iter().map(default_spec).collect();
    let feeds = resolve(&defaults, &inputs, &options(0)).unwrap();
    let fed: Vec<(&str, &str, &[usize])> = feeds
        .iter()
        .map(|feed| (feed.name.as_str(), feed.source.as_str(), feed.tensor.shape.as_slice()))
        .collect();
    assert_eq!(
        fed,
        [
            ("a", "#rand(0,1)", &[1][..]),
            ("a:b", "#rand(0,255)", &[2][..]),
            ("#rand(0,1)", "#rand(0,127)", &[3][..])
        ]
    );
}

// ---- expand_specs ----

#[test]
fn expands_semicolons_and_spec_files() {
    let dir = TempDir::new().unwrap();
    let file = write(&dir, "specs.txt", b"  a:x.npy  \n\n   \nb:#rand(0,1); c:[1]\r\n");
    let args = vec![
        "d:1; e:2".to_string(),
        format!("@{}", path_str(&file)),
        "f:3".to_string(),
    ];
    let specs = expand_specs(&args).unwrap();
    assert_eq!(specs, ["d:1", "e:2", "a:x.npy", "b:#rand(0,1)", "c:[1]", "f:3"]);
    assert_eq!(expand_specs(&["a:1;".to_string()]).unwrap(), ["a:1", ""]);
}

#[test]
fn spec_files_cannot_nest_or_be_missing() {
    let dir = TempDir::new().unwrap();
    let file = write(&dir, "specs.txt", b"a:1\n@other.txt\n");
    let message = error(expand_specs(&[format!("@{}", path_str(&file))]));
    assert!(
        message.ends_with("line 2: '@other.txt' cannot include another spec file"),
        "{message}"
    );
    let message = error(expand_specs(&["@/no/such/specs.txt".to_string()]));
    assert!(
        message.starts_with("cannot read spec file /no/such/specs.txt: "),
        "{message}"
    );
}

// ---- #rand ----

#[test]
fn rand_takes_the_declared_explicit_or_partial_shape() {
    let info = input("data", &[2, 3, 4], DType::F32);
    assert_eq!(tensor("#rand(0,1)", info.clone()).unwrap().shape, [2, 3, 4]);
    assert_eq!(tensor("#rand(0,1,5,6)", info.clone()).unwrap().shape, [5, 6]);
    assert_eq!(tensor("#rand(0,1,7,...)", info.clone()).unwrap().shape, [7, 3, 4]);
    assert_eq!(tensor("#rand(0,1,...)", info.clone()).unwrap().shape, [2, 3, 4]);
    let spaced = tensor(
        "#rand( -2.5 , 1e-3 , 8, 9 ,... )",
        input("data", &[1, 1, 2], DType::F32),
    )
    .unwrap();
    assert_eq!(spaced.shape, [8, 9, 2]);
    assert!(values(&spaced).iter().all(|&value| (-2.5..1e-3).contains(&value)));
}

#[test]
fn rand_values_are_uniform_and_cast_to_the_dtype() {
    let floats = values(&tensor("#rand(-3,5,1000)", input("x", &[1], DType::F32)).unwrap());
    assert!(floats.iter().all(|&value| (-3.0..5.0).contains(&value)));
    let mean = floats.iter().sum::<f64>() / floats.len() as f64;
    assert!((mean - 1.0).abs() < 0.5, "mean {mean}");
    let bytes = tensor("#rand(0,255,1000)", input("x", &[1], DType::U8)).unwrap();
    assert_eq!(bytes.dtype, DType::U8);
    assert!(values(&bytes)
        .iter()
        .all(|&value| value.fract() == 0.0 && value <= 254.0));
    assert_eq!(
        values(&tensor("#rand(2,2,3)", input("x", &[1], DType::I32)).unwrap()),
        [2.0; 3]
    );
}

#[test]
fn rand_spec_errors() {
    let info = input("data", &[2, 3], DType::F32);
    let cases = [
        ("#rand(1,0)", "MIN 1 is greater than MAX 0"),
        ("#rand(0,1,0)", "dimension '0' is not a positive integer"),
        ("#rand(0,1,2,)", "dimension '' is not a positive integer"),
        ("#rand(0,1,...,2)", "dimension '...' is not a positive integer"),
        ("#rand(0,x)", "MAX 'x' is not a finite number"),
        ("#rand(nan,1)", "MIN 'nan' is not a finite number"),
        ("#rand(0)", "MIN and MAX are required"),
        ("#rand(0,1", "not of the form #rand(...)"),
        (
            "#rand(0,1,1,2,3,...)",
            "3 dimensions before '...' but the input's shape (2, 3) has only 2",
        ),
        (
            "#rand(0,1,100000,100000,100000)",
            "shape (100000, 100000, 100000) of float32 is too large",
        ),
    ];
    for (spec, expected) in cases {
        let message = error(tensor(spec, info.clone()));
        assert!(message.starts_with("input 'data'"), "{spec}: {message}");
        assert!(message.contains(expected), "{spec}: {message}");
    }
}

/// Values the dtype cannot hold would saturate or overflow to inf silently.
#[test]
fn rand_ranges_must_fit_the_dtype() {
    for (spec, dtype, holds) in [
        ("#rand(0,256)", DType::U8, "uint8, which holds 0 to 255"),
        ("#rand(-1,1)", DType::U16, "uint16, which holds 0 to 65535"),
        ("#rand(0,255)", DType::I8, "int8, which holds -128 to 127"),
        (
            "#rand(-1e39,1)",
            DType::F32,
            "float32, which holds -3.4028234663852886e38 to",
        ),
        ("#rand(0,70000)", DType::F16, "float16, which holds -65504 to 65504"),
    ] {
        let message = error(tensor(spec, input("x", &[2], dtype)));
        assert!(
            message.contains(holds) && message.ends_with("narrow the range"),
            "{message}"
        );
    }
    let edges = tensor("#rand(-128,127,1000)", input("x", &[1], DType::I8)).unwrap();
    assert!(values(&edges).iter().all(|value| (-128.0..127.0).contains(value)));
    assert_eq!(default_source(&input("x", &[1], DType::I8)), "#rand(0,127)");
}

/// The files a spec may read are told before the model's inputs are known.
#[test]
fn source_files_are_every_file_a_spec_may_name() {
    let specs = [
        "data:x.npy",
        "b.npz:key",
        "img:cat.png",
        "#rand(0,1)",
        "y:[1,2]",
        "a:b:c.npy",
    ]
    .map(FeedSpec::parse);
    let files: Vec<String> = specs
        .iter()
        .flat_map(FeedSpec::files)
        .map(|path| path.display().to_string())
        .collect();
    assert_eq!(
        files,
        [
            "data:x.npy",
            "x.npy",
            "b.npz",
            "img:cat.png",
            "cat.png",
            "a:b:c.npy",
            "b:c.npy",
            "c.npy"
        ]
    );
}

/// A quick sweep (`scripts/hostile_sweep.py` runs a long one): random byte mutations of
/// an `.npy` file's header and of `#rand` specs are errors or values, never a panic.
#[test]
fn mutated_npy_headers_and_specs_never_panic() {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let original = npy_bytes("<f4", false, &[2, 3], &[0; 24]);
    let info = input("data", &[2, 3], DType::F32);
    for _ in 0..2000 {
        let mut bytes = original.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % 80) as usize;
            bytes[at] = next() as u8;
        }
        let _ = decode(&bytes, DType::F32);
        let spec: String = "#rand(-1,1,2,...)"
            .chars()
            .map(|c| {
                if next() % 8 == 0 {
                    char::from(
                        b"0123456789.,()e-+#x "
                            .get((next() % 20) as usize)
                            .copied()
                            .unwrap_or(b'1'),
                    )
                } else {
                    c
                }
            })
            .collect();
        let _ = tensor(&spec, info.clone());
    }
}

#[test]
fn rand_is_seeded_per_input() {
    let inputs = two_inputs();
    let run = |seed: u64, specs: &[&str]| -> Vec<Vec<u8>> {
        let feeds = feed_with(specs, &inputs, &options(seed)).unwrap();
        feeds.into_iter().map(|feed| feed.tensor.data).collect()
    };
    let forward = run(7, &["data:#rand(0,1)", "label:#rand(0,1000)"]);
    assert_eq!(forward, run(7, &["data:#rand(0,1)", "label:#rand(0,1000)"]));
    assert_eq!(forward, run(7, &["label:#rand(0,1000)", "data:#rand(0,1)"]));
    assert_ne!(forward, run(8, &["data:#rand(0,1)", "label:#rand(0,1000)"]));
    // Same seed, same spec, but another input name: another stream.
    let renamed = [input("data", &[4], DType::F32), input("other", &[4], DType::F32)];
    let feeds = feed(&["#rand(0,1)"], &renamed).unwrap();
    assert_eq!(feeds.len(), 2, "a lone unnamed #rand feeds every input");
    assert_ne!(feeds[0].tensor.data, feeds[1].tensor.data);
}

// ---- .npy ----

#[test]
fn npy_reads_every_numeric_dtype() {
    let cases: [(&str, Vec<u8>, Vec<f64>); 12] = [
        (
            "<f4",
            [1.5f32, -2.0].iter().flat_map(|v| v.to_le_bytes()).collect(),
            vec![1.5, -2.0],
        ),
        (
            "<f8",
            [0.25f64, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect(),
            vec![0.25, 3.0],
        ),
        (
            "<f2",
            [half::f16::from_f32(0.5), half::f16::from_f32(-8.0)]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            vec![0.5, -8.0],
        ),
        ("|i1", vec![0xff, 5], vec![-1.0, 5.0]),
        (
            "<i2",
            [-300i16, 7].iter().flat_map(|v| v.to_le_bytes()).collect(),
            vec![-300.0, 7.0],
        ),
        (
            "<i4",
            [-70000i32, 1].iter().flat_map(|v| v.to_le_bytes()).collect(),
            vec![-70000.0, 1.0],
        ),
        (
            "<i8",
            [-5i64, 1 << 40].iter().flat_map(|v| v.to_le_bytes()).collect(),
            vec![-5.0, (1u64 << 40) as f64],
        ),
        ("|u1", vec![200, 3], vec![200.0, 3.0]),
        (
            "<u2",
            [60000u16, 2].iter().flat_map(|v| v.to_le_bytes()).collect(),
            vec![60000.0, 2.0],
        ),
        (
            "<u4",
            [4_000_000_000u32, 9].iter().flat_map(|v| v.to_le_bytes()).collect(),
            vec![4e9, 9.0],
        ),
        (
            "<u8",
            [1u64 << 50, 4].iter().flat_map(|v| v.to_le_bytes()).collect(),
            vec![(1u64 << 50) as f64, 4.0],
        ),
        ("|b1", vec![1, 0], vec![1.0, 0.0]),
    ];
    for (descr, data, expected) in cases {
        let tensor = decode(&npy_bytes(descr, false, &[2], &data), DType::F32).unwrap();
        assert_eq!(tensor.shape, [2], "{descr}");
        assert_eq!(values(&tensor), expected, "{descr}");
    }
}

#[test]
fn npy_values_are_cast_to_the_input_dtype() {
    let data: Vec<u8> = [1.9f32, -1.9, 300.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let tensor = decode(&npy_bytes("<f4", false, &[3], &data), DType::U8).unwrap();
    assert_eq!((tensor.dtype, values(&tensor)), (DType::U8, vec![1.0, 0.0, 255.0]));
}

#[test]
fn npy_fortran_order_is_read_in_logical_order() {
    // [[1, 2, 3], [4, 5, 6]] stored column by column.
    let data: Vec<u8> = [1i32, 4, 2, 5, 3, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
    let tensor = decode(&npy_bytes("<i4", true, &[2, 3], &data), DType::I32).unwrap();
    assert_eq!(tensor.shape, [2, 3]);
    assert_eq!(values(&tensor), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let halves: Vec<u8> = [1.0f32, 4.0, 2.0, 5.0]
        .iter()
        .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
        .collect();
    let tensor = decode(&npy_bytes("<f2", true, &[2, 2], &halves), DType::F16).unwrap();
    assert_eq!(values(&tensor), [1.0, 2.0, 4.0, 5.0]);
}

#[test]
fn npy_big_endian() {
    let floats: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
    assert_eq!(
        values(&decode(&npy_bytes(">f4", false, &[2], &floats), DType::F32).unwrap()),
        [1.5, -2.0]
    );
    let ints: Vec<u8> = [-7i64, 9].iter().flat_map(|v| v.to_be_bytes()).collect();
    assert_eq!(
        values(&decode(&npy_bytes(">i8", false, &[2], &ints), DType::I64).unwrap()),
        [-7.0, 9.0]
    );
    let halves: Vec<u8> = half::f16::from_f32(0.75).to_be_bytes().to_vec();
    assert_eq!(
        values(&decode(&npy_bytes(">f2", false, &[1], &halves), DType::F32).unwrap()),
        [0.75]
    );
}

#[test]
fn npy_written_by_ndarray_npy_round_trips() {
    let mut bytes = Vec::new();
    array![[1.0f64, 2.0], [3.0, 4.0]].write_npy(&mut bytes).unwrap();
    let tensor = decode(&bytes, DType::F32).unwrap();
    assert_eq!(
        (tensor.shape.as_slice(), values(&tensor)),
        (&[2, 2][..], vec![1.0, 2.0, 3.0, 4.0])
    );
    let scalar = decode(&npy_bytes("<f4", false, &[], &2.5f32.to_le_bytes()), DType::F32).unwrap();
    assert_eq!((scalar.shape.len(), values(&scalar)), (0, vec![2.5]));
}

#[test]
fn npy_bad_files_are_errors() {
    let full: Vec<u8> = [1.0f32; 6].iter().flat_map(|v| v.to_le_bytes()).collect();
    let truncated = npy_bytes("<f4", false, &[2, 3], &full[..10]);
    assert_eq!(
        error(decode(&truncated, DType::F32)),
        "not a valid .npy file: the header's shape (2, 3) of '<f4' needs 24 bytes of data, the file has 10"
    );
    let huge = npy_bytes("<f8", false, &[1 << 40, 1 << 40], &[]);
    assert!(error(decode(&huge, DType::F32)).contains("needs too many bytes"));
    assert!(error(decode(&full[..20], DType::F32)).starts_with("not a valid .npy file: "));
    assert!(error(decode(&npy_bytes("<f4", false, &[2], &[])[..30], DType::F32)).starts_with("not a valid .npy file: "));
    let cases = [
        ("<c8", "complex dtype '<c8' is not supported"),
        ("|O", "object dtype '|O' is not supported"),
        ("<U3", "string dtype '<U3' is not supported"),
        ("<M8[ns]", "datetime dtype '<M8[ns]' is not supported"),
    ];
    for (descr, expected) in cases {
        let message = error(decode(&npy_bytes(descr, false, &[1], &[0; 16]), DType::F32));
        assert!(message.starts_with(expected), "{descr}: {message}");
    }
}

#[test]
fn npy_file_errors_name_the_input_and_source() {
    assert_eq!(
        error(feed(&["data:/no/such/x.npy"], &data_input())),
        "input 'data' from '/no/such/x.npy': cannot read .npy file /no/such/x.npy: No such file or directory (os error 2)"
    );
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "x.npy", &npy_bytes("<i2", false, &[2, 3], &[0; 12]));
    let feeds = feed(&[path_str(&path)], &data_input()).unwrap();
    assert_eq!(
        (feeds[0].tensor.shape.as_slice(), feeds[0].tensor.dtype),
        (&[2, 3][..], DType::F32)
    );
}

/// Headers that lie or break the parser: one-line errors, no panic in a dependency.
#[test]
fn npy_hostile_headers_are_one_line_errors() {
    // ndarray panics on non-zero dimensions that overflow, even with a zero one.
    let overflow = npy_bytes("<f4", false, &[0, 1 << 62, 4], &[]);
    assert!(error(decode(&overflow, DType::F32)).contains("needs too many bytes"));
    let mut syntax = npy_bytes("<f4", false, &[2], &[0; 8]);
    let at = syntax.windows(3).position(|w| w == b"(2,").unwrap();
    syntax[at + 2] = b'{';
    let message = error(decode(&syntax, DType::F32));
    assert!(
        message.starts_with("not a valid .npy file: ") && !message.contains('\n'),
        "{message}"
    );
    let mut long = npy_bytes("<f4", false, &[2], &[0; 8]);
    long[6..10].copy_from_slice(&[2, 0, 0xff, 0xff]); // version 2: a u32 header length
    assert!(error(decode(&long, DType::F32)).contains("a header of"));
}

#[test]
fn feeds_without_values_are_refused() {
    let dir = TempDir::new().unwrap();
    let scalar = write(&dir, "s.npy", &npy_bytes("<f4", false, &[], &2.5f32.to_le_bytes()));
    let message = error(feed(&[path_str(&scalar)], &data_input()));
    assert!(message.contains("a 0-d array"), "{message}");
    assert_eq!(
        error(feed(&["[]"], &data_input())),
        "input 'data' from '[]': shape (0,) holds no values"
    );
}

/// A feed far larger than its input is refused before it is made or read.
#[test]
fn feeds_far_larger_than_the_input_are_refused() {
    let info = input("data", &[1, 3, 16, 16], DType::F32);
    let message = error(tensor("#rand(0,1,1073741824)", info.clone()));
    assert!(message.contains("more than 64 times the 768"), "{message}");
    // A larger batch, or a feed within the floor, is fine.
    assert_eq!(tensor("#rand(0,1,64,...)", info.clone()).unwrap().len(), 64 * 768);
    assert_eq!(tensor("#rand(0,1,1024,1024)", info.clone()).unwrap().len(), 1 << 20);
    // An .npy whose header announces 1 GiB: refused from its header alone.
    let dir = TempDir::new().unwrap();
    let mut big = npy_bytes("<f4", false, &[1 << 28], &[]);
    let file = std::fs::File::create(dir.path().join("big.npy")).unwrap();
    file.set_len((big.len() + (1 << 30)) as u64).unwrap(); // sparse
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("big.npy"))
        .unwrap()
        .write_all(&big)
        .unwrap();
    big.clear();
    let message = error(tensor(path_str(&dir.path().join("big.npy")), info));
    assert!(message.contains("more than 64 times"), "{message}");
}

// ---- .npz ----

fn write_npz(dir: &TempDir, name: &str, compression: CompressionMethod) -> PathBuf {
    let path = dir.path().join(name);
    let options = SimpleFileOptions::default().compression_method(compression);
    let mut npz = NpzWriter::new_with_options(std::fs::File::create(&path).unwrap(), options);
    npz.add_array("data", &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]])
        .unwrap();
    npz.add_array("label", &array![7i64, 8]).unwrap();
    npz.add_array("extra", &ArrayD::<u8>::zeros(vec![1])).unwrap();
    npz.finish().unwrap();
    path
}

#[test]
fn npz_plain_and_compressed_by_key() {
    let dir = TempDir::new().unwrap();
    for (name, compression) in [
        ("plain.npz", CompressionMethod::Stored),
        ("small.npz", CompressionMethod::Deflated),
    ] {
        let path = write_npz(&dir, name, compression);
        let feeds = feed(&[&format!("data:{}:label", path_str(&path))], &data_input()).unwrap();
        assert_eq!(values(&feeds[0].tensor), [7.0, 8.0], "{name}");
        let feeds = feed(&[&format!("{}:data", path_str(&path))], &data_input()).unwrap();
        assert_eq!(values(&feeds[0].tensor), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "{name}");
    }
}

#[test]
fn npz_without_key_matches_input_names() {
    let dir = TempDir::new().unwrap();
    let path = write_npz(&dir, "all.npz", CompressionMethod::Deflated);
    let feeds = feed(&[path_str(&path)], &two_inputs()).unwrap();
    assert_eq!(feeds.len(), 2);
    assert_eq!(
        (feeds[1].name.as_str(), feeds[1].tensor.dtype, values(&feeds[1].tensor)),
        ("label", DType::I32, vec![7.0, 8.0])
    );
    // A named input takes the array of its own name.
    let feeds = feed(&[&format!("label:{}", path_str(&path))], &two_inputs()).unwrap();
    assert_eq!(values(&feeds[0].tensor), [7.0, 8.0]);
    let others = [input("a", &[1], DType::F32), input("b", &[1], DType::F32)];
    let message = error(feed(&[path_str(&path)], &others));
    assert!(message.ends_with("has no array named after an input of the model: its keys are 'data', 'label', 'extra', the model's inputs are 'a', 'b'"), "{message}");
    let message = error(feed(&[&format!("a:{}", path_str(&path))], &others));
    assert!(
        message.ends_with("no array named 'a' among 'data', 'label', 'extra': write PATH.npz:KEY"),
        "{message}"
    );
}

#[test]
fn npz_missing_key_lists_the_keys() {
    let dir = TempDir::new().unwrap();
    let path = write_npz(&dir, "x.npz", CompressionMethod::Stored);
    let spec = format!("data:{}:weights", path_str(&path));
    assert_eq!(
        error(feed(&[&spec], &data_input())),
        format!(
            "input 'data' from '{}:weights': no array 'weights' in the archive; its keys are 'data', 'label', 'extra'",
            path_str(&path)
        )
    );
}

#[test]
fn npz_single_array_and_bad_archives() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("one.npz");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    zip.start_file("arr_0.npy", SimpleFileOptions::default()).unwrap();
    zip.write_all(&npy_bytes("|u1", false, &[3], &[1, 2, 3])).unwrap();
    zip.finish().unwrap();
    assert_eq!(
        values(&feed(&[path_str(&path)], &data_input()).unwrap()[0].tensor),
        [1.0, 2.0, 3.0]
    );
    let bad = write(&dir, "bad.npz", b"PK\x03\x04 not really a zip");
    let message = error(feed(&[path_str(&bad)], &data_input()));
    assert!(message.contains("': not a valid .npz archive: "), "{message}");
}

// ---- images ----

/// A 2x2 RGB image: red, green / blue, white.
fn rgb_pixels() -> ImageBuffer<Rgb<u8>, Vec<u8>> {
    ImageBuffer::from_raw(2, 2, vec![255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]).unwrap()
}

fn image_tensor(path: &Path, shape: &[usize], resize_input: bool) -> Result<HostTensor> {
    let inputs = [input("img", shape, DType::F32)];
    let options = FeedOptions { seed: 0, resize_input };
    Ok(feed_with(&[path_str(path)], &inputs, &options)?.remove(0).tensor)
}

#[test]
fn images_are_bgr_in_nchw_or_nhwc() {
    let dir = TempDir::new().unwrap();
    for name in ["rgb.png", "rgb.bmp"] {
        let path = dir.path().join(name);
        rgb_pixels().save(&path).unwrap();
        let nchw = image_tensor(&path, &[1, 3, 2, 2], false).unwrap();
        assert_eq!(nchw.shape, [1, 3, 2, 2]);
        #[rustfmt::skip]
        let planes = [0.0, 0.0, 255.0, 255.0, /* blue */ 0.0, 255.0, 0.0, 255.0, /* green */ 255.0, 0.0, 0.0, 255.0 /* red */];
        assert_eq!(values(&nchw), planes, "{name}");
        let nhwc = image_tensor(&path, &[1, 2, 2, 3], false).unwrap();
        assert_eq!(nhwc.shape, [1, 2, 2, 3]);
        assert_eq!(values(&nhwc)[..6], [0.0, 0.0, 255.0, 0.0, 255.0, 0.0], "{name}");
        assert_eq!(image_tensor(&path, &[3, 2, 2], false).unwrap().shape, [3, 2, 2]);
        assert_eq!(image_tensor(&path, &[2, 2, 3], false).unwrap().shape, [2, 2, 3]);
    }
}

#[test]
fn one_channel_inputs_get_opencv_gray() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("rgb.png");
    rgb_pixels().save(&path).unwrap();
    let gray = image_tensor(&path, &[1, 1, 2, 2], false).unwrap();
    assert_eq!(gray.shape, [1, 1, 2, 2]);
    let luma = |b: u32, g: u32, r: u32| f64::from((b * 1868 + g * 9617 + r * 4899 + 8192) >> 14);
    assert_eq!(
        values(&gray),
        [luma(0, 0, 255), luma(0, 255, 0), luma(255, 0, 0), 255.0]
    );
    assert_eq!(values(&gray)[..3], [76.0, 150.0, 29.0]);
    assert_eq!(image_tensor(&path, &[1, 2, 2, 1], false).unwrap().shape, [1, 2, 2, 1]);
}

#[test]
fn grayscale_files_are_replicated_and_alpha_dropped() {
    let dir = TempDir::new().unwrap();
    let pgm = write(&dir, "gray.pgm", b"P5\n2 1\n255\n\x10\xf0");
    assert_eq!(
        values(&image_tensor(&pgm, &[1, 2, 1, 3], false).unwrap()),
        [16.0, 16.0, 16.0, 240.0, 240.0, 240.0]
    );
    let rgba: ImageBuffer<Rgba<u8>, Vec<u8>> = ImageBuffer::from_raw(1, 1, vec![10, 20, 30, 0]).unwrap();
    let path = dir.path().join("rgba.png");
    rgba.save(&path).unwrap();
    assert_eq!(
        values(&image_tensor(&path, &[1, 3, 1, 1], false).unwrap()),
        [30.0, 20.0, 10.0]
    );
    // 16-bit samples keep their high byte, as OpenCV does.
    let deep: ImageBuffer<Luma<u16>, Vec<u16>> = ImageBuffer::from_raw(1, 1, vec![0x12ff]).unwrap();
    let path = dir.path().join("deep.png");
    deep.save(&path).unwrap();
    assert_eq!(values(&image_tensor(&path, &[1, 3, 1, 1], false).unwrap()), [18.0; 3]);
}

#[test]
fn images_resize_bilinearly_to_the_input_size() {
    let dir = TempDir::new().unwrap();
    let ramp: ImageBuffer<Luma<u8>, Vec<u8>> = ImageBuffer::from_raw(2, 1, vec![0, 100]).unwrap();
    let path = dir.path().join("ramp.png");
    ramp.save(&path).unwrap();
    let wide = image_tensor(&path, &[1, 1, 3, 4], true).unwrap();
    assert_eq!(wide.shape, [1, 1, 3, 4]);
    // cv2.resize(np.array([[0, 100]], np.uint8), (4, 3)): half-pixel centres, edges clamped.
    assert_eq!(values(&wide), [0.0, 25.0, 75.0, 100.0].repeat(3));
    // Values from OpenCV 4.8: `cv2.resize(img, (5, 4))` of this 3x2 image, bit for bit.
    let small: ImageBuffer<Luma<u8>, Vec<u8>> = ImageBuffer::from_raw(3, 2, vec![12, 200, 37, 250, 91, 166]).unwrap();
    small.save(&path).unwrap();
    #[rustfmt::skip]
    let opencv = [
        12.0, 87.0, 200.0, 102.0, 37.0,
        72.0, 112.0, 173.0, 111.0, 69.0,
        191.0, 162.0, 118.0, 128.0, 134.0,
        250.0, 186.0, 91.0, 136.0, 166.0,
    ];
    assert_eq!(values(&image_tensor(&path, &[1, 3, 4, 5], true).unwrap())[..20], opencv);
    let big = dir.path().join("big.png");
    ImageBuffer::from_pixel(8, 6, Rgb([10u8, 20, 30])).save(&big).unwrap();
    let small = image_tensor(&big, &[1, 3, 3, 4], true).unwrap();
    assert_eq!(small.shape, [1, 3, 3, 4]);
    assert_eq!(values(&small)[..12], [30.0; 12]);
    // Without --resize-input an image keeps its own size.
    assert_eq!(image_tensor(&big, &[1, 3, 3, 4], false).unwrap().shape, [1, 3, 6, 8]);
}

#[test]
fn image_layout_errors() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("rgb.png");
    rgb_pixels().save(&path).unwrap();
    let message = error(image_tensor(&path, &[1, 4, 2, 2], false));
    assert!(
        message.contains("can't infer the image layout from shape (1, 4, 2, 2)"),
        "{message}"
    );
    let message = error(image_tensor(&path, &[4, 2], false));
    assert!(message.contains("cannot lay an image out as shape (4, 2)"), "{message}");
    let broken = write(&dir, "broken.png", b"\x89PNG\r\n\x1a\n garbage");
    let message = error(image_tensor(&broken, &[1, 3, 2, 2], false));
    assert!(message.contains("': cannot decode image: "), "{message}");
    // libjpeg's fatal errors unwind out of the decoder; they must become this error too.
    let broken = write(&dir, "broken.jpg", b"\xff\xd8\xff\xc0\x00\x02 garbage");
    let message = error(image_tensor(&broken, &[1, 3, 2, 2], false));
    assert!(message.contains("': cannot decode image: "), "{message}");
}

// ---- JSON ----

#[test]
fn json_lists_give_their_shape() {
    let info = input("x", &[9], DType::F32);
    let nested = tensor("[[1, 2.5], [-3, 4e1]]", info.clone()).unwrap();
    assert_eq!(
        (nested.shape.as_slice(), values(&nested)),
        (&[2, 2][..], vec![1.0, 2.5, -3.0, 40.0])
    );
    assert!(error(tensor("[[[]]]", info.clone())).ends_with("shape (1, 1, 0) holds no values"));
    let ints = tensor("[1.7, -1.7]", input("x", &[2], DType::I32)).unwrap();
    assert_eq!((ints.dtype, values(&ints)), (DType::I32, vec![1.0, -1.0]));
}

#[test]
fn json_number_fills_the_declared_shape() {
    let filled = tensor("3.5", input("x", &[2, 2], DType::F32)).unwrap();
    assert_eq!((filled.shape.as_slice(), values(&filled)), (&[2, 2][..], vec![3.5; 4]));
    assert_eq!(values(&tensor("-1", input("x", &[], DType::I8)).unwrap()), [-1.0]);
}

#[test]
fn json_errors_say_what_and_where() {
    let info = input("x", &[2], DType::F32);
    let cases = [
        (
            "[[1, 2], [3]]",
            "ragged list: element [1] has 1 elements where its siblings have 2",
        ),
        (
            "[[1, 2], 3]",
            "ragged list: element [1] is a number (3), expected a list like its siblings",
        ),
        (
            "[1, [2]]",
            "ragged list: element [1] is a list, expected a number like its siblings",
        ),
        ("[[1, \"a\"]]", "element [0][1] is a string (\"a\"), expected a number"),
        ("[true]", "element [0] is a bool (true), expected a number"),
        ("[[null]]", "element [0][0] is null, expected a number"),
        ("[{}]", "element [0] is an object, expected a number"),
    ];
    for (literal, expected) in cases {
        assert_eq!(
            error(tensor(literal, info.clone())),
            format!("input 'x' from '{literal}': {expected}")
        );
    }
}

/// Every image case of the fixtures, decoded here and by OpenCV when the
/// fixtures were made (`ref/<case>/input_<name>.npy`).
#[test]
fn images_decode_like_opencv() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("fixtures/manifest.json")).unwrap()).unwrap();
    let models = manifest["models"].as_array().unwrap();
    let mut checked = 0;
    for case in manifest["cases"].as_array().unwrap() {
        let spec = case["inputs"][0].as_str().unwrap();
        let path = spec.rsplit(':').next().unwrap();
        if !["png", "jpg", "bmp", "ppm", "pgm"]
            .iter()
            .any(|ext| path.ends_with(ext))
        {
            continue;
        }
        let model = models.iter().find(|m| m["file"] == case["model_file"]).unwrap();
        let declared = &model["inputs"][0];
        let info = input(
            declared["name"].as_str().unwrap(),
            &serde_json::from_value::<Vec<usize>>(declared["shape"].clone()).unwrap(),
            DType::U8,
        );
        let options = FeedOptions {
            seed: 0,
            resize_input: case["resize_input"].as_bool().unwrap(),
        };
        let ours = resolve(
            &[FeedSpec::parse(&format!("{}:{}", info.name, root.join(path).display()))],
            std::slice::from_ref(&info),
            &options,
        )
        .unwrap()
        .remove(0)
        .tensor;
        let reference_path = root
            .join(case["ref_dir"].as_str().unwrap())
            .join(format!("input_{}.npy", info.name));
        let reference = ArrayD::<u8>::read_npy(std::fs::File::open(&reference_path).unwrap()).unwrap();
        assert_eq!(ours.shape, reference.shape(), "{}", case["name"]);
        let worst = ours
            .data
            .iter()
            .zip(reference.iter())
            .map(|(a, b)| a.abs_diff(*b))
            .max()
            .unwrap();
        // JPEG too: decoded by libjpeg-turbo with OpenCV's settings.
        assert_eq!(worst, 0, "{}: pixels differ by up to {worst}", case["name"]);
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} image cases in the manifest");
}

/// An image is held to the feed's bound from its header, before it is
/// decoded: a 35 KB PNG of 6000x6000 fed to a (1,3,32,32) input was decoded
/// whole (2.2 GB at the peak). One that `--resize-input` resizes may have
/// up to 64 megapixels, also checked from its header.
#[test]
fn images_are_bounded_from_their_headers() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("big.png");
    ImageBuffer::from_pixel(1200, 1200, Rgb([1u8, 2, 3]))
        .save(&path)
        .unwrap();
    let message = error(image_tensor(&path, &[1, 3, 4, 4], false));
    assert!(
        message.contains("shape (1, 3, 1200, 1200) has 4320000 elements, more than 64 times the 48"),
        "{message}"
    );
    assert_eq!(image_tensor(&path, &[1, 3, 4, 4], true).unwrap().shape, [1, 3, 4, 4]);
    // Headers alone: no pixels follow, and none are needed to refuse them.
    let huge = write(&dir, "huge.ppm", b"P6\n9000 9000\n255\n");
    let message = error(image_tensor(&huge, &[1, 3, 4, 4], true));
    assert!(
        message.contains("the image is 9000x9000: more than the 64 megapixels --resize-input resizes"),
        "{message}"
    );
    let message = error(image_tensor(&huge, &[1, 3, 4, 4], false));
    assert!(message.contains("shape (1, 3, 9000, 9000) has"), "{message}");
    // A JPEG's frame header (SOF0: 9000x9000, three components) and scan header.
    let mut jpeg = b"\xff\xd8\xff\xc0\x00\x11\x08\x23\x28\x23\x28\x03\x01\x11\x00\x02\x11\x00\x03\x11\x00".to_vec();
    jpeg.extend_from_slice(b"\xff\xda\x00\x0c\x03\x01\x00\x02\x11\x03\x11\x00\x3f\x00\xff\xd9");
    let huge = write(&dir, "huge.jpg", &jpeg);
    let message = error(image_tensor(&huge, &[1, 3, 4, 4], false));
    assert!(message.contains("shape (1, 3, 9000, 9000) has"), "{message}");
}
