//! Text from archives and registries (image names, digests, file names, a registry's error
//! body) as it may be shown on a terminal: control characters escaped, so that a name holding
//! an escape sequence cannot recolour, move or rewrite what a terminal shows.

use std::borrow::Cow;

/// `text` with every control character (C0 with the line feed, DEL, C1) written as its Rust
/// escape (`\u{1b}`, `\n`, `\t`, `\r`); the text itself when it holds none. Multi-line text is
/// escaped line by line by the caller.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert!(matches!(
            printable("public.ecr.aws/a/b:v1 ü"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            printable("a\u{1b}[2Jb\u{9b}31m\u{7f}\r\n\t\0"),
            "a\\u{1b}[2Jb\\u{9b}31m\\u{7f}\\r\\n\\t\\0"
        );
    }
}
