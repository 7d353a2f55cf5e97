//! Drives the value decoder (`corbina_cdr::value`) two ways, chosen by the first octet:
//! - a program of reads taken from the input (state members, nested values, skips, early ends
//!   that truncate) over hostile bytes: every call must return Ok or Err, never panic, loop or
//!   allocate without bound;
//! - a graph of linked values built from the input (sharing, cycles, chunked or not) written
//!   with `ValueOutput` and read back with `ValueInput`: it must arrive with the same shape.
#![no_main]

use std::sync::{Arc, Mutex};

use corbina_cdr::value::{ValueInput, ValueOutput, ValueStart, WriteHeader, WriteIds};
use corbina_cdr::{ByteOrder, CdrContext, CdrReader, CdrWriter, Result};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [mode, rest @ ..] = data else { return };
    let order = ByteOrder::from_flag(*mode);
    if mode & 2 == 0 {
        let [nops, rest @ ..] = rest else { return };
        let nops = usize::from(*nops).min(rest.len());
        let (ops, stream) = rest.split_at(nops);
        let mut r = CdrReader::new(stream, order, CdrContext::GIOP_1_2).with_max_depth(64);
        let mut input = ValueInput::new();
        let mut ops = ops.iter().copied();
        while let Some(op) = ops.next() {
            let before = r.position();
            if read_program(&mut input, &mut r, op, &mut ops).is_err() || r.position() == before {
                break;
            }
        }
    } else {
        round_trip(order, rest);
    }
});

fn read_program(
    input: &mut ValueInput,
    r: &mut CdrReader<'_>,
    first: u8,
    ops: &mut impl Iterator<Item = u8>,
) -> Result<()> {
    let at = r.position();
    match input.read_value(r)? {
        ValueStart::Null => {}
        ValueStart::Indirection { target } => {
            let _ = input.resolve(target, at);
        }
        ValueStart::Value(h) => {
            let _ = h.repository_ids.iter().count();
            if first & 1 != 0 {
                input.register(h.position, Arc::new(()));
            }
            while let Some(op) = ops.next() {
                match op % 8 {
                    0 => {
                        input.begin_member(r)?;
                        r.read_long()?;
                    }
                    1 => {
                        input.begin_member(r)?;
                        r.read_string()?;
                    }
                    2 => {
                        input.begin_member(r)?;
                        r.read_octet()?;
                    }
                    3 => read_program(input, r, op, ops)?,
                    4 => drop(input.skip_value(r)?),
                    // Arrays, which a peer may split over chunks between elements.
                    5 => {
                        input.begin_member(r)?;
                        r.read_primitive_seq::<i32>()?;
                    }
                    6 => {
                        input.begin_member(r)?;
                        r.read_double()?;
                    }
                    _ => break,
                }
            }
            input.end_value(r)?;
        }
    }
    Ok(())
}

#[derive(Default)]
struct Node {
    id: Mutex<u8>,
    next: Mutex<Option<Arc<Node>>>,
}

const ID: &str = "IDL:Fuzz/Node:1.0";
const IDS: [&str; 2] = [ID, "IDL:Fuzz/Base:1.0"];

fn write_node(
    out: &mut ValueOutput,
    w: &mut CdrWriter<'_>,
    n: Option<&Arc<Node>>,
    header: &WriteHeader<'_>,
) -> Result<()> {
    let Some(n) = n else { return out.write_null(w) };
    if out.begin_value(w, Arc::as_ptr(n) as usize, header)? {
        out.begin_member(w)?;
        w.write_octet(*n.id.lock().unwrap());
        let next = n.next.lock().unwrap().clone();
        write_node(out, w, next.as_ref(), header)?;
        out.end_value(w)?;
    }
    Ok(())
}

fn read_node(input: &mut ValueInput, r: &mut CdrReader<'_>) -> Result<Option<Arc<Node>>> {
    let at = r.position();
    Ok(match input.read_value(r)? {
        ValueStart::Null => None,
        ValueStart::Indirection { target } => {
            Some(input.resolve(target, at)?.downcast::<Node>().expect("a node"))
        }
        ValueStart::Value(h) => {
            assert_eq!(h.repository_ids.most_derived(), Some(ID));
            let n = Arc::new(Node::default());
            input.register(h.position, n.clone());
            input.begin_member(r)?;
            *n.id.lock().unwrap() = r.read_octet()?;
            *n.next.lock().unwrap() = read_node(input, r)?;
            input.end_value(r)?;
            Some(n)
        }
    })
}

fn round_trip(order: ByteOrder, spec: &[u8]) {
    let [flags, links @ ..] = spec else { return };
    // Up to 200 nodes: a chain deeper than the reader's limit must fail cleanly, not recurse.
    let links = &links[..links.len().min(200)];
    let nodes: Vec<Arc<Node>> = (0..links.len())
        .map(|i| Arc::new(Node { id: Mutex::new(i as u8), next: Mutex::new(None) }))
        .collect();
    for (n, &l) in nodes.iter().zip(links) {
        let to = usize::from(l);
        *n.next.lock().unwrap() = nodes.get(to).cloned();
    }
    let header = match flags % 4 {
        0 => WriteHeader::single(ID),
        1 => WriteHeader { chunked: true, ..WriteHeader::single(ID) },
        2 => WriteHeader::truncatable(&IDS),
        _ => WriteHeader { repository_ids: WriteIds::List(&IDS), codebase: Some("x"), chunked: true },
    };
    let mut w = CdrWriter::with_byte_order(order, CdrContext::GIOP_1_2);
    let mut out = ValueOutput::new();
    let roots = nodes.iter().step_by(usize::from(flags >> 2) + 1);
    for n in roots.clone() {
        write_node(&mut out, &mut w, Some(n), &header).unwrap();
    }
    let bytes = w.into_bytes();
    let mut r = CdrReader::new(&bytes, order, CdrContext::GIOP_1_2).with_max_depth(64);
    let mut input = ValueInput::new();
    let mut got = Vec::new();
    for _ in roots.clone() {
        match read_node(&mut input, &mut r) {
            Ok(n) => got.push(n.expect("not null")),
            Err(e) => {
                // Only a graph nested deeper than the reader's limit may fail.
                assert!(matches!(e, corbina_cdr::MarshalError::NestingTooDeep { .. }), "{e}");
                break;
            }
        }
    }
    if got.len() == roots.clone().count() {
        r.expect_end().unwrap();
    }
    // Same shape: following `next` from each root visits the same ids, and two roots that
    // share a node receive one node.
    for (sent, recv) in roots.zip(&got) {
        let (mut a, mut b) = (Some(sent.clone()), Some(recv.clone()));
        for _ in 0..nodes.len() + 1 {
            match (a, b) {
                (Some(x), Some(y)) => {
                    assert_eq!(*x.id.lock().unwrap(), *y.id.lock().unwrap());
                    a = x.next.lock().unwrap().clone();
                    b = y.next.lock().unwrap().clone();
                }
                (None, None) => break,
                _ => panic!("shapes differ"),
            }
        }
    }
    // Break the cycles so that the graphs are freed (the leak checker is on).
    for n in nodes.iter().chain(&got) {
        let mut cur = Some(n.clone());
        while let Some(c) = cur {
            cur = c.next.lock().unwrap().take();
        }
    }
}
