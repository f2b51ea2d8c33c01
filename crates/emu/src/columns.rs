//! Append-only typed columns, written as raw little-endian files `<dir>/<table>.<column>.bin`
//! plus a manifest (`[[name, dtype], ...]` per table) that the Python side reads with
//! `numpy.frombuffer`. dtypes are those of the simulator's bindings: u8 u32 u64 i32 i64 f64
//! bool; null integers are `i64::MIN` (i64 columns) or negative (`drop_link`).

use std::io::Write;
use std::path::Path;

pub const NULL_I64: i64 = i64::MIN;

pub enum Col {
    U8(Vec<u8>),
    Bool(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
}

impl Col {
    pub fn dtype(&self) -> &'static str {
        match self {
            Col::U8(_) => "u8",
            Col::Bool(_) => "bool",
            Col::U32(_) => "u32",
            Col::U64(_) => "u64",
            Col::I32(_) => "i32",
            Col::I64(_) => "i64",
            Col::F64(_) => "f64",
        }
    }

    fn bytes(&self) -> Vec<u8> {
        fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            let mut out = Vec::with_capacity(v.len() * N);
            for &x in v {
                out.extend_from_slice(&f(x));
            }
            out
        }
        match self {
            Col::U8(v) | Col::Bool(v) => v.clone(),
            Col::U32(v) => le(v, u32::to_le_bytes),
            Col::U64(v) => le(v, u64::to_le_bytes),
            Col::I32(v) => le(v, i32::to_le_bytes),
            Col::I64(v) => le(v, i64::to_le_bytes),
            Col::F64(v) => le(v, f64::to_le_bytes),
        }
    }
}

/// Write one table's columns; returns its manifest entry.
pub fn write_table(dir: &Path, table: &str, cols: &[(&str, Col)]) -> std::io::Result<serde_json::Value> {
    let mut manifest = vec![];
    for (name, col) in cols {
        let mut f = std::fs::File::create(dir.join(format!("{table}.{name}.bin")))?;
        f.write_all(&col.bytes())?;
        manifest.push(serde_json::json!([name, col.dtype()]));
    }
    Ok(serde_json::Value::Array(manifest))
}
