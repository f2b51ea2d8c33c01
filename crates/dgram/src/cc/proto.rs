//! A minimal reader of the protocol-buffer wire format (developers.google.com/protocol-buffers,
//! "Encoding": a field is a varint key `field << 3 | wire type` followed by a varint (type 0), 8
//! bytes (1), a varint length and that many bytes (2) or 4 bytes (5)), for the files the
//! datagram schemes load: remy's `dna.proto` rule tables (`remy.rs`) and TensorFlow's
//! `BundleEntryProto` checkpoint entries (`tf_checkpoint.rs`). Malformed input is an error,
//! never a panic.

pub struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

/// One field's value, by wire type.
pub enum Val<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Reader { b, i: 0 }
    }

    pub fn at_end(&self) -> bool {
        self.i >= self.b.len()
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.b[self.i.min(self.b.len())..]
    }

    /// Skip `n` bytes (at most to the end).
    pub fn skip(&mut self, n: usize) {
        self.i = self.i.saturating_add(n).min(self.b.len());
    }

    pub fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.i).ok_or("truncated varint")?;
            self.i += 1;
            v |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let s = self.i.checked_add(n).and_then(|e| self.b.get(self.i..e)).ok_or_else(|| format!("truncated {what}"))?;
        self.i += n;
        Ok(s)
    }

    /// The next field as (field number, value), or None at the end.
    pub fn next(&mut self) -> Result<Option<(u64, Val<'a>)>, String> {
        if self.at_end() {
            return Ok(None);
        }
        let key = self.varint()?;
        let (field, wire) = (key >> 3, key & 7);
        let v = match wire {
            0 => Val::Varint(self.varint()?),
            1 => Val::Fixed64(u64::from_le_bytes(self.take(8, "64-bit field")?.try_into().unwrap())),
            2 => {
                let n = usize::try_from(self.varint()?).map_err(|_| "length beyond memory")?;
                Val::Bytes(self.take(n, "length-delimited field")?)
            }
            5 => Val::Fixed32(u32::from_le_bytes(self.take(4, "32-bit field")?.try_into().unwrap())),
            w => return Err(format!("unsupported wire type {w}")),
        };
        Ok(Some((field, v)))
    }
}
