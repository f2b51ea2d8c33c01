//! The engine's TUN reads and offloaded writes: packets read straight into slots, or (with
//! offloads, crate::vnet) GSO packets cut into segments; due packets written in order, late
//! runs of one flow's segments joined into one GSO packet.

use super::{Engine, BUF, READ_BURST};
use crate::vnet::{self, VnetHdr, VH};

impl Engine {
    /// Read up to READ_BURST packets from host `h`'s TUN; returns the number of reads.
    pub(super) fn read_tun(&mut self, h: usize) -> usize {
        let mut got = 0;
        while got < READ_BURST {
            let ok = if self.vnet { self.read_vnet(h) } else { self.read_plain(h) };
            if !ok {
                break;
            }
            got += 1;
        }
        got
    }

    /// After a failed read: stop polling an fd that is gone (e.g. EBADFD once the namespace
    /// went away: it still polls as readable).
    fn read_failed(&mut self, h: usize, r: isize) {
        if r < 0 {
            let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if e != libc::EAGAIN && e != libc::EINTR {
                self.dead[h] = true;
                self.n.dead_fds += 1;
            }
        }
    }

    /// One packet from a TUN without offloads, read straight into a slot.
    fn read_plain(&mut self, h: usize) -> bool {
        let id = self.alloc();
        let fd = self.fds[h];
        let buf = &mut self.slots[id as usize].buf[VH..];
        // SAFETY: reading into a buffer we own, of its full size.
        let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if r <= 0 {
            self.free.push(id);
            self.read_failed(h, r);
            return false;
        }
        let t = self.now();
        let s = &mut self.slots[id as usize];
        s.len = r as u16;
        s.csum = None;
        self.on_read(id, h as u16, t);
        true
    }

    /// One read from a TUN with offloads: a packet, or a TCP GSO packet cut into segments, each
    /// carried on its own from the time of the read.
    fn read_vnet(&mut self, h: usize) -> bool {
        let mut big = std::mem::take(&mut self.big);
        // SAFETY: reading into a buffer we own, of its full size.
        let r = unsafe { libc::read(self.fds[h], big.as_mut_ptr() as *mut libc::c_void, big.len()) };
        if r <= VH as isize {
            self.big = big;
            self.read_failed(h, r);
            return r > 0;
        }
        let t = self.now();
        let hdr = VnetHdr::read(&big[..VH]);
        let p = &big[VH..r as usize];
        let complete = self.capture.is_some();
        if hdr.tcp4_gso() {
            self.n.gso_reads += 1;
            let Some(cut) = vnet::cut_tcp4(p, hdr.gso_size as usize, BUF - VH) else {
                self.n.refused += 1;
                self.big = big;
                return true;
            };
            self.n.gso_segments += cut.segments() as u64;
            for k in 0..cut.segments() {
                // each segment built straight in its slot
                let id = self.alloc();
                let s = &mut self.slots[id as usize];
                s.len = cut.write(k, &mut s.buf[VH..]) as u16;
                self.set_csum(id, Some((hdr.csum_start, hdr.csum_offset)), complete);
                self.on_read(id, h as u16, t);
            }
        } else if hdr.other_gso() || p.len() > BUF - VH {
            self.n.refused += 1;
        } else {
            let id = self.alloc();
            self.fill(id, p, hdr.partial().then_some((hdr.csum_start, hdr.csum_offset)), complete);
            self.on_read(id, h as u16, t);
        }
        self.big = big;
        true
    }

    /// Copy packet `p` into slot `id` ([`Self::set_csum`] for its checksum).
    fn fill(&mut self, id: u32, p: &[u8], csum: Option<(u16, u16)>, complete: bool) {
        let s = &mut self.slots[id as usize];
        s.buf[VH..VH + p.len()].copy_from_slice(p);
        s.len = p.len() as u16;
        self.set_csum(id, csum, complete);
    }

    /// Slot `id`'s checksum is partial at `csum` (or not); completed now when `complete` (the
    /// run captures packets, which should hold real checksums).
    fn set_csum(&mut self, id: u32, csum: Option<(u16, u16)>, complete: bool) {
        let s = &mut self.slots[id as usize];
        s.csum = csum;
        if let (Some((start, offset)), true) = (csum, complete) {
            let len = s.len as usize;
            vnet::complete(&mut s.buf[VH..VH + len], start as usize, offset as usize);
            s.csum = None;
        }
    }

    /// Write the packets due (offloads), in order. When the engine has fallen behind (the
    /// first of a run `join_late` late or more), a run of segments of one flow that a
    /// receiver's GRO would merge (`vnet::joins`) goes out as one GSO packet: one write, one
    /// pass through the receiver's stack, as a NIC with GRO delivers a burst.
    pub(super) fn write_due(&mut self) {
        if self.due.is_empty() {
            return;
        }
        let due = std::mem::take(&mut self.due);
        let late = self.join_late.map(|l| self.now().saturating_sub(l));
        let mut joined = std::mem::take(&mut self.joined);
        let mut i = 0;
        while i < due.len() {
            let head = &self.slots[due[i].0 as usize];
            let mut j = i + 1;
            let mut bytes = 0; // payload of the run joined
            if head.data && head.csum.is_some() && late.is_some_and(|l| due[i].1 <= l) {
                bytes = vnet::tcp_payload(head.pkt());
                while j < due.len() && j - i < vnet::MAX_JOIN {
                    let s = &self.slots[due[j].0 as usize];
                    if s.route.path != head.route.path || !s.data || s.csum.is_none() || !vnet::joins(head.pkt(), s.pkt(), bytes) {
                        break;
                    }
                    bytes += vnet::tcp_payload(s.pkt());
                    j += 1;
                }
            }
            let fd = self.fds[head.route.dst_host as usize];
            let w = if j - i > 1 {
                let (first, last) = (self.slots[due[i].0 as usize].pkt(), self.slots[due[j - 1].0 as usize].pkt());
                let hl = vnet::join_head(first, last, bytes, &mut joined);
                let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; vnet::MAX_JOIN + 1];
                iov[0] = libc::iovec { iov_base: joined.as_ptr() as *mut libc::c_void, iov_len: joined.len() };
                for (k, &(id, _)) in due[i..j].iter().enumerate() {
                    let p = &self.slots[id as usize].pkt()[hl..];
                    iov[k + 1] = libc::iovec { iov_base: p.as_ptr() as *mut libc::c_void, iov_len: p.len() };
                }
                self.n.joined_writes += 1;
                self.n.joined_segments += (j - i) as u64;
                // SAFETY: the iovecs point into our own buffers, alive for the call.
                unsafe { libc::writev(fd, iov.as_ptr(), (j - i + 1) as i32) }
            } else {
                let s = &mut self.slots[due[i].0 as usize];
                VnetHdr::single(s.csum).write(&mut s.buf[..VH]);
                let bytes = &s.buf[..VH + s.len as usize];
                // SAFETY: writing our own buffer to a TUN fd we own.
                unsafe { libc::write(fd, bytes.as_ptr() as *const libc::c_void, bytes.len()) }
            };
            let actual = self.now();
            for &(id, at) in &due[i..j] {
                self.released(id, at, actual, w >= 0);
            }
            i = j;
        }
        self.joined = joined;
        self.due = due;
        self.due.clear();
    }
}
