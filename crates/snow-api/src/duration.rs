//! Durations, parsed once, the way Go's `time.ParseDuration` reads them.
//!
//! Go's grammar is the one that matters: Cluster API's `metav1.Duration` fields (the v1beta1
//! MachineHealthCheck timeouts) are parsed by it, so a spec value it would refuse must be refused
//! here. The same parser reads every duration flag of the CLI, so `10s`, `5m` and `1h30m` mean
//! one thing everywhere. A general-purpose parser (jiff's "friendly" format, ISO 8601) accepts
//! forms such as `1 hour` or `PT1H` that Go refuses; that is why this is not one.
//!
//! A duration here is never negative: every duration snowctl reads is a timeout or an interval.
//! Values are kept in nanoseconds, exactly; [`GoDuration::whole_seconds`] says whether a value can
//! be written as whole seconds (Cluster API v1beta2 takes `…Seconds` integers), so a value that
//! cannot be rendered exactly is refused rather than rounded or replaced.

use std::fmt;
use std::str::FromStr;

/// A non-negative duration in Go's syntax (`90s`, `10m`, `1h30m`, `1.5h`, `500ms`, `0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoDuration {
    nanos: u64,
}

/// Why a text is not a [`GoDuration`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Nothing to read.
    #[error("a duration cannot be empty")]
    Empty,
    /// A leading `-`.
    #[error("a duration cannot be negative")]
    Negative,
    /// A number without a unit (Go accepts a bare `0` only).
    #[error("`{0}` has no unit (ns, us, ms, s, m or h)")]
    MissingUnit(String),
    /// A unit Go does not know.
    #[error("`{0}` is not a unit (ns, us, ms, s, m or h)")]
    UnknownUnit(String),
    /// Something that is not a number where one must stand.
    #[error("expected a number at `{0}`")]
    ExpectedNumber(String),
    /// More than Go's int64 nanoseconds hold (about 292 years).
    #[error("the duration is too long (Go's limit is 2562047h47m16.854775807s)")]
    Overflow,
    /// A fraction finer than a nanosecond.
    #[error("the duration is finer than a nanosecond")]
    SubNanosecond,
}

/// Go's largest duration, `math.MaxInt64` nanoseconds.
const MAX_NANOS: u128 = i64::MAX as u128;

/// Go's units, longest first where one is a prefix of another (`ms` before `m`).
const UNITS: [(&str, u64); 8] = [
    ("ns", 1),
    ("us", 1_000),
    ("\u{b5}s", 1_000),
    ("\u{3bc}s", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

impl GoDuration {
    /// The zero duration.
    pub const ZERO: Self = Self { nanos: 0 };

    /// A duration of whole seconds.
    pub fn from_secs(secs: u64) -> Self {
        Self {
            nanos: secs.saturating_mul(1_000_000_000).min(MAX_NANOS as u64),
        }
    }

    /// The value in whole seconds, or `None` when it has a fraction of a second.
    pub fn whole_seconds(&self) -> Option<u64> {
        self.nanos
            .is_multiple_of(1_000_000_000)
            .then_some(self.nanos / 1_000_000_000)
    }

    /// The value as a standard duration (exact).
    pub fn as_std(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.nanos)
    }
}

impl From<GoDuration> for std::time::Duration {
    fn from(d: GoDuration) -> Self {
        d.as_std()
    }
}

impl FromStr for GoDuration {
    type Err = DurationError;

    fn from_str(text: &str) -> Result<Self, DurationError> {
        let mut rest = text;
        if let Some(r) = rest.strip_prefix('+') {
            rest = r;
        } else if rest.starts_with('-') {
            return Err(DurationError::Negative);
        }
        if rest.is_empty() {
            return Err(DurationError::Empty);
        }
        if rest == "0" {
            return Ok(Self::ZERO);
        }
        let mut total: u128 = 0;
        while !rest.is_empty() {
            let whole_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            let whole = &rest[..whole_len];
            rest = &rest[whole_len..];
            let fraction = match rest.strip_prefix('.') {
                Some(r) => {
                    let n = r.bytes().take_while(u8::is_ascii_digit).count();
                    rest = &r[n..];
                    &r[..n]
                }
                None => "",
            };
            if whole.is_empty() && fraction.is_empty() {
                return Err(DurationError::ExpectedNumber(rest.to_owned()));
            }
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(rest.len());
            let unit = &rest[..unit_len];
            rest = &rest[unit_len..];
            let factor = match UNITS.iter().find(|(name, _)| *name == unit) {
                Some((_, factor)) => u128::from(*factor),
                None if unit.is_empty() => {
                    return Err(DurationError::MissingUnit(text.to_owned()));
                }
                None => return Err(DurationError::UnknownUnit(unit.to_owned())),
            };
            total = total
                .checked_add(number_times(whole, fraction, factor)?)
                .filter(|t| *t <= MAX_NANOS)
                .ok_or(DurationError::Overflow)?;
        }
        Ok(Self {
            nanos: u64::try_from(total).map_err(|_| DurationError::Overflow)?,
        })
    }
}

/// `whole.fraction × factor` in nanoseconds, exactly.
fn number_times(whole: &str, fraction: &str, factor: u128) -> Result<u128, DurationError> {
    let mut value: u128 = 0;
    for b in whole.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u128::from(b - b'0')))
            .filter(|v| *v <= MAX_NANOS)
            .ok_or(DurationError::Overflow)?;
    }
    let mut nanos = value.checked_mul(factor).ok_or(DurationError::Overflow)?;
    // The fraction's digits beyond the unit's precision must be zeros: a nanosecond is the least.
    let mut scale = factor;
    for b in fraction.bytes() {
        let digit = u128::from(b - b'0');
        if !scale.is_multiple_of(10) {
            if digit != 0 {
                return Err(DurationError::SubNanosecond);
            }
            continue;
        }
        scale /= 10;
        nanos = nanos
            .checked_add(digit * scale)
            .ok_or(DurationError::Overflow)?;
    }
    if nanos > MAX_NANOS {
        return Err(DurationError::Overflow);
    }
    Ok(nanos)
}

/// A duration for a message, as a flag takes it: `1h5m`, `10m`, `1m30s`, `10s`, `300ms` (seconds
/// dropped past an hour, milliseconds under a minute when not whole seconds: `1500ms`).
pub fn short_duration(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s < 60 && d.subsec_millis() != 0 {
        return format!("{}ms", d.as_millis());
    }
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, 0) => format!("{}ms", d.as_millis()),
        (0, 0, sec) => format!("{sec}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, sec) => format!("{m}m{sec}s"),
        (h, 0, 0) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

impl fmt::Display for GoDuration {
    /// Go's own form (`time.Duration.String`): `1h30m0s`, `1.5s`, `500ms`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.nanos;
        if n == 0 {
            return f.write_str("0s");
        }
        if n < 1_000_000_000 {
            let (unit, size) = match n {
                0..1_000 => ("ns", 1),
                1_000..1_000_000 => ("\u{b5}s", 1_000),
                _ => ("ms", 1_000_000),
            };
            return write!(f, "{}{unit}", decimal(n, size));
        }
        let (h, rest) = (n / 3_600_000_000_000, n % 3_600_000_000_000);
        let (m, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
        if h > 0 {
            write!(f, "{h}h")?;
        }
        if h > 0 || m > 0 {
            write!(f, "{m}m")?;
        }
        write!(f, "{}s", decimal(rest, 1_000_000_000))
    }
}

/// `n / size` with the fraction's trailing zeros dropped.
fn decimal(n: u64, size: u64) -> String {
    let (whole, fraction) = (n / size, n % size);
    if fraction == 0 {
        return whole.to_string();
    }
    let width = size.ilog10() as usize;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_durations_read_like_flags() {
        use super::short_duration;
        use std::time::Duration;
        assert_eq!(short_duration(Duration::from_secs(3600)), "1h");
        assert_eq!(short_duration(Duration::from_secs(3900)), "1h5m");
        assert_eq!(short_duration(Duration::from_secs(600)), "10m");
        assert_eq!(short_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(short_duration(Duration::from_secs(10)), "10s");
        assert_eq!(short_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(short_duration(Duration::from_millis(300)), "300ms");
    }

    use super::*;

    fn parse(s: &str) -> Result<GoDuration, DurationError> {
        s.parse()
    }

    #[test]
    fn reads_what_go_reads() {
        for (text, nanos) in [
            ("0", 0u64),
            ("+0", 0),
            ("0s", 0),
            ("90s", 90_000_000_000),
            ("10m", 600_000_000_000),
            ("5m0s", 300_000_000_000),
            ("1h30m", 5_400_000_000_000),
            ("1.5h", 5_400_000_000_000),
            (".5s", 500_000_000),
            ("1.s", 1_000_000_000),
            ("500ms", 500_000_000),
            ("420000000us", 420_000_000_000),
            ("7\u{b5}s", 7_000),
            ("7\u{3bc}s", 7_000),
            ("3ns", 3),
            ("1h1m1s1ms1us1ns", 3_661_001_001_001),
            ("2562047h47m16.854775807s", i64::MAX as u64),
        ] {
            assert_eq!(parse(text).map(|d| d.nanos), Ok(nanos), "{text}");
        }
    }

    #[test]
    fn refuses_what_go_refuses_and_negatives() {
        assert_eq!(parse(""), Err(DurationError::Empty));
        assert_eq!(parse("+"), Err(DurationError::Empty));
        assert_eq!(parse("-5m"), Err(DurationError::Negative));
        assert!(matches!(parse("10"), Err(DurationError::MissingUnit(_))));
        assert!(matches!(parse("1h30"), Err(DurationError::MissingUnit(_))));
        assert!(matches!(parse("5 m"), Err(DurationError::UnknownUnit(_))));
        assert!(matches!(parse("1d"), Err(DurationError::UnknownUnit(u)) if u == "d"));
        assert!(matches!(
            parse("ten minutes"),
            Err(DurationError::ExpectedNumber(_))
        ));
        assert!(matches!(
            parse("PT1H"),
            Err(DurationError::ExpectedNumber(_))
        ));
        assert!(matches!(parse(".s"), Err(DurationError::ExpectedNumber(_))));
        assert_eq!(
            parse("2562047h47m16.854775808s"),
            Err(DurationError::Overflow)
        );
        assert_eq!(parse("99999999999999999999h"), Err(DurationError::Overflow));
        assert_eq!(parse("1.5ns"), Err(DurationError::SubNanosecond));
    }

    #[test]
    fn whole_seconds_only_when_exact() {
        assert_eq!(parse("420000000us").unwrap().whole_seconds(), Some(420));
        assert_eq!(parse("1500ms").unwrap().whole_seconds(), None);
        assert_eq!(parse("10m0s").unwrap().whole_seconds(), Some(600));
    }

    #[test]
    fn prints_go_form_and_reads_it_back() {
        for (text, shown) in [
            ("0", "0s"),
            ("90s", "1m30s"),
            ("1h", "1h0m0s"),
            ("1.5s", "1.5s"),
            ("500ms", "500ms"),
            ("1500us", "1.5ms"),
            ("3ns", "3ns"),
        ] {
            let d = parse(text).unwrap();
            assert_eq!(d.to_string(), shown);
            assert_eq!(parse(shown), Ok(d));
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_round_trips(s in "\\PC{0,24}") {
            if let Ok(d) = parse(&s) {
                proptest::prop_assert_eq!(parse(&d.to_string()), Ok(d));
            }
        }

        #[test]
        fn any_value_round_trips(n in 0u64..=i64::MAX as u64) {
            let d = GoDuration { nanos: n };
            proptest::prop_assert_eq!(parse(&d.to_string()), Ok(d));
        }
    }
}
