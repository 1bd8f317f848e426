//! Hiding the user name and password a URL may carry: a kubeconfig's `server:`
//! (`https://admin:PASSWORD@host`), a release manifest's or a registry's URL. This is the one
//! function every crate shows such a URL through: the kube client's server and errors
//! (snow-lifecycle), the release and registry errors (snow-images), the controller's conditions,
//! Events and log, and everything the CLI writes to standard error.

use std::borrow::Cow;

/// What the user information of a URL is replaced with.
pub const REDACTED: &str = "<redacted>";

/// `text` with the user information (`user:password@`) of every `scheme://user:password@host`
/// in it replaced by `<redacted>@`; text without one is returned as it is.
pub fn redact_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains("://") || !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        // The authority ends at the path, query, fragment, or anything a URL cannot hold.
        let end = after
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '`') || c.is_whitespace()
            })
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(userinfo_end) => {
                out.push_str(REDACTED);
                out.push_str(&authority[userinfo_end..]);
                changed = true;
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_password_are_hidden_everywhere_in_a_text() {
        assert_eq!(
            redact_userinfo("https://admin:PW@host:6443/"),
            "https://<redacted>@host:6443/"
        );
        assert_eq!(
            redact_userinfo("https://tok@en@10.0.0.1"),
            "https://<redacted>@10.0.0.1"
        );
        assert_eq!(
            redact_userinfo(
                "cannot reach https://a:b@one/x: error sending to \"https://c:d@two?q=1\""
            ),
            "cannot reach https://<redacted>@one/x: error sending to \"https://<redacted>@two?q=1\""
        );
        for plain in [
            "https://host:6443",
            "no url here, mail@example.com",
            "https://host/path@x",
            "",
        ] {
            assert!(
                matches!(redact_userinfo(plain), Cow::Borrowed(_)),
                "{plain}"
            );
        }
    }
}
