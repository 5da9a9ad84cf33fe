//! `client_for` against the in-process server over HTTPS with a generated CA.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Node;
use kerf_kube::client_for;
use kerf_sim::Sim;
use kube::api::{Api, ListParams};

#[tokio::test]
async fn client_trusts_the_cluster_ca_and_sends_the_bearer_token() {
    let sim = Sim::builder().tls(true).start().await.unwrap();
    assert!(sim.url().starts_with("https://127.0.0.1:"));
    let ca = STANDARD.encode(sim.ca_pem().unwrap());
    let client = client_for(sim.url(), &ca, "k8s-aws-v1.dGVzdA").unwrap();
    let nodes: Api<Node> = Api::all(client);
    assert!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let auth = sim.requests().last().unwrap().authorization.clone();
    assert_eq!(auth.as_deref(), Some("Bearer k8s-aws-v1.dGVzdA"));

    let other = Sim::builder().tls(true).start().await.unwrap();
    let wrong_ca = STANDARD.encode(other.ca_pem().unwrap());
    let untrusting = client_for(sim.url(), &wrong_ca, "t").unwrap();
    let e = Api::<Node>::all(untrusting)
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(e, kube::Error::HyperError(_) | kube::Error::Service(_)),
        "{e:?}"
    );
}
