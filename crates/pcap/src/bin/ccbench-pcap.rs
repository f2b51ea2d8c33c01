//! ccbench-pcap: command-line helper over the streaming reader.
//!
//! * `ccbench-pcap stats FILE...` — one pass per file: frames, bytes, IPv4/TCP/UDP packets
//!   and per-5-tuple packet and byte counts, with the read speed, and the process's peak
//!   memory (JSON on stdout).
//! * `ccbench-pcap generate OUT --bytes N [--format pcap|pcapng] [--flows K] [--link raw|ethernet]`
//!   — a synthetic capture of about N bytes (full-size TCP segments with zero payload and
//!   their ACKs, K flows), for benchmarks and tests.
//!
//! Exit status 1 with a one-line message on a damaged capture (never a panic).

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use pcap::decode::{decode, Fields, ACK, PROTO_TCP, PROTO_UDP};
use pcap::reader::Reader;
use pcap::synth::{self, TcpSeg};
use pcap::writer::PcapngWriter;

fn die(msg: &str) -> ! {
    eprintln!("ccbench-pcap: {msg}");
    std::process::exit(1)
}

fn stats(files: &[String]) {
    let mut out = Vec::new();
    for path in files {
        let t0 = Instant::now();
        let f = std::fs::File::open(path).unwrap_or_else(|e| die(&format!("{path}: {e}")));
        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
        let mut rd = Reader::new(std::io::BufReader::with_capacity(1 << 20, f)).unwrap_or_else(|e| die(&format!("{path}: {e}")));
        let mut fl = Fields::default();
        let (mut frames, mut bytes, mut ipv4, mut tcp, mut udp) = (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut flows: HashMap<(u32, u32, u16, u16, u8), (u64, u64, u64)> = HashMap::new();
        let (mut first, mut last) = (u64::MAX, 0u64);
        loop {
            let p = match rd.next() {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) => die(&format!("{path}: {e}")),
            };
            frames += 1;
            bytes += p.orig_len as u64;
            first = first.min(p.ts_ns);
            last = last.max(p.ts_ns);
            if !decode(p.linktype, p.data, &mut fl) {
                continue;
            }
            ipv4 += 1;
            tcp += (fl.proto == PROTO_TCP) as u64;
            udp += (fl.proto == PROTO_UDP) as u64;
            let e = flows.entry((fl.src, fl.dst, fl.sport, fl.dport, fl.proto)).or_default();
            e.0 += 1;
            e.1 += fl.ip_len as u64;
            e.2 += fl.payload as u64;
        }
        let secs = t0.elapsed().as_secs_f64();
        let mut fv: Vec<_> = flows.into_iter().collect();
        fv.sort();
        let ip = |a: u32| format!("{}.{}.{}.{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
        let flows_json: Vec<String> = fv
            .iter()
            .map(|((s, d, sp, dp, pr), (n, b, pl))| {
                format!("{{\"src\":\"{}\",\"dst\":\"{}\",\"sport\":{sp},\"dport\":{dp},\"proto\":{pr},\"packets\":{n},\"ip_bytes\":{b},\"payload_bytes\":{pl}}}", ip(*s), ip(*d))
            })
            .collect();
        out.push(format!(
            "{{\"file\":{:?},\"file_bytes\":{size},\"frames\":{frames},\"frame_bytes\":{bytes},\"ipv4\":{ipv4},\"tcp\":{tcp},\"udp\":{udp},\
             \"first_ns\":{},\"last_ns\":{},\"seconds\":{secs:.6},\"mb_per_s\":{:.1},\"flows\":[{}]}}",
            path,
            if frames > 0 { first } else { 0 },
            last,
            size as f64 / 1e6 / secs.max(1e-9),
            flows_json.join(",")
        ));
    }
    // peak resident memory of this process (Linux), to show it does not grow with the file
    let hwm_kb = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    });
    let hwm = hwm_kb.map_or("null".to_string(), |k| k.to_string());
    let _ = writeln!(std::io::stdout(), "{{\"max_rss_kb\":{hwm},\"files\":[{}]}}", out.join(",\n"));
}

fn generate(args: &[String]) {
    let mut out = None;
    let (mut bytes, mut flows, mut ng, mut eth) = (1u64 << 30, 4u32, true, false);
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let val = || args.get(i + 1).cloned().unwrap_or_else(|| die(&format!("{a} needs a value")));
        match a {
            "--bytes" => {
                bytes = val().parse().unwrap_or_else(|_| die("--bytes takes an integer"));
                i += 1;
            }
            "--flows" => {
                flows = val().parse().unwrap_or_else(|_| die("--flows takes an integer"));
                i += 1;
            }
            "--format" => {
                ng = match val().as_str() {
                    "pcapng" => true,
                    "pcap" => false,
                    v => die(&format!("--format {v}: use pcap or pcapng")),
                };
                i += 1;
            }
            "--link" => {
                eth = match val().as_str() {
                    "ethernet" => true,
                    "raw" => false,
                    v => die(&format!("--link {v}: use raw or ethernet")),
                };
                i += 1;
            }
            _ if out.is_none() && !a.starts_with('-') => out = Some(a.to_string()),
            _ => die(&format!("unknown argument {a}")),
        }
        i += 1;
    }
    let out = out.unwrap_or_else(|| die("generate needs an output file"));
    let flows = flows.max(1);
    let f = std::fs::File::create(&out).unwrap_or_else(|e| die(&format!("{out}: {e}")));
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let linktype = if eth { pcap::LINKTYPE_ETHERNET } else { pcap::LINKTYPE_RAW };
    let mut ngw = None;
    if ng {
        let mut p = PcapngWriter::new(w, "ccbench-pcap generate", None).unwrap_or_else(|e| die(&e.to_string()));
        p.add_interface("gen0", None, linktype, 0).unwrap_or_else(|e| die(&e.to_string()));
        ngw = Some(p);
        w = BufWriter::new(std::fs::File::create("/dev/null").unwrap_or_else(|e| die(&e.to_string())));
    } else {
        let mut h = vec![];
        h.extend_from_slice(&0xA1B2_3C4Du32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&262144u32.to_le_bytes());
        h.extend_from_slice(&(linktype as u32).to_le_bytes());
        w.write_all(&h).unwrap_or_else(|e| die(&e.to_string()));
    }
    let mut pkt = Vec::with_capacity(2048);
    let (mut written, mut t, mut n) = (0u64, 1_700_000_000_000_000_000u64, 0u64);
    let mss = 1448u32;
    let mut seqs = vec![1u32; flows as usize];
    while written < bytes {
        let fl = (n % flows as u64) as usize;
        let data = n % 3 != 2; // two data segments per ACK
        pkt.clear();
        if eth {
            pkt.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
        }
        let (a, b) = (0x0a4d_0001 + fl as u32 * 2, 0x0a4d_0002 + fl as u32 * 2);
        let ts = Some(((t / 1_000_000) as u32, (t / 1_000_000) as u32 - 10));
        let seg = if data {
            let s = seqs[fl];
            seqs[fl] = s.wrapping_add(mss);
            TcpSeg { src: a, dst: b, ip_id: n as u16, sport: 40000 + fl as u16, dport: 10000 + fl as u16, seq: s, ack: 1, flags: ACK, window: 512, ts, payload: mss, ..Default::default() }
        } else {
            TcpSeg { src: b, dst: a, ip_id: n as u16, sport: 10000 + fl as u16, dport: 40000 + fl as u16, seq: 1, ack: seqs[fl], flags: ACK, window: 512, ts, ..Default::default() }
        };
        let total = synth::tcp(&mut pkt, &seg);
        pkt.resize(pkt.len() + seg.payload as usize, 0);
        let frame = if eth { total + 14 } else { total };
        match ngw.as_mut() {
            Some(p) => p.packet(0, t, &pkt, frame).unwrap_or_else(|e| die(&e.to_string())),
            None => {
                let mut h = [0u8; 16];
                h[0..4].copy_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
                h[4..8].copy_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
                h[8..12].copy_from_slice(&(pkt.len() as u32).to_le_bytes());
                h[12..16].copy_from_slice(&frame.to_le_bytes());
                w.write_all(&h).and_then(|_| w.write_all(&pkt)).unwrap_or_else(|e| die(&e.to_string()));
            }
        }
        written += pkt.len() as u64 + if ng { 32 } else { 16 };
        t += 12_000; // 1 Gbit/s of 1500-byte packets
        n += 1;
    }
    if let Some(mut p) = ngw {
        p.flush().unwrap_or_else(|e| die(&e.to_string()));
    }
    w.flush().unwrap_or_else(|e| die(&e.to_string()));
    drop(w);
    let size = std::fs::metadata(Path::new(&out)).map(|m| m.len()).unwrap_or(0);
    let _ = writeln!(std::io::stdout(), "{{\"file\":{out:?},\"packets\":{n},\"bytes\":{size}}}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("stats") if args.len() > 1 => stats(&args[1..]),
        Some("generate") => generate(&args[1..]),
        _ => {
            eprintln!("usage: ccbench-pcap stats FILE...\n       ccbench-pcap generate OUT [--bytes N] [--format pcap|pcapng] [--flows K] [--link raw|ethernet]");
            std::process::exit(2)
        }
    }
}
