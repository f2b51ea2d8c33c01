//! The seeded generators of the randomised algorithms. Two generators exist and both stay: each
//! scheme's draws are part of its recorded behaviour, and the two give different sequences for
//! the same `(seed, stream)`.
//! * BBR v1 and v3 (`prandom_u32_max` in tcp_bbr.c) step a bare splitmix64 state;
//! * CDG and HLDG (`random()` in FreeBSD cc_cdg.c) draw from a `netmodel::Rng` (xoshiro256**),
//!   on a stream tagged so that it never aliases a link's.
//!
//! `seed` and `stream` are scheme parameters the engine fills with the experiment seed and the
//! flow id (`cc::engine_params`).

use netmodel::Rng;

/// Stream tag mixed into the flow's stream so CC randomness never aliases a link's.
pub const CC_RNG_STREAM_TAG: u64 = 0xCC00_0000_0000_0000;

/// The `netmodel::Rng` of a CC for `(seed, stream)` (CDG, HLDG).
pub(crate) fn cc_rng(seed: u64, stream: u64) -> Rng {
    Rng::new(seed, stream ^ CC_RNG_STREAM_TAG)
}

/// Initial splitmix64 state for `(seed, stream)`; `tag` separates the schemes (BBR, BBRv3).
pub(crate) fn splitmix64_state(seed: u64, stream: u64, tag: u64) -> u64 {
    seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03) ^ tag
}

/// splitmix64 step (BBR's `prandom_u32_max` draws the high 32 bits).
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
