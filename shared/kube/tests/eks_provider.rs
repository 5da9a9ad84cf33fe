//! `EksClientProvider`: DescribeCluster (against a local fake EKS endpoint) plus a token, to
//! a working client for the in-process API server over HTTPS.
#![cfg(feature = "eks")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use aws_credential_types::Credentials;
use aws_credential_types::provider::SharedCredentialsProvider;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Node;
use kerf_kube::eks::provider::{EksClientProvider, aws_config};
use kerf_sim::Sim;
use kube::api::{Api, ListParams};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

async fn fake_eks(endpoint: String, ca: String, calls: Arc<AtomicUsize>) -> String {
    let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let (endpoint, ca, calls) = (endpoint.clone(), ca.clone(), calls.clone());
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            assert_eq!(req.uri().path(), "/clusters/demo");
            let body = json!({"cluster": {"name": "demo", "endpoint": endpoint,
                "certificateAuthority": {"data": ca}, "status": "ACTIVE"}});
            ([("content-type", "application/json")], body.to_string())
        }
    });
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", tcp.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(tcp, app).await });
    url
}

#[tokio::test]
async fn provider_discovers_the_cluster_and_authenticates() {
    let sim = Sim::builder().tls(true).start().await.unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let eks_url = fake_eks(
        sim.url().to_string(),
        STANDARD.encode(sim.ca_pem().unwrap()),
        calls.clone(),
    )
    .await;
    let sdk = aws_config::SdkConfig::builder()
        .region(aws_config::Region::new("us-east-1"))
        .credentials_provider(SharedCredentialsProvider::new(Credentials::for_tests()))
        .endpoint_url(eks_url)
        .behavior_version(aws_config::BehaviorVersion::latest())
        .build();
    let provider = EksClientProvider::new(&sdk, "demo").unwrap();
    let client = provider.client().await.unwrap();
    Api::<Node>::all(client)
        .list(&ListParams::default())
        .await
        .unwrap();
    let auth = sim
        .requests()
        .last()
        .unwrap()
        .authorization
        .clone()
        .unwrap();
    assert!(auth.starts_with("Bearer k8s-aws-v1."), "{auth}");
    provider.client().await.unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "endpoint and fresh client are cached"
    );
}
