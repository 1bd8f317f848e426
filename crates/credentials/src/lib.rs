//! Snow device credentials and CA bundle.
//!
//! Status: a skeleton. The parsers, checks and encodings arrive with the credentials issue.
