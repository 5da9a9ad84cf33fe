//! A launch through the Cloud port with the class's `networkInterfaces`, with a NodeClaim
//! asking for `vpc.amazonaws.com/efa`, and with `connectionTracking`: the template's
//! interfaces as CreateLaunchTemplate wrote them (moto keeps the data it was sent).

use std::sync::Arc;

use kerf_api::v1::EC2NodeClass;
use kerf_control::ports::{Cloud, LaunchOption, LaunchRequest};
use serde_json::json;

use crate::support::moto::fresh;
use crate::userdata::{class, cloud_of, request, template_data};

const P4D: &str = "p4d.24xlarge";
const IPV4: &str = "10.100.0.0/16";

fn with_spec(patch: serde_json::Value) -> Arc<EC2NodeClass> {
    let mut v = serde_json::to_value(&*class("al2@latest", None)).unwrap();
    for (k, x) in patch.as_object().unwrap() {
        v["spec"][k] = x.clone();
    }
    Arc::new(serde_json::from_value(v).unwrap())
}

fn on_p4d(class: Arc<EC2NodeClass>, efa: bool) -> LaunchRequest {
    LaunchRequest {
        options: vec![LaunchOption {
            instance_type: P4D.into(),
            zone: "us-west-2a".into(),
            price: 21.96,
            reservation: None,
        }],
        efa_requested: efa,
        ..request(class)
    }
}

/// (card, device, type, has groups, public IP, IPv4 prefixes, has connection tracking).
type Nic = (
    Option<i32>,
    Option<i32>,
    Option<String>,
    bool,
    Option<bool>,
    Option<i32>,
    bool,
);

async fn template_nics(c: &kerf_aws::Clients) -> (Vec<Nic>, usize) {
    let lt = template_data(c).await;
    let nics = lt
        .network_interfaces()
        .iter()
        .map(|n| {
            (
                n.network_card_index(),
                n.device_index(),
                n.interface_type().map(str::to_string),
                !n.groups().is_empty(),
                n.associate_public_ip_address(),
                n.ipv4_prefix_count(),
                n.connection_tracking_specification().is_some(),
            )
        })
        .collect();
    (nics, lt.security_group_ids().len())
}

#[tokio::test]
async fn listed_interfaces_reach_the_template() {
    let (_g, moto) = fresh().await;
    let (cloud, c) = cloud_of(&moto.url, IPV4, &[P4D]).await;
    let class = with_spec(json!({
        "ipPrefixCount": 2,
        "networkInterfaces": [
            {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
            {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}
        ],
        "connectionTracking": {"tcpEstablishedTimeout": 120}
    }));
    cloud.launch(&on_p4d(class, true)).await.unwrap();
    let (nics, top_groups) = template_nics(&c).await;
    assert_eq!(top_groups, 0, "no top-level security groups");
    assert_eq!(
        nics,
        [
            (
                Some(0),
                Some(0),
                Some("interface".into()),
                true,
                None,
                Some(2),
                true
            ),
            (
                Some(1),
                Some(0),
                Some("efa-only".into()),
                true,
                None,
                None,
                false
            ),
        ],
        "the list wins over the requested EFA"
    );
}

#[tokio::test]
async fn requested_efa_makes_one_efa_interface_per_card_of_the_type() {
    let (_g, moto) = fresh().await;
    let (cloud, c) = cloud_of(&moto.url, IPV4, &[P4D]).await;
    cloud
        .launch(&on_p4d(class("al2@latest", None), true))
        .await
        .unwrap();
    let (nics, top_groups) = template_nics(&c).await;
    assert_eq!(top_groups, 0);
    let efa = |card, device| {
        (
            Some(card),
            Some(device),
            Some("efa".into()),
            true,
            None,
            None,
            false,
        )
    };
    assert_eq!(nics, [efa(0, 0), efa(1, 1), efa(2, 1), efa(3, 1)]);
    // Without the request: EC2's default interface.
    moto.reset();
    let (cloud, c) = cloud_of(&moto.url, IPV4, &[P4D]).await;
    cloud
        .launch(&on_p4d(class("al2@latest", None), false))
        .await
        .unwrap();
    let (nics, top_groups) = template_nics(&c).await;
    assert!(nics.is_empty(), "{nics:?}");
    assert_eq!(top_groups, 1);
}

#[tokio::test]
async fn connection_tracking_alone_describes_the_primary_interface() {
    let (_g, moto) = fresh().await;
    let (cloud, c) = cloud_of(&moto.url, IPV4, &[P4D]).await;
    let class = with_spec(json!({"connectionTracking": {"udpTimeout": 30}}));
    cloud.launch(&on_p4d(class, false)).await.unwrap();
    let (nics, top_groups) = template_nics(&c).await;
    assert_eq!(top_groups, 0);
    assert_eq!(nics, [(None, Some(0), None, true, None, None, true)]);
}
