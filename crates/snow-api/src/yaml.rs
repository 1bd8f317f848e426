//! A YAML document tree that remembers where every node came from.
//!
//! serde-based YAML readers stop at the first error and forget positions once a value is built.
//! Static validation needs both: every unknown field, wrong type and rule violation reported at
//! once, each with its line and column. So documents are read into this small tree first (with
//! the same `granit-parser` that serde-saphyr uses), and typed afterwards against the CRD schema.

use crate::{finding::Location, limits};
use granit_parser::{Event, Parser, ScalarStyle, Span};
use std::{collections::HashMap, fmt};

/// Limits that keep hostile input (YAML bombs, deep nesting, huge files) cheap to reject.
///
/// The defaults are the constants of [`crate::limits`].
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// The largest input accepted, in bytes.
    pub max_bytes: usize,
    /// The most nodes all documents may hold once aliases are expanded.
    pub max_nodes: usize,
    /// The most scalar bytes (keys and values) all documents may hold once aliases are
    /// expanded: an alias to a long string costs its length again.
    pub max_expanded_bytes: usize,
    /// The deepest nesting of collections.
    pub max_depth: usize,
    /// The most documents in one stream.
    pub max_documents: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_bytes: limits::MAX_INPUT_BYTES,
            max_nodes: limits::MAX_NODES,
            max_expanded_bytes: limits::MAX_EXPANDED_BYTES,
            max_depth: limits::MAX_DEPTH,
            max_documents: limits::MAX_DOCUMENTS,
        }
    }
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A scalar with its text after escape processing, and whether it was written plain.
    Scalar {
        /// The text.
        value: String,
        /// True for plain (unquoted, non-block) scalars: only those can be numbers, booleans or
        /// null.
        plain: bool,
    },
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in source order. Keys are nodes so that their positions are kept.
    Map(Vec<(Node, Node)>),
}

/// A YAML node and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The content.
    pub kind: NodeKind,
    /// Where the node starts (1-based line and column).
    pub at: Location,
}

impl Node {
    /// Whether this is a null: a plain `null`, `Null`, `NULL`, `~` or an empty plain scalar.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar { value, plain: true }
            if matches!(value.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// The scalar text, if this is a scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The value of `key` in a mapping node.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// A short description of what the node is, for messages ("a list", "a mapping", ...).
    pub fn describe(&self) -> &'static str {
        match &self.kind {
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a mapping",
            NodeKind::Scalar { .. } if self.is_null() => "null",
            NodeKind::Scalar { plain: false, .. } => "a quoted string",
            NodeKind::Scalar { .. } => "a scalar",
        }
    }
}

/// One document of a stream: its root node (absent for an empty document) and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The root node; `None` when the document is empty.
    pub root: Option<Node>,
    /// Where the document starts.
    pub at: Location,
    /// 0-based index of the document in the stream.
    pub index: usize,
}

/// Input that is not YAML at all, or that exceeds the budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum YamlError {
    /// The YAML syntax is broken.
    #[error("YAML syntax error at line {}, column {}: {message}", at.line, at.column)]
    Syntax {
        /// What the parser said.
        message: String,
        /// Where.
        at: Location,
    },
    /// The input is larger than the budget allows.
    #[error("input is {size} bytes, more than the {limit} bytes accepted")]
    TooLarge {
        /// Bytes given.
        size: usize,
        /// Bytes allowed.
        limit: usize,
    },
    /// Aliases or sheer size expand beyond the node budget (a "billion laughs" document).
    #[error("the documents expand to more than {limit} nodes (aliases are expanded); refusing to read further at line {}, column {}", at.line, at.column)]
    TooManyNodes {
        /// Nodes allowed.
        limit: usize,
        /// Where the budget ran out.
        at: Location,
    },
    /// Aliases expand the documents' scalars beyond the byte budget (a long string anchored
    /// and aliased many times).
    #[error("the documents expand to more than {limit} bytes of text (aliases are expanded); refusing to read further at line {}, column {}", at.line, at.column)]
    TooManyBytes {
        /// Expanded scalar bytes allowed.
        limit: usize,
        /// Where the budget ran out.
        at: Location,
    },
    /// Collections nest deeper than the budget allows.
    #[error("nesting deeper than {limit} levels at line {}, column {}", at.line, at.column)]
    TooDeep {
        /// Depth allowed.
        limit: usize,
        /// Where.
        at: Location,
    },
    /// More documents than the budget allows.
    #[error("more than {limit} documents in one stream")]
    TooManyDocuments {
        /// Documents allowed.
        limit: usize,
    },
}

impl YamlError {
    /// Where the error is, when it has a position.
    pub fn location(&self) -> Option<Location> {
        match self {
            YamlError::Syntax { at, .. }
            | YamlError::TooManyNodes { at, .. }
            | YamlError::TooManyBytes { at, .. }
            | YamlError::TooDeep { at, .. } => Some(*at),
            YamlError::TooLarge { .. } | YamlError::TooManyDocuments { .. } => None,
        }
    }
}

fn location(span: &Span) -> Location {
    Location {
        line: span.start.line().max(1),
        column: span.start.col() + 1,
    }
}

/// Reads every document of a YAML stream into located trees.
///
/// Anchors and aliases are expanded (each alias counts its whole subtree, nodes and scalar bytes,
/// against the budget), so the result is plain data. Tags are ignored.
pub fn parse_stream(text: &str, budget: Budget) -> Result<Vec<Document>, YamlError> {
    if text.len() > budget.max_bytes {
        return Err(YamlError::TooLarge {
            size: text.len(),
            limit: budget.max_bytes,
        });
    }
    let mut reader = Reader {
        parser: Parser::new_from_str(text),
        budget,
        nodes: 0,
        bytes: 0,
    };
    reader.stream()
}

struct Reader<'a> {
    parser: Parser<'a, granit_parser::StrInput<'a>>,
    budget: Budget,
    nodes: usize,
    bytes: usize,
}

/// Builds one collection while its events arrive.
enum Frame {
    Seq {
        items: Vec<Node>,
        at: Location,
        anchor: usize,
    },
    Map {
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        at: Location,
        anchor: usize,
    },
}

impl<'a> Reader<'a> {
    fn next(&mut self) -> Result<Option<(Event<'a>, Span)>, YamlError> {
        match self.parser.next_event() {
            None => Ok(None),
            Some(Ok((event, span))) => Ok(Some((event, span))),
            Some(Err(err)) => {
                let mark = err.marker();
                Err(YamlError::Syntax {
                    message: err.info(),
                    at: Location {
                        line: mark.line().max(1),
                        column: mark.col() + 1,
                    },
                })
            }
        }
    }

    /// Charges `cost` (nodes and scalar bytes) against the budget.
    fn count(&mut self, cost: Cost, at: Location) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(cost.nodes);
        if self.nodes > self.budget.max_nodes {
            return Err(YamlError::TooManyNodes {
                limit: self.budget.max_nodes,
                at,
            });
        }
        self.bytes = self.bytes.saturating_add(cost.bytes);
        if self.bytes > self.budget.max_expanded_bytes {
            return Err(YamlError::TooManyBytes {
                limit: self.budget.max_expanded_bytes,
                at,
            });
        }
        Ok(())
    }

    fn stream(&mut self) -> Result<Vec<Document>, YamlError> {
        let mut documents = Vec::new();
        while let Some((event, span)) = self.next()? {
            match event {
                Event::DocumentStart(..) => {
                    if documents.len() >= self.budget.max_documents {
                        return Err(YamlError::TooManyDocuments {
                            limit: self.budget.max_documents,
                        });
                    }
                    let index = documents.len();
                    // An empty document reads as a null scalar: treat it as no document.
                    let root = self.document()?.filter(|node| !node.is_null());
                    documents.push(Document {
                        root,
                        at: location(&span),
                        index,
                    });
                }
                Event::StreamEnd => break,
                _ => {}
            }
        }
        Ok(documents)
    }

    /// Reads the events of one document up to its end; returns its root node.
    fn document(&mut self) -> Result<Option<Node>, YamlError> {
        let mut anchors: HashMap<usize, Node> = HashMap::new();
        let mut stack: Vec<Frame> = Vec::new();
        let mut root: Option<Node> = None;
        loop {
            let Some((event, span)) = self.next()? else {
                return Ok(root);
            };
            let at = location(&span);
            let finished: Node = match event {
                Event::DocumentEnd | Event::StreamEnd => return Ok(root),
                Event::Scalar(value, style, anchor, _) => {
                    self.count(
                        Cost {
                            nodes: 1,
                            bytes: value.len(),
                        },
                        at,
                    )?;
                    let plain = style == ScalarStyle::Plain;
                    let node = Node {
                        kind: NodeKind::Scalar {
                            value: value.into_owned(),
                            plain,
                        },
                        at,
                    };
                    if anchor != 0 {
                        anchors.insert(anchor, node.clone());
                    }
                    node
                }
                Event::Alias(id) => {
                    // A known anchor is copied in full; each copy counts (before it is made),
                    // which defuses bombs.
                    let Some(target) = anchors.get(&id) else {
                        return Err(YamlError::Syntax {
                            message: "alias to an unknown anchor".into(),
                            at,
                        });
                    };
                    self.count(cost(target), at)?;
                    Node {
                        kind: target.kind.clone(),
                        at,
                    }
                }
                Event::SequenceStart(_, anchor, _) => {
                    self.count(Cost::COLLECTION, at)?;
                    self.push(
                        &mut stack,
                        Frame::Seq {
                            items: Vec::new(),
                            at,
                            anchor,
                        },
                        at,
                    )?;
                    continue;
                }
                Event::MappingStart(_, anchor, _) => {
                    self.count(Cost::COLLECTION, at)?;
                    let frame = Frame::Map {
                        entries: Vec::new(),
                        key: None,
                        at,
                        anchor,
                    };
                    self.push(&mut stack, frame, at)?;
                    continue;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let Some(frame) = stack.pop() else { continue };
                    let (node, anchor) = match frame {
                        Frame::Seq { items, at, anchor } => (
                            Node {
                                kind: NodeKind::Seq(items),
                                at,
                            },
                            anchor,
                        ),
                        Frame::Map {
                            entries,
                            at,
                            anchor,
                            ..
                        } => (
                            Node {
                                kind: NodeKind::Map(entries),
                                at,
                            },
                            anchor,
                        ),
                    };
                    if anchor != 0 {
                        anchors.insert(anchor, node.clone());
                    }
                    node
                }
                _ => continue,
            };
            match stack.last_mut() {
                None => root = Some(finished),
                Some(Frame::Seq { items, .. }) => items.push(finished),
                Some(Frame::Map { entries, key, .. }) => match key.take() {
                    None => *key = Some(finished),
                    Some(k) => entries.push((k, finished)),
                },
            }
        }
    }

    fn push(&self, stack: &mut Vec<Frame>, frame: Frame, at: Location) -> Result<(), YamlError> {
        if stack.len() >= self.budget.max_depth {
            return Err(YamlError::TooDeep {
                limit: self.budget.max_depth,
                at,
            });
        }
        stack.push(frame);
        Ok(())
    }
}

/// What a tree costs against the budget: its nodes and its scalar bytes.
#[derive(Debug, Clone, Copy)]
struct Cost {
    nodes: usize,
    bytes: usize,
}

impl Cost {
    /// A sequence or mapping start: one node, no text.
    const COLLECTION: Cost = Cost { nodes: 1, bytes: 0 };

    fn add(self, other: Cost) -> Cost {
        Cost {
            nodes: self.nodes.saturating_add(other.nodes),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }
}

/// What an alias to `node` costs: every node and scalar byte of its tree.
fn cost(node: &Node) -> Cost {
    match &node.kind {
        NodeKind::Scalar { value, .. } => Cost {
            nodes: 1,
            bytes: value.len(),
        },
        NodeKind::Seq(items) => items.iter().map(cost).fold(Cost::COLLECTION, Cost::add),
        NodeKind::Map(entries) => entries
            .iter()
            .map(|(k, v)| cost(k).add(cost(v)))
            .fold(Cost::COLLECTION, Cost::add),
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            NodeKind::Scalar { value, .. } => f.write_str(value),
            NodeKind::Seq(items) => write!(f, "[{} items]", items.len()),
            NodeKind::Map(entries) => write!(f, "{{{} entries}}", entries.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Document>, YamlError> {
        parse_stream(text, Budget::default())
    }

    #[test]
    fn keeps_positions_and_raw_scalars() {
        let docs = parse("a: 1.30\nb:\n  - x\n  - 'y'\n---\nc: d\n").unwrap();
        assert_eq!(docs.len(), 2);
        let root = docs[0].root.as_ref().unwrap();
        let a = root.get("a").unwrap();
        assert_eq!(a.as_str(), Some("1.30"));
        assert_eq!(a.at, Location { line: 1, column: 4 });
        let NodeKind::Seq(items) = &root.get("b").unwrap().kind else {
            panic!("not a seq")
        };
        assert_eq!(items[1].at, Location { line: 4, column: 5 });
        assert_eq!(
            items[1].kind,
            NodeKind::Scalar {
                value: "y".into(),
                plain: false
            }
        );
        assert_eq!(docs[1].root.as_ref().unwrap().get("c").unwrap().at.line, 6);
    }

    #[test]
    fn syntax_errors_have_positions() {
        let err = parse("a: [1, 2\nb: c\n").unwrap_err();
        assert!(matches!(err, YamlError::Syntax { .. }), "{err:?}");
        assert!(err.location().is_some());
    }

    #[test]
    fn empty_documents_have_no_root() {
        assert!(parse("").unwrap().is_empty() || parse("").unwrap()[0].root.is_none());
        let docs = parse("---\n---\na: b\n").unwrap();
        assert!(docs[0].root.is_none());
        assert!(docs.last().unwrap().root.is_some());
    }

    #[test]
    fn aliases_are_expanded_and_bombs_are_bounded() {
        let docs = parse("a: &x {k: v}\nb: *x\n").unwrap();
        assert_eq!(
            docs[0]
                .root
                .as_ref()
                .unwrap()
                .get("b")
                .unwrap()
                .get("k")
                .unwrap()
                .as_str(),
            Some("v")
        );
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in 'b'..='k' {
            bomb.push_str(&format!(
                "{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = name;
        }
        assert!(matches!(parse(&bomb), Err(YamlError::TooManyNodes { .. })));
    }

    /// A 1 MB string anchored once and aliased 1,000 times is a 1 MB file that would expand to
    /// 1 GB: the byte budget stops it after a few dozen copies.
    #[test]
    fn aliases_of_long_strings_are_bounded_in_bytes() {
        let long = "x".repeat(1 << 20);
        let mut text = format!("a: &a \"{long}\"\nb:\n");
        for _ in 0..1_000 {
            text.push_str("  - *a\n");
        }
        let err = parse(&text).unwrap_err();
        assert!(
            matches!(err, YamlError::TooManyBytes { limit, .. } if limit == limits::MAX_EXPANDED_BYTES),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains(&limits::MAX_EXPANDED_BYTES.to_string()),
            "{message}"
        );
        assert!(err.location().is_some_and(|at| at.line > 2));
        // Ten copies fit the budget: every alias is a full copy.
        let few = format!("a: &a \"{long}\"\nb: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n");
        let docs = parse(&few).unwrap();
        let NodeKind::Seq(items) = &docs[0].root.as_ref().unwrap().get("b").unwrap().kind else {
            panic!("not a seq")
        };
        assert_eq!(items.len(), 10);
        assert!(
            items
                .iter()
                .all(|item| item.as_str() == Some(long.as_str()))
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(parse(&deep).is_err());
    }
}
