//! The management components as one stack: the provider stack ([`crate::components`]) and the
//! snowctl controller after it (its webhooks and roles concern the providers' kinds, so it goes
//! last), installed ([`init`]), compared with what is installed ([`upgrade_plan`]) and upgraded
//! after a backup of every cluster there ([`upgrade`]), through `snow_lifecycle::init`.

use crate::ProvisionError;
use capi_render::controller::{ControllerComponent, MAX_RELEASE_BYTES, Proxy, ReleaseFiles};
use snow_api::ValidSpec;
use snow_lifecycle::{
    Backup, Event, Management, MoveOptions,
    init::{
        self, InitOptions, Initialized,
        components::ComponentObjects,
        upgrade::{UpgradePlan, Upgraded},
    },
};
use std::path::Path;

/// The snowctl controller as a management component, with `image`, else, for a spec with a
/// registry mirror, the image where the mirror holds it
/// (`<mirror endpoint>:<port>/snowctl/controller:v<version>`); the spec's proxy settings given
/// to it and the release catalog (`release`) mounted for it. `Ok(None)` when neither gives an
/// image: no registry publishes it, so none is made up. A catalog larger than the ConfigMap the
/// controller reads it from is [`ProvisionError::CatalogTooLarge`].
pub fn controller_component(
    image: Option<&str>,
    spec: Option<&ValidSpec>,
    release: &ReleaseFiles,
) -> Result<Option<ComponentObjects>, ProvisionError> {
    let mirror = spec
        .and_then(|s| s.cluster.spec.registry_mirror_configuration.as_ref())
        .map(|m| snow_api::release::controller_image(capi_render::RegistryMirror::new(m).base()));
    let Some(image) = image.map(str::to_owned).or(mirror) else {
        return Ok(None);
    };
    if release.size() > MAX_RELEASE_BYTES {
        return Err(ProvisionError::CatalogTooLarge {
            bytes: release.size(),
            max: MAX_RELEASE_BYTES,
        });
    }
    let component = ControllerComponent {
        image,
        proxy: spec.and_then(Proxy::of),
        release: release.clone(),
    };
    Ok(Some(init::controller::component(&component)))
}

/// The management components in install order: the provider stack as given, then the
/// controller, when there is one.
pub fn stack(
    providers: Vec<ComponentObjects>,
    controller: Option<ComponentObjects>,
) -> Vec<ComponentObjects> {
    let mut stack = providers;
    stack.extend(controller);
    stack
}

/// Installs `stack` (from [`stack`]) on `mgmt`, completing what is missing; a component of
/// another version there is refused, not upgraded.
pub async fn init(
    mgmt: &Management,
    stack: &[ComponentObjects],
    options: &InitOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Initialized, ProvisionError> {
    Ok(init::init(mgmt, stack, options, on_event).await?)
}

/// What [`upgrade`] would do to each component of `stack`: reads only.
pub async fn upgrade_plan(
    mgmt: &Management,
    stack: &[ComponentObjects],
) -> Result<UpgradePlan, ProvisionError> {
    Ok(init::upgrade::plan(mgmt, stack).await?)
}

/// Upgrades the installed components to `stack`; with `backup`, every cluster snowctl manages on
/// `mgmt` is first backed up into a new directory under it (`<dir>/<cluster>/<cluster>-backup-
/// <time>`), and each backup said as an [`Event::Note`] in the caller's words (`say_backup`:
/// where it is and how the caller restores it) before anything is upgraded. A component newer
/// than the stack's is refused before anything is applied.
pub async fn upgrade(
    mgmt: &Management,
    stack: &[ComponentObjects],
    options: &InitOptions,
    backup: Option<&Path>,
    on_event: &mut dyn FnMut(Event),
    say_backup: &dyn Fn(&Backup) -> String,
) -> Result<Upgraded, ProvisionError> {
    if let Some(dir) = backup {
        let moving = MoveOptions::default();
        let written =
            snow_lifecycle::backup_all_before_upgrade(mgmt, dir, &moving, on_event).await?;
        for backup in &written {
            on_event(Event::Note(say_backup(backup)));
        }
    }
    Ok(init::upgrade::apply(mgmt, stack, options, on_event).await?)
}
