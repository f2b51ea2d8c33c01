//! Typed columns and their one encoding: each column is a dtype name plus its values as raw
//! little-endian bytes (`Col::le_bytes`), with categories for dictionary-encoded strings.
//! The simulator's bindings hand these bytes to Python; the emulator writes them to files.
//! Nulls: `NULL_I64` in `I64` columns, negative in `drop_link` (`I32`), NaN in `F64`.

use std::borrow::Cow;

pub const NULL_I64: i64 = i64::MIN;

/// Column type, by the name both encoders and the Python decoder use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    U8,
    U32,
    U64,
    I32,
    I64,
    F64,
    Bool,
    /// Dictionary-encoded string: u8 codes into these categories.
    Cat(&'static [&'static str]),
}

impl Dtype {
    pub fn name(&self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::U32 => "u32",
            Dtype::U64 => "u64",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::F64 => "f64",
            Dtype::Bool => "bool",
            Dtype::Cat(_) => "cat",
        }
    }

    pub fn categories(&self) -> Option<&'static [&'static str]> {
        match self {
            Dtype::Cat(c) => Some(c),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub enum Col {
    U8(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    /// Dictionary-encoded strings: codes index into the categories.
    Cat(Vec<u8>, &'static [&'static str]),
}

impl Col {
    pub fn len(&self) -> usize {
        match self {
            Col::U8(v) | Col::Cat(v, _) => v.len(),
            Col::U32(v) => v.len(),
            Col::U64(v) => v.len(),
            Col::I32(v) => v.len(),
            Col::I64(v) => v.len(),
            Col::F64(v) => v.len(),
            Col::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn dtype(&self) -> Dtype {
        match self {
            Col::U8(_) => Dtype::U8,
            Col::U32(_) => Dtype::U32,
            Col::U64(_) => Dtype::U64,
            Col::I32(_) => Dtype::I32,
            Col::I64(_) => Dtype::I64,
            Col::F64(_) => Dtype::F64,
            Col::Bool(_) => Dtype::Bool,
            Col::Cat(_, c) => Dtype::Cat(c),
        }
    }

    /// The values as little-endian bytes (bool: one byte 0/1; cat: the codes). Borrowed on
    /// little-endian targets, where that is the memory layout.
    pub fn le_bytes(&self) -> Cow<'_, [u8]> {
        #[cfg(target_endian = "little")]
        fn le<T: Copy, const N: usize>(v: &[T], _: impl Fn(T) -> [u8; N]) -> Cow<'_, [u8]> {
            // SAFETY: plain numeric (or bool: 0/1 bytes) slices viewed as bytes; u8 alignment is 1.
            Cow::Borrowed(unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) })
        }
        #[cfg(not(target_endian = "little"))]
        fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Cow<'_, [u8]> {
            let mut out = Vec::with_capacity(v.len() * N);
            for &x in v {
                out.extend_from_slice(&f(x));
            }
            Cow::Owned(out)
        }
        match self {
            Col::U8(v) | Col::Cat(v, _) => Cow::Borrowed(v),
            Col::U32(v) => le(v, u32::to_le_bytes),
            Col::U64(v) => le(v, u64::to_le_bytes),
            Col::I32(v) => le(v, i32::to_le_bytes),
            Col::I64(v) => le(v, i64::to_le_bytes),
            Col::F64(v) => le(v, f64::to_le_bytes),
            Col::Bool(v) => le(v, |b: bool| [b as u8]),
        }
    }
}

/// A named table of equally long columns.
#[derive(Debug, Clone)]
pub struct Table {
    pub name: &'static str,
    pub cols: Vec<(String, Col)>,
}

impl Table {
    pub fn new(name: &'static str) -> Self {
        Table { name, cols: Vec::new() }
    }

    pub fn col(mut self, name: &str, c: Col) -> Self {
        self.cols.push((name.to_string(), c));
        self
    }

    pub fn rows(&self) -> usize {
        self.cols.first().map_or(0, |(_, c)| c.len())
    }

    pub fn get(&self, name: &str) -> Option<&Col> {
        self.cols.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
}
