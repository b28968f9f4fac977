//! The hash of checkpoint checksums, run ids and digests.

/// FNV-1a over bytes: the checkpoint's checksum, and the hash behind run ids and digests.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
