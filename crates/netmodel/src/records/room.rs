//! Room for the columns that grow while a run goes on (`flows`, `queues`, `packets`) and for
//! each flow's interval bins.
//!
//! A column grown one value at a time by `Vec::push` doubles its buffer: each doubling
//! allocates anew and copies what it holds (or asks the kernel to move the mapping), and the
//! buffers a run leaves behind are ~2× what it holds. At 1000 flows the periodic samples
//! write ~90 MB in 2 simulated seconds (docs/benchmarks.md, "Loop cost per packet against the
//! number of flows"). The simulator knows from the start how many sample rows and interval
//! bins a run makes at most, so the recorders reserve them once (up to [`AHEAD_ROWS`] rows,
//! [`AHEAD_BINS`] bins), and after a chunk is handed over they reserve the next chunk's rows
//! at once. Reservations use `try_reserve_exact`: a refused one (no address space, strict
//! overcommit) leaves the column to grow as before. Reserved memory the run never writes is
//! never touched, so it costs address space, not resident memory.
//!
//! Transparent huge pages for the large buffers (`madvise(MADV_HUGEPAGE)`) were measured
//! and are not used: on this project's VM a fresh 2 MiB page often costs milliseconds to
//! back (docs/benchmarks.md).

/// Most rows a table reserves ahead of them (32 MiB per 8-byte column); beyond, it grows.
pub(crate) const AHEAD_ROWS: usize = 1 << 22;

/// Most interval bins a flow reserves ahead of them (1024 × 56 bytes; 10 s of 10 ms bins).
pub(crate) const AHEAD_BINS: usize = 1 << 10;

/// A table's rows expected in all (0: not known) and handed over so far in chunks.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ahead {
    expected: usize,
    handed: usize,
}

impl Ahead {
    /// A run expected to record `rows` rows, and the room to make for them now.
    pub(crate) fn expecting(rows: usize) -> (Ahead, usize) {
        (Ahead { expected: rows, handed: 0 }, rows.min(AHEAD_ROWS))
    }

    /// After a chunk of `rows` rows was handed over: the new count, and room for the next
    /// chunk — as many again, but no more than are still to come (none if not known).
    pub(crate) fn after_chunk(self, rows: usize) -> (Ahead, usize) {
        let handed = self.handed + rows;
        let room = rows.min(self.expected.saturating_sub(handed)).min(AHEAD_ROWS);
        (Ahead { handed, ..self }, room)
    }
}

/// Make room in `v` for `cap` values in all (nothing if it has that much already). A
/// refused reservation leaves `v` as it was.
pub(crate) fn reserve_to<T>(v: &mut Vec<T>, cap: usize) {
    if v.capacity() < cap {
        let _ = v.try_reserve_exact(cap - v.len());
    }
}

/// A column of `n` copies of `x` with room for `cap` values (a `cc_<name>` column that
/// appears after some rows: it gets the room its table has).
pub(crate) fn filled<T: Clone>(n: usize, x: T, cap: usize) -> Vec<T> {
    let mut v = Vec::new();
    reserve_to(&mut v, cap.max(n));
    v.resize(n, x);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{FlowRow, QueueRow, Recorder};

    const MS: u64 = 1_000_000;

    #[test]
    fn room_is_made_once_and_a_refused_reservation_leaves_the_column_as_it_was() {
        let mut v: Vec<u64> = vec![1, 2, 3];
        reserve_to(&mut v, 1 << 20);
        assert!(v.capacity() >= 1 << 20);
        let p = v.as_ptr();
        reserve_to(&mut v, 1000);
        assert_eq!(v.as_ptr(), p, "enough room already: no new buffer");
        assert_eq!(v, [1, 2, 3]);
        // more than the address space: try_reserve_exact refuses, the column keeps growing
        let mut w: Vec<u64> = vec![7];
        reserve_to(&mut w, usize::MAX / 4);
        assert_eq!(w, [7]);
        w.push(8);
        assert_eq!(w, [7, 8]);
    }

    #[test]
    fn chunks_reserve_what_is_still_to_come() {
        assert_eq!(Ahead::default().after_chunk(500).1, 0, "unknown total: no room ahead");
        let (a, now) = Ahead::expecting(2000);
        assert_eq!(now, 2000);
        let (a, next) = a.after_chunk(500);
        assert_eq!(next, 500);
        let (a, next) = a.after_chunk(1300);
        assert_eq!(next, 200);
        assert_eq!(a.after_chunk(700).1, 0);
        assert_eq!(Ahead::expecting(usize::MAX).1, AHEAD_ROWS);
        let c = filled(3, f64::NAN, 10);
        assert_eq!(c.len(), 3);
        assert!(c.capacity() >= 10 && c.iter().all(|x| x.is_nan()));
    }

    #[test]
    fn rows_reserved_ahead_give_the_same_bytes_as_rows_grown() {
        // 3 flows sampled at 40 instants, one chunk handed over halfway; the second run is
        // told the totals (and more bins than it uses), the first grows its columns
        let run = |ahead: bool| {
            let mut r = Recorder::new(3, 10 * MS, MS, true);
            if ahead {
                r.flows.expect(3 * 40);
                r.queues.expect(2 * 40);
                r.expect_bins(50);
            }
            let mut out = Vec::new();
            for k in 0..40u64 {
                let now = k * 10 * MS;
                for f in 0..3u32 {
                    let i = r.sent(now, f, k * 1448, 1500, false);
                    r.delivered(now + 5 * MS, f, 1500, now, i);
                    let cc: &[(&str, f64)] = if k > 25 && f == 1 { &[("x", k as f64)] } else { &[] };
                    r.flows.push(now, f, &FlowRow { cwnd: (k + f as u64) as u32, ..Default::default() }, cc);
                }
                for l in 0..2u32 {
                    r.queues.push_row(now, l, &QueueRow { packets: k as u32 + l, ..Default::default() });
                }
                if k == 20 {
                    out.extend(r.drain(10));
                }
            }
            out.extend(r.finish(&[0; 3], &[None; 3], &[0; 3]));
            out
        };
        let (grown, ahead) = (run(false), run(true));
        assert_eq!(grown.len(), ahead.len());
        assert!(ahead.iter().any(|t| t.name == "flows" && t.get("cc_x").is_some()));
        for (g, a) in grown.iter().zip(&ahead) {
            assert_eq!((g.name, g.cols.len()), (a.name, a.cols.len()));
            for ((ng, cg), (na, ca)) in g.cols.iter().zip(&a.cols) {
                assert_eq!(ng, na);
                assert_eq!(cg.le_bytes(), ca.le_bytes(), "{}.{ng}", g.name);
            }
        }
    }
}
