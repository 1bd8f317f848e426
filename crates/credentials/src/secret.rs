//! Types that hold secrets: they never print themselves and zero their memory on drop.
//!
//! Nothing here hands the secret out publicly. The crate's own signing and encoding code reads it
//! through `pub(crate)` methods; everything else sees `<redacted>`.

use std::fmt;
use zeroize::Zeroizing;

/// What every secret prints as, in `Debug` and `Display`.
pub const REDACTED: &str = "<redacted>";

/// A secret text value (an access key id, a secret access key, an encoded credentials file).
///
/// `Debug` and `Display` print `<redacted>`; the memory is zeroed on drop. Equality is not
/// implemented on purpose: compare through the code that owns the secret.
#[derive(Clone, Default)]
pub struct SecretString(Zeroizing<String>);

impl SecretString {
    /// Wraps a secret. The caller's `String` is moved in, so no copy is left behind.
    pub fn new(secret: String) -> Self {
        SecretString(Zeroizing::new(secret))
    }

    /// Whether the secret is empty (or only whitespace): safe to ask, reveals nothing else.
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }

    /// The secret itself, for the code that signs requests or encodes it. Crate-private.
    pub(crate) fn expose_for_signing(&self) -> &str {
        self.0.as_str()
    }
}

impl From<String> for SecretString {
    fn from(secret: String) -> Self {
        SecretString::new(secret)
    }
}

impl fmt::Debug for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// Secret bytes (the content of a credentials file). `Debug` prints the length only; the memory is
/// zeroed on drop.
#[derive(Clone, Default)]
pub struct SecretBytes(Zeroizing<Vec<u8>>);

impl SecretBytes {
    /// Wraps secret bytes.
    pub fn new(bytes: Vec<u8>) -> Self {
        SecretBytes(Zeroizing::new(bytes))
    }

    /// How many bytes are held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no bytes are held.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The bytes, for the encoders. Crate-private.
    pub(crate) fn expose_for_encoding(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl fmt::Debug for SecretBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{REDACTED} ({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let s = SecretString::new("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into());
        assert_eq!(format!("{s}"), REDACTED);
        assert_eq!(format!("{s:?}"), REDACTED);
        assert_eq!(format!("{s:#?}"), REDACTED);
        assert!(!s.is_blank());
        assert_eq!(
            s.expose_for_signing(),
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        );
        assert!(SecretString::new("   ".into()).is_blank());
        let b = SecretBytes::new(b"secret".to_vec());
        assert_eq!(format!("{b:?}"), "<redacted> (6 bytes)");
        assert_eq!(b.len(), 6);
        assert!(!b.is_empty());
    }
}
