//! The controller's webhooks on the Kubernetes API stand-in as the installed component has them:
//! the component's ServiceAccount and roles, Service and webhook configurations
//! (`capi_render::controller::objects`),
//! their `caBundle` a test CA's (what cert-manager's cainjector writes), and a serving
//! certificate of that CA for the Service's DNS name in a directory, as the Certificate's Secret
//! is mounted. The stand-in calls the webhooks at the address the test maps for the Service.

use base64::Engine as _;
use capi_render::controller::{self, WEBHOOK_SERVICE};
use snow_test_devices::TestCa;
use snow_test_kube::KubeStandIn;
use std::{net::SocketAddr, path::Path};

/// The Service's DNS name, the one the API server checks the certificate against.
fn service_host() -> String {
    format!("{WEBHOOK_SERVICE}.{}.svc", controller::NAMESPACE)
}

/// Writes `tls.crt` and `tls.key` for the Service into `dir` and stores the component's
/// Namespace, ServiceAccount, roles and their bindings, Service and webhook configurations
/// (trusting the CA) on `api`; the webhooks are called at `addr` once it serves.
pub(crate) fn install(api: &KubeStandIn, dir: &Path, addr: SocketAddr) {
    let ca = TestCa::new("webhook CA").unwrap();
    let cert = ca.server_certificate_for_name(&service_host()).unwrap();
    std::fs::write(dir.join("tls.crt"), &cert.cert_pem).unwrap();
    std::fs::write(dir.join("tls.key"), &cert.key_pem).unwrap();
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca.pem());
    let component = controller::ControllerComponent {
        image: "mirror:5000/snowctl/controller:v1".into(),
        proxy: None,
        release: controller::ReleaseFiles::default(),
    };
    for mut object in controller::objects(&component) {
        match object["kind"].as_str() {
            Some("ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration") => {
                for hook in object["webhooks"].as_array_mut().unwrap() {
                    hook["clientConfig"]["caBundle"] = bundle.clone().into();
                }
            }
            Some(
                "Namespace" | "ServiceAccount" | "ClusterRole" | "ClusterRoleBinding" | "Role"
                | "RoleBinding" | "Service",
            ) => {}
            _ => continue,
        }
        api.put(object).unwrap();
    }
    api.map_service(controller::NAMESPACE, WEBHOOK_SERVICE, 443, addr);
}
