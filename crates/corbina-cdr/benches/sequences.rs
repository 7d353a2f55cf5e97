//! Bulk sequence encode/decode: `sequence<octet>`, `sequence<double>` and a sequence of a
//! fixed-size struct, against a `memcpy` of the same bytes as the baseline.
//!
//! ```text
//! cargo bench -p corbina-cdr --bench sequences -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! Throughput is the payload (elements × wire size). Encode cases:
//! - `splice`: a fresh writer with the default splice threshold; large native-order blocks
//!   are referenced, not copied (the cost of producing the segment list for a vectored write).
//! - `copy_fresh`: splicing off, a fresh writer per message (allocation + growth + copy).
//! - `copy_reused`: splicing off, one writer cleared between messages (the buffer-pool case).
//!
//! After the run a table of GB/s and ratios to `memcpy` is printed from criterion's estimates.

use corbina_cdr::{ByteOrder, CdrContext, CdrDecode, CdrEncode, CdrReader, CdrWriter};
use criterion::{black_box, criterion_group, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

#[path = "../tests/common/bin_struct.rs"]
#[allow(dead_code)]
mod bin_struct;
use bin_struct::BinStruct;

const SIZES: [(usize, &str); 3] = [(1 << 10, "1KiB"), (64 << 10, "64KiB"), (1 << 20, "1MiB")];
const CTX: CdrContext = CdrContext::GIOP_1_2;
const SWAPPED: ByteOrder = match ByteOrder::NATIVE {
    ByteOrder::Big => ByteOrder::Little,
    ByteOrder::Little => ByteOrder::Big,
};

fn octets(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7) as u8).collect()
}

fn doubles(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64 * 0.25 - 3.0).collect()
}

fn structs(n: usize) -> Vec<BinStruct> {
    (0..n)
        .map(|i| BinStruct {
            s: i as i16,
            c: b'a' + (i % 26) as u8,
            l: (i as i32).wrapping_mul(-7919),
            o: i as u8,
            d: i as f64 * 1.5,
        })
        .collect()
}

fn encode_to_vec<T: CdrEncode + ?Sized>(v: &T, order: ByteOrder) -> Vec<u8> {
    let mut w = CdrWriter::with_byte_order(order, CTX);
    w.set_splice_threshold(usize::MAX);
    v.encode(&mut w).expect("encode");
    w.into_bytes()
}

fn baseline(c: &mut Criterion) {
    let mut g = c.benchmark_group("baseline");
    for (bytes, label) in SIZES {
        let src = octets(bytes);
        let mut dst = vec![0u8; bytes];
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function(BenchmarkId::new("memcpy", label), |b| {
            b.iter(|| dst.copy_from_slice(black_box(&src)))
        });
    }
    g.finish();
}

fn octet_seq(c: &mut Criterion) {
    let mut g = c.benchmark_group("octet_seq");
    for (bytes, label) in SIZES {
        let data = octets(bytes);
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function(BenchmarkId::new("encode_splice", label), |b| {
            b.iter(|| {
                let mut w = CdrWriter::new(CTX);
                w.write_octet_seq(black_box(&data)).expect("encode");
                black_box(w.segments().len())
            })
        });
        g.bench_function(BenchmarkId::new("encode_copy_fresh", label), |b| {
            b.iter(|| {
                let mut w = CdrWriter::new(CTX);
                w.set_splice_threshold(usize::MAX);
                w.write_octet_seq(black_box(&data)).expect("encode");
                black_box(w.into_bytes())
            })
        });
        let mut reused = CdrWriter::new(CTX);
        reused.set_splice_threshold(usize::MAX);
        g.bench_function(BenchmarkId::new("encode_copy_reused", label), |b| {
            b.iter(|| {
                reused.clear();
                reused.write_octet_seq(black_box(&data)).expect("encode");
                black_box(reused.owned_bytes().len())
            })
        });
        let wire = encode_to_vec(&data, ByteOrder::NATIVE);
        g.bench_function(BenchmarkId::new("decode_borrowed", label), |b| {
            b.iter(|| {
                let mut r = CdrReader::new(black_box(&wire), ByteOrder::NATIVE, CTX);
                black_box(r.read_octet_seq().expect("decode").len())
            })
        });
        g.bench_function(BenchmarkId::new("decode_vec", label), |b| {
            b.iter(|| {
                let mut r = CdrReader::new(black_box(&wire), ByteOrder::NATIVE, CTX);
                black_box(Vec::<u8>::decode(&mut r).expect("decode"))
            })
        });
    }
    g.finish();
}

fn double_seq(c: &mut Criterion) {
    let mut g = c.benchmark_group("double_seq");
    for (bytes, label) in SIZES {
        let data = doubles(bytes / 8);
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function(BenchmarkId::new("encode_splice", label), |b| {
            b.iter(|| {
                let mut w = CdrWriter::new(CTX);
                w.write_primitive_seq(black_box(&data)).expect("encode");
                black_box(w.segments().len())
            })
        });
        g.bench_function(BenchmarkId::new("encode_copy_fresh", label), |b| {
            b.iter(|| {
                let mut w = CdrWriter::new(CTX);
                w.set_splice_threshold(usize::MAX);
                w.write_primitive_seq(black_box(&data)).expect("encode");
                black_box(w.into_bytes())
            })
        });
        let mut reused = CdrWriter::new(CTX);
        reused.set_splice_threshold(usize::MAX);
        g.bench_function(BenchmarkId::new("encode_copy_reused", label), |b| {
            b.iter(|| {
                reused.clear();
                reused
                    .write_primitive_seq(black_box(&data))
                    .expect("encode");
                black_box(reused.owned_bytes().len())
            })
        });
        let mut reused_swap = CdrWriter::with_byte_order(SWAPPED, CTX);
        g.bench_function(BenchmarkId::new("encode_swap_reused", label), |b| {
            b.iter(|| {
                reused_swap.clear();
                reused_swap
                    .write_primitive_seq(black_box(&data))
                    .expect("encode");
                black_box(reused_swap.owned_bytes().len())
            })
        });
        let wire = encode_to_vec(&data, ByteOrder::NATIVE);
        g.bench_function(BenchmarkId::new("decode", label), |b| {
            b.iter(|| {
                let mut r = CdrReader::new(black_box(&wire), ByteOrder::NATIVE, CTX);
                black_box(r.read_primitive_seq::<f64>().expect("decode"))
            })
        });
        let mut out: Vec<f64> = Vec::new();
        g.bench_function(BenchmarkId::new("decode_into_reused", label), |b| {
            b.iter(|| {
                let mut r = CdrReader::new(black_box(&wire), ByteOrder::NATIVE, CTX);
                r.read_primitive_seq_into(&mut out).expect("decode");
                black_box(out.len())
            })
        });
        let wire_swapped = encode_to_vec(&data, SWAPPED);
        g.bench_function(BenchmarkId::new("decode_swap", label), |b| {
            b.iter(|| {
                let mut r = CdrReader::new(black_box(&wire_swapped), SWAPPED, CTX);
                black_box(r.read_primitive_seq::<f64>().expect("decode"))
            })
        });
    }
    g.finish();
}

fn struct_seq(c: &mut Criterion) {
    let mut g = c.benchmark_group("binstruct_seq");
    for (bytes, label) in SIZES {
        let n = bytes / BinStruct::BLOCK_SIZE;
        let data = structs(n);
        g.throughput(Throughput::Bytes((n * BinStruct::BLOCK_SIZE) as u64));
        for (name, order) in [("native", ByteOrder::NATIVE), ("swap", SWAPPED)] {
            let mut w = CdrWriter::with_byte_order(order, CTX);
            g.bench_function(
                BenchmarkId::new(format!("encode_block_{name}"), label),
                |b| {
                    b.iter(|| {
                        w.clear();
                        black_box(&data[..]).encode(&mut w).expect("encode");
                        black_box(w.owned_bytes().len())
                    })
                },
            );
        }
        let mut w = CdrWriter::new(CTX);
        g.bench_function(BenchmarkId::new("encode_fields", label), |b| {
            b.iter(|| {
                w.clear();
                let items = black_box(&data[..]);
                w.write_length(items.len()).expect("length");
                for item in items {
                    item.encode_fields(&mut w);
                }
                black_box(w.owned_bytes().len())
            })
        });
        g.bench_function(BenchmarkId::new("encode_block_fresh", label), |b| {
            b.iter(|| {
                let mut w = CdrWriter::new(CTX);
                black_box(&data[..]).encode(&mut w).expect("encode");
                black_box(w.into_bytes())
            })
        });
        for (name, order) in [("native", ByteOrder::NATIVE), ("swap", SWAPPED)] {
            let wire = encode_to_vec(&data[..], order);
            g.bench_function(
                BenchmarkId::new(format!("decode_block_{name}"), label),
                |b| {
                    b.iter(|| {
                        let mut r = CdrReader::new(black_box(&wire), order, CTX);
                        black_box(Vec::<BinStruct>::decode(&mut r).expect("decode"))
                    })
                },
            );
        }
        let wire = encode_to_vec(&data[..], ByteOrder::NATIVE);
        g.bench_function(BenchmarkId::new("decode_fields", label), |b| {
            b.iter(|| {
                let mut r = CdrReader::new(black_box(&wire), ByteOrder::NATIVE, CTX);
                let n = r.read_length(BinStruct::MIN_WIRE_SIZE).expect("length");
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(BinStruct::decode_fields(&mut r).expect("decode"));
                }
                black_box(v)
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = baseline, octet_seq, double_seq, struct_seq
}

/// Reads criterion's median estimate (ns) for `group/function/size`, if it ran.
fn median_ns(root: &std::path::Path, group: &str, function: &str, size: &str) -> Option<f64> {
    let path = root
        .join(group)
        .join(function)
        .join(size)
        .join("new/estimates.json");
    let json = std::fs::read_to_string(path).ok()?;
    let median = &json[json.find("\"median\"")?..];
    let est = &median[median.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = est.find([',', '}'])?;
    est[..end].trim().parse().ok()
}

/// Prints GB/s per case and the ratio to `memcpy` of the same size.
fn summary() {
    let root = std::env::var_os("CRITERION_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            // target/<profile>/deps/sequences-… → target/criterion
            let exe = std::env::current_exe().ok()?;
            Some(exe.parent()?.parent()?.parent()?.join("criterion"))
        });
    let Some(root) = root else { return };
    let cases: [(&str, &[&str]); 3] = [
        (
            "octet_seq",
            &[
                "encode_splice",
                "encode_copy_fresh",
                "encode_copy_reused",
                "decode_borrowed",
                "decode_vec",
            ],
        ),
        (
            "double_seq",
            &[
                "encode_splice",
                "encode_copy_fresh",
                "encode_copy_reused",
                "encode_swap_reused",
                "decode",
                "decode_into_reused",
                "decode_swap",
            ],
        ),
        (
            "binstruct_seq",
            &[
                "encode_block_native",
                "encode_block_swap",
                "encode_block_fresh",
                "encode_fields",
                "decode_block_native",
                "decode_block_swap",
                "decode_fields",
            ],
        ),
    ];
    let payload = |group: &str, bytes: usize| match group {
        "binstruct_seq" => bytes / BinStruct::BLOCK_SIZE * BinStruct::BLOCK_SIZE,
        _ => bytes,
    };
    println!("\nmedian GB/s (× memcpy of the same size)");
    print!("{:<36}", "case");
    for (_, label) in SIZES {
        print!("{label:>22}");
    }
    println!();
    let gbps = |bytes: usize, ns: f64| bytes as f64 / ns;
    print!("{:<36}", "baseline/memcpy");
    for (bytes, label) in SIZES {
        match median_ns(&root, "baseline", "memcpy", label) {
            Some(ns) => print!("{:>22}", format!("{:.1}", gbps(bytes, ns))),
            None => print!("{:>22}", "-"),
        }
    }
    println!();
    for (group, functions) in cases {
        for function in functions {
            print!("{:<36}", format!("{group}/{function}"));
            for (bytes, label) in SIZES {
                let base = median_ns(&root, "baseline", "memcpy", label);
                match median_ns(&root, group, function, label) {
                    Some(ns) => {
                        let rate = gbps(payload(group, bytes), ns);
                        let ratio = base.map(|b| gbps(bytes, b)).map(|b| rate / b);
                        let cell = match ratio {
                            Some(x) => format!("{rate:.2} ({x:.2}×)"),
                            None => format!("{rate:.2}"),
                        };
                        print!("{cell:>22}");
                    }
                    None => print!("{:>22}", "-"),
                }
            }
            println!();
        }
    }
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
