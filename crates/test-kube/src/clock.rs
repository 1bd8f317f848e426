//! Timestamps (RFC 3339, seconds) and random names, uids and tokens (aws-lc-rs randomness).

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as `2026-01-02T03:04:05Z`.
pub(crate) fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// `at`, as `2026-01-02T03:04:05Z`.
pub(crate) fn rfc3339(at: SystemTime) -> String {
    let secs = at
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // aws-lc-rs' system random does not fail in practice; a zeroed buffer is still usable.
    let _ = aws_lc_rs::rand::fill(&mut bytes);
    bytes
}

/// A random version-4 UUID.
pub(crate) fn uid() -> String {
    let mut b = random_bytes::<16>();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// `n` characters from the alphabet Kubernetes uses for generated names.
pub(crate) fn suffix(n: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    random_bytes::<32>()
        .iter()
        .take(n)
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect()
}

/// A random bearer token (hex).
pub(crate) fn token() -> String {
    random_bytes::<24>()
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}
