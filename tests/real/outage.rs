//! Kerf keeps working while its webhook is down: the configurations `kerf webhooks` prints
//! are applied to kube-apiserver, then the webhook stops answering: its address refuses
//! connections, it answers HTTP 500, or it hangs past the API server's timeout. A person's NodePool write is refused (the validation webhook fails closed),
//! but the provisioner still launches the inflate pods' node and the termination function
//! still drains and deletes it: the API server's CEL (`matchConditions`) keeps Kerf's own
//! writes away from its webhook, and pods and nodes fail open.

use jiff::SignedDuration;
use kerf_api::v1::NodeClaim;
use kerf_e2e::real::api::{apply, apply_all, status};
use kerf_e2e::real::functions::{Provisioner, Shared};
use kerf_e2e::real::webhook::WebhookServer;
use kerf_sim::world::real::webhook::Outage;
use kube::api::Api;
use serde_json::json;

use crate::observe::claims;
use crate::provisioning::{initialized_claim, provision, terminate};
use crate::setup::function;
use crate::{setup, yaml};

const CLUSTER: &str = "kerf-real";

/// How the webhook is down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Down {
    Unreachable,
    Answers500,
    TimesOut,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provisioning_and_termination_go_on_while_the_webhook_is_unreachable() {
    kerf_goes_on(Down::Unreachable).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provisioning_and_termination_go_on_while_the_webhook_answers_500() {
    kerf_goes_on(Down::Answers500).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provisioning_and_termination_go_on_while_the_webhook_times_out() {
    kerf_goes_on(Down::TimesOut).await;
}

async fn kerf_goes_on(down: Down) {
    let (cp, admin) = setup::getting_started(&format!("outage-{}", down as u8)).await;
    let shared = Shared::new(SignedDuration::from_secs(2));
    let mut prov = Provisioner::new(&shared, &function(&cp, "provisioner").await, CLUSTER);
    let hook_ctx = shared.ctx(&function(&cp, "webhook").await, CLUSTER);
    let server = WebhookServer::start(hook_ctx, prov.queue.clone(), shared.queue(), "s3cr3t").await;
    let mut configs = yaml::documents(&server.rendered(CLUSTER));
    server.trust(&mut configs);
    let _kept = match down {
        // The webhook goes away: its address now refuses every connection.
        Down::Unreachable => {
            drop(server);
            None
        }
        Down::Answers500 => {
            server.set_outage(Outage::Error);
            Some(server)
        }
        Down::TimesOut => {
            server.set_outage(Outage::Hang);
            Some(server)
        }
    };
    apply_all(&admin, &configs).await;

    // Fail closed for people: a NodePool write needs the validation webhook.
    let mut np = yaml::file("examples/getting-started/nodepool.yaml")
        .into_iter()
        .find(|d| d["kind"] == "NodePool")
        .unwrap();
    np["metadata"]["name"] = json!("while-down");
    let refused = apply(&admin, &np, false)
        .await
        .expect_err("refused while the webhook is down");
    let s = status(refused);
    assert!(matches!(s.code, 500 | 504), "{down:?}: {s:?}");
    assert!(s.message.contains("validation.kerf.dev"), "{down:?}: {s:?}");

    // Kerf itself goes on: a launch, a registration, an initialization, then termination.
    apply_all(&admin, &yaml::file("examples/getting-started/inflate.yaml")).await;
    let pods = provision(&cp, &admin, &shared, &mut prov).await;
    assert_eq!(pods.len(), 5);
    let claim = initialized_claim(&admin, &mut prov).await;
    let name = claim["metadata"]["name"].as_str().unwrap().to_string();
    terminate(&cp, &admin, &shared, &name).await;
    assert!(
        Api::<NodeClaim>::all(admin.clone())
            .get_opt(&name)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        claims(&admin)
            .await
            .iter()
            .all(|c| c["metadata"]["name"] != json!(name))
    );
    let warnings = shared.warnings();
    assert!(
        !warnings.iter().any(|w| w.contains("validation.kerf.dev")),
        "no write of Kerf's met its webhook: {warnings:#?}"
    );
}
