//! Applying a cluster's rendered objects: the namespace and the inventory (already listing them)
//! first, then the objects in snow-kube's order ([`snow_kube::apply`]).

use super::{Event, Inventory, LifecycleError, Management};
use serde_json::Value;
pub(crate) use snow_kube::apply::{object_ref, parse};

/// Applies the namespace, the inventory (already listing `objects`), then `objects` in order.
pub(crate) async fn apply_all(
    mgmt: &Management,
    inventory: &Inventory,
    objects: &[Value],
    on_event: &mut dyn FnMut(Event),
) -> Result<(), LifecycleError> {
    let first = [snow_kube::apply::namespace(), inventory.to_object()];
    snow_kube::apply::apply_each(mgmt, first.iter().chain(objects), on_event).await?;
    Ok(())
}
