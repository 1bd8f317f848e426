//! The bodies of the cargo-fuzz targets (`fuzz/`), as plain functions, and a seeded mutator, so
//! that stable `cargo test` runs every target over a bounded generated corpus in CI and
//! `cargo +nightly fuzz run` explores further with the same code.

/// The `cluster_spec` target: arbitrary bytes through decode, parse, default and validate. It
/// must return, whatever the bytes: no panic, bounded time and memory.
pub fn cluster_spec(data: &[u8]) {
    if let Ok(text) = crate::decode(data) {
        let _ = crate::check(text);
    }
}

/// A deterministic corpus of `count` inputs made from `seeds` by a seeded generator: byte flips,
/// insertions of YAML, PEM and INI punctuation, deletions, cut and repeated ranges, and pieces of
/// two seeds joined. The same `seed` gives the same corpus.
pub fn mutations(seeds: &[&[u8]], count: usize, seed: u64) -> Vec<Vec<u8>> {
    const TOKENS: &[&[u8]] = &[
        b"&a ",
        b"*a",
        b"<<: ",
        b"- ",
        b": ",
        b"{",
        b"}",
        b"[",
        b"]",
        b"'",
        b"\"",
        b"\n",
        b"\t",
        b"#",
        b"---\n",
        b"!!str ",
        b"? ",
        b"|\n",
        b"=",
        b"\0",
        b"\xff",
        b"\xef\xbb\xbf",
        b"-----BEGIN CERTIFICATE-----\n",
        b"-----END CERTIFICATE-----\n",
        b"[10.0.0.1]\n",
        b"aws_secret_access_key = ",
        b"~",
        b"0x1F",
        b"1e309",
        b"-9999999999999999999999",
    ];
    let mut state = seed | 1;
    let mut next = move |bound: usize| -> usize {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound.max(1) as u64) as usize
    };
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let mut data = seeds
            .get(next(seeds.len()))
            .copied()
            .unwrap_or_default()
            .to_vec();
        for _ in 0..1 + next(8) {
            let at = next(data.len() + 1);
            match next(6) {
                0 if !data.is_empty() => {
                    let i = at.min(data.len() - 1);
                    data[i] ^= 1 << next(8);
                }
                1 => {
                    let token = TOKENS[next(TOKENS.len())];
                    data.splice(at..at, token.iter().copied());
                }
                2 => {
                    let end = (at + next(64)).min(data.len());
                    data.drain(at..end);
                }
                3 => data.truncate(at),
                4 => {
                    let end = (at + next(128)).min(data.len());
                    let piece = data[at..end].to_vec();
                    for _ in 0..next(16) {
                        data.splice(at..at, piece.iter().copied());
                    }
                }
                _ => {
                    let other = seeds.get(next(seeds.len())).copied().unwrap_or_default();
                    let from = next(other.len() + 1);
                    data.splice(at..at, other[from..].iter().copied());
                }
            }
        }
        out.push(data);
    }
    out
}
