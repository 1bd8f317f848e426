//! The handlebars registry: every template embedded in the crate, registered once, rendered in
//! strict mode with HTML escaping off and one `yaml` helper that does all YAML quoting.

use handlebars::{
    Context, Handlebars, Helper, HelperResult, Output, RenderContext, RenderError,
    RenderErrorReason,
};
use std::sync::LazyLock;

const TEMPLATES: &[(&str, &str)] = &[
    ("cluster", include_str!("../templates/cluster.yaml.hbs")),
    (
        "snow-cluster",
        include_str!("../templates/snow-cluster.yaml.hbs"),
    ),
    (
        "machine-template",
        include_str!("../templates/machine-template.yaml.hbs"),
    ),
    ("ip-pool", include_str!("../templates/ip-pool.yaml.hbs")),
    (
        "kubeadm-control-plane",
        include_str!("../templates/kubeadm-control-plane.yaml.hbs"),
    ),
    (
        "etcdadm-cluster",
        include_str!("../templates/etcdadm-cluster.yaml.hbs"),
    ),
    (
        "kubeadm-config-template",
        include_str!("../templates/kubeadm-config-template.yaml.hbs"),
    ),
    (
        "machine-deployment",
        include_str!("../templates/machine-deployment.yaml.hbs"),
    ),
    (
        "machine-health-check",
        include_str!("../templates/machine-health-check.yaml.hbs"),
    ),
    ("secret", include_str!("../templates/secret.yaml.hbs")),
];

/// `{{yaml value}}` writes a scalar inline; `{{yaml value N}}` writes a value as block YAML
/// indented by N spaces.
fn yaml_helper(
    h: &Helper<'_>,
    _: &Handlebars<'_>,
    _: &Context,
    _: &mut RenderContext<'_, '_>,
    out: &mut dyn Output,
) -> HelperResult {
    let value = h
        .param(0)
        .ok_or(RenderErrorReason::ParamNotFoundForIndex("yaml", 0))?
        .value();
    match h.param(1).and_then(|p| p.value().as_u64()) {
        Some(indent) => out.write(&crate::yaml::emit(value, indent as usize))?,
        None => out.write(&crate::yaml::scalar(value))?,
    }
    Ok(())
}

static ENGINE: LazyLock<Result<Handlebars<'static>, String>> = LazyLock::new(|| {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    hb.register_helper("yaml", Box::new(yaml_helper));
    for (name, text) in TEMPLATES {
        hb.register_template_string(name, *text)
            .map_err(|e| format!("template {name}: {e}"))?;
    }
    Ok(hb)
});

/// Renders template `name` with `context`.
pub(crate) fn render(name: &str, context: &serde_json::Value) -> Result<String, String> {
    let engine = ENGINE.as_ref().map_err(Clone::clone)?;
    let text = engine
        .render(name, context)
        .map_err(|e: RenderError| e.to_string())?;
    Ok(format!("{}\n", text.trim_end()))
}
