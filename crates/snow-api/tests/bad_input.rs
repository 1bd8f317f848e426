//! Hostile and broken input: every case is a finding or an input error, never a panic.

use proptest::prelude::*;
use snow_api::{InputError, check, decode, yaml::YamlError};

#[test]
fn each_bad_input_gets_a_finding_or_an_input_error() {
    let cases: &[(&str, &str)] = &[
        ("empty", ""),
        ("whitespace", "\n\n   \n"),
        ("list document", "- a\n- b\n"),
        ("scalar document", "just a string\n"),
        (
            "wrong type",
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec:\n  controlPlaneConfiguration: {count: three}\n",
        ),
        (
            "negative count",
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec:\n  controlPlaneConfiguration: {count: -3}\n",
        ),
        (
            "unknown kind",
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereMachineConfig\nmetadata: {name: x}\n",
        ),
        ("no kind", "apiVersion: v1\nmetadata: {name: x}\n"),
        (
            "metadata is a list",
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: [a]\n",
        ),
        (
            "spec is a scalar",
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: 3\n",
        ),
        (
            "non-string key",
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {[a]: b}\n",
        ),
        (
            "two clusters",
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a1}\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: b1}\n",
        ),
    ];
    for (name, text) in cases {
        let report = check(text).unwrap_or_else(|e| panic!("{name}: unexpected input error {e}"));
        assert!(!report.is_valid(), "{name} was accepted");
        assert!(
            report.findings.iter().any(|f| f.is_error()),
            "{name}: no error finding"
        );
    }
}

#[test]
fn syntax_errors_and_binary_are_input_errors() {
    assert!(matches!(
        check("a: [1,\n"),
        Err(InputError::Yaml(YamlError::Syntax { .. }))
    ));
    assert!(matches!(
        check("a: b\n c: d\n"),
        Err(InputError::Yaml(YamlError::Syntax { .. }))
    ));
    assert!(matches!(
        decode(&[0x89, b'P', b'N', b'G', 0, 0]),
        Err(InputError::NotText { .. })
    ));
}

#[test]
fn a_billion_laughs_is_refused_quickly() {
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["b", "c", "d", "e", "f", "g", "h", "i"];
    let mut prev = "a";
    for name in names {
        text.push_str(&format!("{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
        prev = name;
    }
    assert!(matches!(
        check(&text),
        Err(InputError::Yaml(YamlError::TooManyNodes { .. }))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Arbitrary YAML-ish text never panics the reader.
    #[test]
    fn arbitrary_yamlish_text_never_panics(text in "([a-zA-Z0-9:\\-\\[\\]{},&*!|>'\" #\n]|apiVersion|kind|Cluster|SnowMachineConfig|spec|metadata|---|anywhere.eks.amazonaws.com/v1alpha1){0,200}") {
        let _ = check(&text);
    }

    /// Valid structure with arbitrary scalars never panics either.
    #[test]
    fn arbitrary_values_in_a_real_spec_never_panic(a in ".{0,20}", b in "-?[0-9]{0,25}", c in "[a-z.:/0-9]{0,30}") {
        let text = format!(
            "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {{name: {a:?}}}\nspec:\n  kubernetesVersion: {c}\n  controlPlaneConfiguration: {{count: {b}, endpoint: {{host: {c:?}}}}}\n  workerNodeGroupConfigurations: [{{count: {b}, name: {a:?}}}]\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: SnowIPPool\nmetadata: {{name: p}}\nspec: {{pools: [{{ipStart: {c:?}, ipEnd: {c:?}, subnet: {c:?}, gateway: {a:?}}}]}}\n"
        );
        let _ = check(&text);
    }
}
