//! The text of an error and its causes, for messages: a wrapped error (a TLS failure inside an
//! HTTP error, a refused connection inside a kube error) then says what really happened.

/// `error: cause: cause of cause`, each cause left out when the text so far already holds it
/// (many errors quote their source in their own message).
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("middle: {0}")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn causes_are_joined_and_quoted_ones_left_out() {
        let err = Outer(Middle(std::io::Error::other("refused")));
        // `middle` quotes its cause, so `refused` is said once.
        assert_eq!(error_chain(&err), "outer: middle: refused");
    }
}
