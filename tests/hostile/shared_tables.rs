//! Graphs whose operators share one table, list or vtable: FlatBuffers lets
//! many offsets point at one object, so a file of a few hundred KB can stand
//! for a graph whose reading never ends. Each is refused in one line by the
//! verifier's bound, before any reader expands it (the command runs under an
//! address-space limit that such an expansion would pass).

use super::*;

/// How the crafted operators share.
#[derive(Clone, Copy, Debug)]
enum Sharing {
    /// Every operator reads one list of var ids (`Operator.inputs`).
    Inputs,
    /// Every operator writes one list of var ids (`Operator.outputs`).
    Outputs,
    /// One operator table, its vtable as wide as a vtable can be.
    WideVtable,
}

fn push_u16(buf: &mut Vec<u8>, value: usize) {
    buf.extend(u16::try_from(value).unwrap().to_le_bytes());
}

fn push_u32(buf: &mut Vec<u8>, value: usize) {
    buf.extend(u32::try_from(value).unwrap().to_le_bytes());
}

/// An FBS v2 model whose `operators` entries all point at one operator table
/// (type `Elemwise`) that refers to a list of `list_len` var ids, shared as
/// `sharing` says; one middle tensor, no outputs. Laid out front to back, so
/// that every offset points forward as FlatBuffers' do.
fn crafted_graph(sharing: Sharing, operators: usize, list_len: usize) -> Vec<u8> {
    let list_field = match sharing {
        Sharing::Inputs | Sharing::WideVtable => 7,
        Sharing::Outputs => 8,
    };
    let mut fb = Vec::new();
    push_u32(&mut fb, 24); // the root table
    fb.extend(b"mgv2");
    // The root's vtable at 8: oprs (2), middle_tensors (3), output_vars_idx (4).
    for entry in [14, 16, 0, 0, 4, 8, 12, 0] {
        push_u16(&mut fb, entry);
    }
    push_u32(&mut fb, 16); // the root at 24, its vtable 16 bytes back
    push_u32(&mut fb, 76 - 28); // oprs at 76
    push_u32(&mut fb, 44 - 32); // middle tensors at 44
    push_u32(&mut fb, 40 - 36); // output vars at 40
    push_u32(&mut fb, 0); // 40: no output vars
    push_u32(&mut fb, 1); // 44: one middle tensor, at 60
    push_u32(&mut fb, 60 - 48);
    for entry in [6, 8, 4, 0] {
        push_u16(&mut fb, entry); // 52: its vtable: the name (0)
    }
    push_u32(&mut fb, 60 - 52);
    push_u32(&mut fb, 68 - 64); // the name at 68
    push_u32(&mut fb, 1);
    fb.extend(b"x\0\0\0");
    assert_eq!(fb.len(), 76);
    let vtable = 80 + 4 * operators;
    let fields: usize = match sharing {
        Sharing::WideVtable => 32_765,
        _ => list_field + 1,
    };
    let table = vtable + (4 + 2 * fields).next_multiple_of(4);
    push_u32(&mut fb, operators);
    for index in 0..operators {
        push_u32(&mut fb, table - (80 + 4 * index));
    }
    push_u16(&mut fb, 4 + 2 * fields);
    push_u16(&mut fb, 12);
    for field in 0..fields {
        push_u16(
            &mut fb,
            match field {
                0 => 4,
                _ if field == list_field => 8,
                _ => 0,
            },
        );
    }
    fb.resize(table, 0);
    push_u32(&mut fb, table - vtable);
    push_u32(&mut fb, 8); // the type string at table + 12
    push_u32(&mut fb, 20); // the list at table + 28
    push_u32(&mut fb, 8);
    fb.extend(b"Elemwise\0\0\0\0");
    push_u32(&mut fb, list_len);
    fb.resize(fb.len() + 4 * list_len, 0);
    let mut graph = Vec::new();
    push_u32(&mut graph, fb.len());
    graph.extend(fb);
    graph
}

/// Every command that reads the graph before any engine does refuses each
/// sharing in one line, within an address space that expanding it would pass.
#[test]
fn a_graph_of_shared_tables_is_refused_before_it_is_expanded() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (Sharing::Inputs, 100_000, 100_000),
        (Sharing::Outputs, 100_000, 100_000),
        (Sharing::WideVtable, 100_000, 1),
    ];
    for (sharing, operators, list_len) in cases {
        let bytes = crafted_graph(sharing, operators, list_len);
        assert!(bytes.len() < 1_000_000, "{sharing:?}: {} bytes", bytes.len());
        let model = write(dir.path(), &format!("{sharing:?}.mge"), &bytes);
        let model = model.to_str().unwrap();
        for command in [
            format!("info {model}"),
            format!("info --ops {model}"),
            format!("compare {model} {model} --structure"),
            format!("run {model} -q --iter 1"),
        ] {
            let script = format!("ulimit -v 2000000; exec \"$0\" {command}");
            let stderr = refused(&mut mge_in_shell(&script), "a crafted graph, not a dump");
            assert!(stderr.contains("is malformed"), "{sharing:?}, {command}: {stderr}");
        }
    }
}

/// The bound leaves room: a graph whose operators each have a list of their
/// own, as a dump has them, is read, however long the lists.
#[test]
fn a_graph_of_long_lists_of_its_own_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let model = write(dir.path(), "one.mge", &crafted_graph(Sharing::Inputs, 1, 1_000_000));
    let (stdout, _) = run_expecting(
        mge().args([
            "compare",
            model.to_str().unwrap(),
            model.to_str().unwrap(),
            "--structure",
        ]),
        0,
    );
    assert!(stdout.contains("same"), "{stdout}");
}
