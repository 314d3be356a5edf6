//! What a written sector holds: bytes derived from (run seed, LBA, write version), so the host
//! side never stores data, only a version per sector, and a check regenerates what it expects.
//!
//! Each sector starts with a 16-byte header (its LBA, the write version and a magic word) and is
//! filled with a SplitMix64 stream keyed by all three, so any change to any byte shows, and
//! bytes found in the wrong place say whose they are ("the data of LBA 12, version 7"): the
//! signature of a mapping that points at another page.

use crate::engine::derive_seed;
use crate::flash::SECTOR_BYTES;

pub const SECTOR: usize = SECTOR_BYTES as usize;

/// Marks a sector written by the emulation ("SSDL").
const MAGIC: u32 = 0x4C44_5353;

const ZERO_SECTOR: [u8; SECTOR] = [0; SECTOR];

/// Version of a sector the host never wrote: it reads back as zeros.
pub const UNWRITTEN: u32 = 0;

/// Fills `out` (one sector) with the content of `lba` as written by write `version` (zeros for
/// [`UNWRITTEN`]).
pub fn fill_sector(seed: u64, lba: u64, version: u32, out: &mut [u8]) {
    debug_assert_eq!(out.len(), SECTOR);
    if version == UNWRITTEN {
        out.fill(0);
        return;
    }
    out[0..8].copy_from_slice(&lba.to_le_bytes());
    out[8..12].copy_from_slice(&version.to_le_bytes());
    out[12..16].copy_from_slice(&MAGIC.to_le_bytes());
    let key = sector_key(seed, lba, version);
    for (i, w) in out[16..].chunks_exact_mut(8).enumerate() {
        w.copy_from_slice(&word(key, i as u64).to_le_bytes());
    }
}

fn sector_key(seed: u64, lba: u64, version: u32) -> u64 {
    derive_seed(derive_seed(seed, lba), version as u64)
}

/// Word `i` of the fill: one multiply-xorshift round over the key and the index (a full
/// SplitMix64 per word made the content a fifth of a run's time; this mixes well enough to
/// tell any two sectors and any changed bit apart).
#[inline]
fn word(key: u64, i: u64) -> u64 {
    let z = key ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let z = (z ^ (z >> 32)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    z ^ (z >> 32)
}

/// Whether `got` (one sector) is exactly what `fill_sector` writes for (lba, version),
/// compared as it is generated.
pub fn sector_matches(seed: u64, lba: u64, version: u32, got: &[u8]) -> bool {
    if version == UNWRITTEN {
        // A slice comparison (memcmp), several times faster than testing byte by byte.
        return got == &ZERO_SECTOR[..];
    }
    if got[0..8] != lba.to_le_bytes() || got[8..12] != version.to_le_bytes() || got[12..16] != MAGIC.to_le_bytes() {
        return false;
    }
    let key = sector_key(seed, lba, version);
    got[16..].chunks_exact(8).enumerate().all(|(i, w)| w == word(key, i as u64).to_le_bytes())
}

/// What a sector that failed its check holds, in words for the report.
pub fn describe(seed: u64, got: &[u8], scratch: &mut [u8]) -> String {
    if got.iter().all(|&b| b == 0) {
        return "zeros (never written, or erased)".to_string();
    }
    let lba = u64::from_le_bytes(got[0..8].try_into().expect("8 bytes"));
    let version = u32::from_le_bytes(got[8..12].try_into().expect("4 bytes"));
    let magic = u32::from_le_bytes(got[12..16].try_into().expect("4 bytes"));
    if magic != MAGIC || version == UNWRITTEN {
        return "bytes no write produced".to_string();
    }
    fill_sector(seed, lba, version, scratch);
    if got == &scratch[..] {
        format!("the data of LBA {lba} from write version {version}")
    } else {
        format!("the data of LBA {lba} from write version {version}, corrupted")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_differ_by_lba_version_and_seed_and_check_themselves() {
        let (mut a, mut b, mut scratch) = ([0u8; SECTOR], [0u8; SECTOR], [0u8; SECTOR]);
        fill_sector(1, 10, 3, &mut a);
        assert!(sector_matches(1, 10, 3, &a));
        for (seed, lba, version) in [(1, 11, 3), (1, 10, 4), (2, 10, 3)] {
            fill_sector(seed, lba, version, &mut b);
            assert_ne!(a, b, "({seed}, {lba}, {version})");
            assert!(!sector_matches(1, 10, 3, &b));
        }
        a[300] ^= 1;
        assert!(!sector_matches(1, 10, 3, &a));
        assert_eq!(describe(1, &a, &mut scratch), "the data of LBA 10 from write version 3, corrupted");
        fill_sector(1, 10, UNWRITTEN, &mut a);
        assert!(a.iter().all(|&x| x == 0));
        assert!(sector_matches(1, 99, UNWRITTEN, &a));
        assert_eq!(describe(1, &a, &mut scratch), "zeros (never written, or erased)");
        fill_sector(1, 11, 3, &mut b);
        assert_eq!(describe(1, &b, &mut scratch), "the data of LBA 11 from write version 3");
    }
}
