//! The `cluster_spec` fuzz target over a bounded generated corpus: stable Rust, every CI run.

use snow_api::fuzz::{cluster_spec, mutations};

const VALID: &str = include_str!("specs/valid-full.yaml");

#[test]
fn the_cluster_spec_target_returns_on_a_generated_corpus() {
    let bomb = "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n";
    let seeds: [&[u8]; 3] = [VALID.as_bytes(), bomb.as_bytes(), b"kind: Cluster\n"];
    let corpus = mutations(&seeds, 2_000, 0x5eed_0013);
    assert_eq!(corpus.len(), 2_000);
    // The generator is deterministic and does mutate.
    assert_eq!(corpus, mutations(&seeds, 2_000, 0x5eed_0013));
    assert!(
        corpus
            .iter()
            .filter(|c| !seeds.contains(&c.as_slice()))
            .count()
            > 1_800
    );
    for input in &corpus {
        cluster_spec(input);
    }
}
