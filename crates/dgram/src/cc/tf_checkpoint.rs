//! A reader of TensorFlow's V2 checkpoints ("tensor bundles"), without TensorFlow: the float32
//! tensors of a checkpoint by name, for Indigo's trained policy (`indigo.rs`).
//!
//! A checkpoint `PREFIX` is two kinds of file (TensorFlow `core/util/tensor_bundle/
//! tensor_bundle.{h,cc}`, `core/protobuf/tensor_bundle.proto`):
//!
//! - `PREFIX.index`, a LevelDB-format sorted table (LevelDB `doc/table_format.md`; TensorFlow's
//!   port in `core/lib/io/format.cc`, `block.cc`, `table.cc`) from tensor names to
//!   `BundleEntryProto` { dtype = 1, shape = 2 (TensorShapeProto: dim = 2 { size = 1 }),
//!   shard_id = 3, offset = 4, size = 5, crc32c = 6 (fixed32), slices = 7 }; the empty key holds
//!   `BundleHeaderProto` { num_shards = 1, endianness = 2 (0 little, 1 big), version = 3 }.
//!   The table ends in a 48-byte footer: the metaindex block's and the index block's handles
//!   (varint offset, varint size each), zero padding to 40 bytes, and the magic number
//!   0xdb4775248b80fb57 as a little-endian u64. The index block's values are the handles of
//!   the data blocks. A block is entries — varint bytes shared with the previous key, varint
//!   bytes not shared, varint value length, the key's unshared bytes, the value — then the
//!   u32 offsets of the restart points (entries stored with their whole key) and their u32
//!   count; after the block comes a 5-byte trailer: the compression type (0 = none, what
//!   TensorFlow writes for bundles) and the masked CRC-32C of the block and that byte.
//! - `PREFIX.data-SSSSS-of-NNNNN`, the tensors' bytes: an entry's `size` bytes at `offset` of
//!   shard `shard_id`, float32 little-endian in row-major order, with the masked CRC-32C of
//!   those bytes in `crc32c`.
//!
//! Both checksums are verified (the files are small). Errors name the file and what is wrong.
//! Not read: compressed blocks, partitioned (sliced) tensors, big-endian bundles; entries of
//! other types than float32 (`DT_FLOAT` = 1) are skipped.

use super::proto::{Reader, Val};
use std::collections::BTreeMap;

const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
const FOOTER: usize = 48;
const DT_FLOAT: u64 = 1;

/// A float32 tensor: its shape and its values in row-major order.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

/// CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), as LevelDB and TensorFlow use.
pub fn crc32c(data: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 { 0x82f6_3b78 ^ (c >> 1) } else { c >> 1 };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    !data.iter().fold(!0u32, |c, &b| TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8))
}

/// LevelDB's masking of a stored CRC (rotate right by 15, add a constant).
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// The checkpoint prefix a user's path names: the prefix itself (`…/model`, as TensorFlow's
/// `Saver.restore` takes it) or its `.index` file.
pub fn prefix_of(path: &str) -> Result<String, String> {
    if let Some(p) = path.strip_suffix(".index") {
        if std::path::Path::new(path).is_file() {
            return Ok(p.to_string());
        }
    }
    if std::path::Path::new(&format!("{path}.index")).is_file() {
        return Ok(path.to_string());
    }
    Err(format!("{path:?} is not a TensorFlow checkpoint: neither it (an .index file) nor {path}.index exists"))
}

/// A table's (key, value) rows.
type Rows = Vec<(Vec<u8>, Vec<u8>)>;

#[derive(Clone, Copy)]
struct Handle {
    offset: usize,
    size: usize,
}

fn handle(r: &mut Reader) -> Result<Handle, String> {
    let offset = usize::try_from(r.varint()?).map_err(|_| "block offset beyond memory")?;
    let size = usize::try_from(r.varint()?).map_err(|_| "block size beyond memory")?;
    Ok(Handle { offset, size })
}

/// A block's contents, its trailer checked.
fn block<'a>(file: &'a [u8], h: Handle, what: &str) -> Result<&'a [u8], String> {
    let end = h.offset.checked_add(h.size).filter(|e| e.checked_add(5).is_some_and(|t| t <= file.len()));
    let end = end.ok_or_else(|| format!("the {what} block ({} bytes at {}) lies beyond the file's end", h.size, h.offset))?;
    let (contents, kind) = (&file[h.offset..end], file[end]);
    let stored = u32::from_le_bytes(file[end + 1..end + 5].try_into().unwrap());
    if mask(crc32c(&file[h.offset..end + 1])) != stored {
        return Err(format!("the {what} block at byte {} fails its CRC-32C check (corrupt file)", h.offset));
    }
    if kind != 0 {
        return Err(format!("the {what} block is compressed (type {kind}); only uncompressed tables are read"));
    }
    Ok(contents)
}

/// A block's (key, value) entries in order, keys rebuilt from their shared prefixes.
fn entries(b: &[u8], what: &str) -> Result<Rows, String> {
    let bad = |e: &str| format!("the {what} block is malformed: {e}");
    let n = b.len().checked_sub(4).map(|i| u32::from_le_bytes(b[i..].try_into().unwrap()) as usize);
    let n = n.ok_or_else(|| bad("shorter than its restart count"))?;
    let limit = n.checked_mul(4).and_then(|r| b.len().checked_sub(4 + r)).ok_or_else(|| bad("restart array beyond the block"))?;
    let mut r = Reader::new(&b[..limit]);
    let (mut out, mut key): (Rows, Vec<u8>) = (Vec::new(), Vec::new());
    while !r.at_end() {
        let shared = r.varint().map_err(|e| bad(&e))? as usize;
        let unshared = r.varint().map_err(|e| bad(&e))? as usize;
        let vlen = r.varint().map_err(|e| bad(&e))? as usize;
        if shared > key.len() {
            return Err(bad("a key shares more bytes than the previous key has"));
        }
        let rest = r.rest();
        let (k, v) = unshared
            .checked_add(vlen)
            .filter(|t| *t <= rest.len())
            .map(|_| (&rest[..unshared], &rest[unshared..unshared + vlen]))
            .ok_or_else(|| bad("an entry runs past the block's end"))?;
        key.truncate(shared);
        key.extend_from_slice(k);
        out.push((key.clone(), v.to_vec()));
        r.skip(unshared + vlen);
    }
    Ok(out)
}

/// Every (key, value) of a sorted-table file, in key order.
fn table(file: &[u8]) -> Result<Rows, String> {
    if file.len() < FOOTER {
        return Err(format!("{} bytes is shorter than a table's {FOOTER}-byte footer (truncated?)", file.len()));
    }
    let foot = &file[file.len() - FOOTER..];
    if u64::from_le_bytes(foot[40..].try_into().unwrap()) != MAGIC {
        return Err("no table magic number at the end (not a TensorFlow checkpoint index, or truncated)".into());
    }
    let mut r = Reader::new(&foot[..40]);
    let _meta = handle(&mut r).map_err(|e| format!("footer: {e}"))?;
    let index = handle(&mut r).map_err(|e| format!("footer: {e}"))?;
    let mut out = Vec::new();
    for (_, v) in entries(block(file, index, "index")?, "index")? {
        let h = handle(&mut Reader::new(&v)).map_err(|e| format!("index entry: {e}"))?;
        out.extend(entries(block(file, h, "data")?, "data")?);
    }
    Ok(out)
}

struct Entry {
    dtype: u64,
    shape: Vec<usize>,
    shard: u64,
    offset: usize,
    size: usize,
    crc: Option<u32>,
    sliced: bool,
}

fn entry(b: &[u8]) -> Result<Entry, String> {
    let mut e = Entry { dtype: 0, shape: Vec::new(), shard: 0, offset: 0, size: 0, crc: None, sliced: false };
    let mut r = Reader::new(b);
    while let Some((f, v)) = r.next()? {
        match (f, v) {
            (1, Val::Varint(x)) => e.dtype = x,
            (2, Val::Bytes(s)) => {
                let mut d = Reader::new(s);
                while let Some((f, v)) = d.next()? {
                    if let (2, Val::Bytes(dim)) = (f, v) {
                        let mut size = 0;
                        let mut dr = Reader::new(dim);
                        while let Some((f, v)) = dr.next()? {
                            if let (1, Val::Varint(x)) = (f, v) {
                                size = usize::try_from(x as i64).map_err(|_| format!("dimension {}", x as i64))?;
                            }
                        }
                        e.shape.push(size);
                    }
                }
            }
            (3, Val::Varint(x)) => e.shard = x,
            (4, Val::Varint(x)) => e.offset = usize::try_from(x).map_err(|_| "offset beyond memory")?,
            (5, Val::Varint(x)) => e.size = usize::try_from(x).map_err(|_| "size beyond memory")?,
            (6, Val::Fixed32(x)) => e.crc = Some(x),
            (7, _) => e.sliced = true,
            _ => {}
        }
    }
    Ok(e)
}

/// The float32 tensors of the checkpoint at `prefix` (see [`prefix_of`]), by name.
pub fn read(prefix: &str) -> Result<BTreeMap<String, Tensor>, String> {
    let index = format!("{prefix}.index");
    let bytes = std::fs::read(&index).map_err(|e| format!("cannot read {index:?}: {e}"))?;
    let rows = table(&bytes).map_err(|e| format!("{index:?}: {e}"))?;
    let at = |e: String| format!("{index:?}: {e}");
    let header = rows.iter().find(|(k, _)| k.is_empty()).ok_or_else(|| at("no bundle header (the empty key)".into()))?;
    let mut shards = 1u64;
    let mut r = Reader::new(&header.1);
    while let Some((f, v)) = r.next().map_err(|e| at(format!("bundle header: {e}")))? {
        match (f, v) {
            (1, Val::Varint(n)) => shards = n,
            (2, Val::Varint(1)) => return Err(at("a big-endian bundle; only little-endian ones are read".into())),
            _ => {}
        }
    }
    if shards == 0 || shards > 1024 {
        return Err(at(format!("implausible shard count {shards}")));
    }
    let mut data: BTreeMap<u64, (String, Vec<u8>)> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (k, v) in rows.iter().filter(|(k, _)| !k.is_empty()) {
        let name = String::from_utf8_lossy(k).into_owned();
        let e = entry(v).map_err(|e| at(format!("entry {name:?}: {e}")))?;
        if e.dtype != DT_FLOAT {
            continue;
        }
        if e.sliced {
            return Err(at(format!("tensor {name:?} is partitioned into slices, which is not supported")));
        }
        if e.shard >= shards {
            return Err(at(format!("tensor {name:?} names shard {} of {shards}", e.shard)));
        }
        let (path, b) = match data.entry(e.shard) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => {
                let path = format!("{prefix}.data-{:05}-of-{:05}", e.shard, shards);
                let b = std::fs::read(&path).map_err(|err| format!("cannot read {path:?} (data of {index:?}): {err}"))?;
                v.insert((path, b))
            }
        };
        let n: usize = e.shape.iter().try_fold(1usize, |a, d| a.checked_mul(*d)).unwrap_or(usize::MAX);
        if n.checked_mul(4) != Some(e.size) {
            return Err(at(format!("tensor {name:?} of shape {:?} has {} bytes, not 4 per element", e.shape, e.size)));
        }
        let raw = e.offset.checked_add(e.size).and_then(|end| b.get(e.offset..end));
        let raw = raw.ok_or_else(|| format!("{path:?}: tensor {name:?} ({} bytes at {}) lies beyond the file's end (truncated?)", e.size, e.offset))?;
        if let Some(c) = e.crc {
            if mask(crc32c(raw)) != c {
                return Err(format!("{path:?}: tensor {name:?} fails its CRC-32C check (corrupt, or not this index's data)"));
            }
        }
        let values = raw.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        out.insert(name, Tensor { shape: e.shape, values });
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Known CRC-32C values (RFC 3720 B.4: 32 zero bytes; "123456789").
    #[test]
    fn crc32c_matches_known_values() {
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    }

    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// One block of a sorted table with its trailer; keys prefix-compressed against the
    /// previous key, a restart point every `restart` entries.
    fn write_block(out: &mut Vec<u8>, kv: &[(Vec<u8>, Vec<u8>)], restart: usize) -> (usize, usize) {
        let start = out.len();
        let (mut restarts, mut prev): (Vec<u32>, &[u8]) = (Vec::new(), &[]);
        for (i, (k, v)) in kv.iter().enumerate() {
            let shared = if i % restart == 0 {
                restarts.push((out.len() - start) as u32);
                0
            } else {
                k.iter().zip(prev).take_while(|(a, b)| a == b).count()
            };
            varint(out, shared as u64);
            varint(out, (k.len() - shared) as u64);
            varint(out, v.len() as u64);
            out.extend_from_slice(&k[shared..]);
            out.extend_from_slice(v);
            prev = k;
        }
        restarts.iter().for_each(|r| out.extend_from_slice(&r.to_le_bytes()));
        out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
        let size = out.len() - start;
        out.push(0);
        let crc = mask(crc32c(&out[start..]));
        out.extend_from_slice(&crc.to_le_bytes());
        (start, size)
    }

    /// A checkpoint of the given float32 tensors written as TensorFlow lays one out (one
    /// shard; entries in two data blocks to exercise the index), returned as (index, data).
    pub(crate) fn write_checkpoint(tensors: &[(&str, &[usize], &[f32])]) -> (Vec<u8>, Vec<u8>) {
        let mut data = Vec::new();
        let mut kv: Vec<(Vec<u8>, Vec<u8>)> = vec![(Vec::new(), vec![0x08, 0x01, 0x1a, 0x02, 0x08, 0x01])];
        let mut sorted: Vec<_> = tensors.to_vec();
        sorted.sort_by_key(|t| t.0);
        for (name, shape, vals) in sorted {
            let raw: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
            let mut e = vec![0x08, 0x01];
            let mut sh = Vec::new();
            for d in shape {
                let mut dim = vec![0x08];
                varint(&mut dim, *d as u64);
                sh.push(0x12);
                varint(&mut sh, dim.len() as u64);
                sh.extend(dim);
            }
            e.push(0x12);
            varint(&mut e, sh.len() as u64);
            e.extend(sh);
            e.push(0x20);
            varint(&mut e, data.len() as u64);
            e.push(0x28);
            varint(&mut e, raw.len() as u64);
            e.push(0x35);
            e.extend_from_slice(&mask(crc32c(&raw)).to_le_bytes());
            data.extend(raw);
            kv.push((name.as_bytes().to_vec(), e));
        }
        let mut index = Vec::new();
        let half = kv.len() / 2;
        let mut ix = Vec::new();
        for part in [&kv[..half], &kv[half..]] {
            let (off, size) = write_block(&mut index, part, 2);
            let mut h = Vec::new();
            varint(&mut h, off as u64);
            varint(&mut h, size as u64);
            ix.push((part.last().unwrap().0.clone(), h));
        }
        let meta = write_block(&mut index, &[], 1);
        let ixh = write_block(&mut index, &ix, 1);
        let mut foot = Vec::new();
        for (o, s) in [meta, ixh] {
            varint(&mut foot, o as u64);
            varint(&mut foot, s as u64);
        }
        foot.resize(40, 0);
        foot.extend_from_slice(&MAGIC.to_le_bytes());
        index.extend(foot);
        (index, data)
    }

    pub(crate) fn save(dir: &str, tensors: &[(&str, &[usize], &[f32])]) -> String {
        let d = std::env::temp_dir().join(dir);
        std::fs::create_dir_all(&d).unwrap();
        let prefix = d.join("model").to_str().unwrap().to_string();
        let (index, data) = write_checkpoint(tensors);
        std::fs::write(format!("{prefix}.index"), index).unwrap();
        std::fs::write(format!("{prefix}.data-00000-of-00001"), data).unwrap();
        prefix
    }

    #[test]
    fn reads_back_what_was_written() {
        let t: &[(&str, &[usize], &[f32])] = &[
            ("global/cnt", &[], &[7.0]),
            ("global/fully_connected/biases", &[3], &[0.5, -1.25, 3.0]),
            ("global/fully_connected/weights", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            ("global/rnn/kernel", &[1, 2], &[-0.0, f32::MAX]),
        ];
        let prefix = save(&format!("ccbench-ckpt-{}", std::process::id()), t);
        for p in [prefix.clone(), format!("{prefix}.index")] {
            let m = read(&prefix_of(&p).unwrap()).unwrap();
            assert_eq!(m.len(), 4);
            for (name, shape, vals) in t {
                assert_eq!(m[*name], Tensor { shape: shape.to_vec(), values: vals.to_vec() }, "{name}");
            }
        }
        std::fs::remove_dir_all(std::path::Path::new(&prefix).parent().unwrap()).ok();
    }

    /// A truncated, foreign or corrupted file gives an error naming the file and the fault.
    #[test]
    fn bad_files_give_clear_errors() {
        let t: &[(&str, &[usize], &[f32])] = &[("a", &[2], &[1.0, 2.0]), ("b", &[1], &[3.0])];
        let prefix = save(&format!("ccbench-ckpt-bad-{}", std::process::id()), t);
        let (index, data) = write_checkpoint(t);
        let idx = format!("{prefix}.index");
        let dat = format!("{prefix}.data-00000-of-00001");
        let err = |what: &str| {
            let e = read(&prefix).err().unwrap_or_else(|| panic!("{what}: no error"));
            assert!(e.contains(&prefix), "{what}: {e}");
            e
        };
        std::fs::write(&idx, &index[..index.len() - 3]).unwrap();
        assert!(err("truncated index").contains("no table magic number"));
        std::fs::write(&idx, &index[..20]).unwrap();
        assert!(err("short index").contains("shorter than"));
        std::fs::write(&idx, b"## a YAML file, not a checkpoint\nkey: value\n-----------------\n").unwrap();
        assert!(err("foreign file").contains("no table magic number"));
        let mut flipped = index.clone();
        flipped[3] ^= 0x40;
        std::fs::write(&idx, &flipped).unwrap();
        assert!(err("corrupt block").contains("CRC-32C"));
        std::fs::write(&idx, &index).unwrap();
        std::fs::write(&dat, &data[..5]).unwrap();
        assert!(err("truncated data").contains("beyond the file's end"));
        let mut d2 = data.clone();
        d2[0] ^= 1;
        std::fs::write(&dat, &d2).unwrap();
        assert!(err("corrupt data").contains("CRC-32C"));
        std::fs::remove_file(&dat).unwrap();
        assert!(err("missing data").contains("cannot read"));
        assert!(prefix_of("/nonexistent/model").unwrap_err().contains("not a TensorFlow checkpoint"));
        std::fs::remove_dir_all(std::path::Path::new(&prefix).parent().unwrap()).ok();
    }
}
