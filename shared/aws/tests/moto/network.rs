//! Subnet, security-group, AMI and launch-template resolution against moto.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_ec2::types::Filter;
use base64::Engine;
use kerf_aws::ami::{self, Alias, ImageTerm};
use kerf_aws::launch_template::{self, LAST_USED_TAG};
use kerf_aws::network::{self, SelectorTerm};
use kerf_aws::userdata::{self, ClusterInfo, NodeBootstrap};

use crate::seed::{self, SSM_ROOT, discovery_term, lt_spec, put_param, tag_subnets};
use crate::support::moto::fresh;
use crate::support::{CLUSTER, clients};

#[tokio::test]
async fn subnets_and_security_groups_from_selector_terms() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    let all = tag_subnets(&c, &["us-west-2a", "us-west-2b"]).await;
    let by_tag = network::subnets(&c.ec2, &[discovery_term()]).await.unwrap();
    assert_eq!(by_tag.len(), 2);
    let wildcard = SelectorTerm::tags(&[("karpenter.sh/discovery", "*")]);
    assert_eq!(network::subnets(&c.ec2, &[wildcard]).await.unwrap(), by_tag);
    let c_subnet = all.iter().find(|s| s.zone == "us-west-2c").unwrap();
    let ored = network::subnets(&c.ec2, &[discovery_term(), SelectorTerm::id(&c_subnet.id)])
        .await
        .unwrap();
    let zones: BTreeSet<_> = network::zonal_subnets(&ored).into_keys().collect();
    assert_eq!(
        zones,
        BTreeSet::from([
            "us-west-2a".into(),
            "us-west-2b".into(),
            "us-west-2c".into()
        ])
    );
    let anded = SelectorTerm {
        id: Some(c_subnet.id.clone()),
        ..discovery_term()
    };
    assert!(
        network::subnets(&c.ec2, &[anded]).await.unwrap().is_empty(),
        "fields are ANDed"
    );
    assert!(network::subnets(&c.ec2, &[]).await.is_err());

    let sg = seed::security_group(&c, "kerf-nodes").await;
    let by_name = SelectorTerm {
        name: Some("kerf-nodes".into()),
        ..Default::default()
    };
    let found = network::security_groups(&c.ec2, &[by_name]).await.unwrap();
    assert_eq!(
        found.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(),
        vec![sg.as_str()]
    );
    let tagged = network::security_groups(&c.ec2, &[discovery_term()])
        .await
        .unwrap();
    assert_eq!(tagged, found);
    let default = SelectorTerm {
        name: Some("default".into()),
        ..Default::default()
    };
    let both = network::security_groups(&c.ec2, &[discovery_term(), default])
        .await
        .unwrap();
    assert_eq!(both.len(), 2);
}

#[tokio::test]
async fn amis_from_aliases_and_terms() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    let base = format!("{SSM_ROOT}/eks/optimized-ami/1.31/amazon-linux-2023");
    put_param(
        &c,
        &format!("{base}/x86_64/standard/recommended/image_id"),
        seed::EKS_AMI,
    )
    .await;
    put_param(
        &c,
        &format!("{base}/arm64/standard/recommended/image_id"),
        seed::EKS_AMI,
    )
    .await;
    let pinned = format!(
        "{base}/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.31-v20250228/image_id"
    );
    put_param(&c, &pinned, seed::EKS_AMI).await;
    let latest = Alias::parse("al2023@latest").unwrap();
    let amis = ami::resolve_alias(&c.ssm, &c.ec2, &latest, "1.31", SSM_ROOT)
        .await
        .unwrap();
    let got: BTreeSet<_> = amis
        .iter()
        .map(|a| (a.id.as_str(), a.arch.as_str(), a.variant))
        .collect();
    let std = Some(ami::Variant::Standard);
    assert_eq!(
        got,
        BTreeSet::from([
            (seed::EKS_AMI, "x86_64", std),
            (seed::EKS_AMI, "arm64", std)
        ])
    );
    let v = Alias::parse("al2023@v20250228").unwrap();
    assert_eq!(
        ami::resolve_alias(&c.ssm, &c.ec2, &v, "1.31", SSM_ROOT)
            .await
            .unwrap()
            .len(),
        1
    );
    let br = Alias::parse("bottlerocket@latest").unwrap();
    assert!(
        ami::resolve_alias(&c.ssm, &c.ec2, &br, "1.31", SSM_ROOT)
            .await
            .unwrap_err()
            .is_not_found()
    );

    let by_name = ImageTerm {
        name: Some("amazon-eks-node-linux".into()),
        owner: Some("801119661308".into()),
        ..Default::default()
    };
    let found = ami::resolve_terms(&c.ec2, &[by_name]).await.unwrap();
    assert_eq!(
        found.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        vec![seed::EKS_AMI]
    );
    // Two tagged images made from an instance: the newer (or, same second, the later name) wins.
    let run = c
        .ec2
        .run_instances()
        .image_id(seed::EKS_AMI)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let instance = run.instances()[0].instance_id().unwrap().to_string();
    let mut made = Vec::new();
    for name in ["kerf-custom-1", "kerf-custom-2"] {
        let tag = aws_sdk_ec2::types::Tag::builder()
            .key("kerf/ami")
            .value("yes")
            .build();
        let spec = aws_sdk_ec2::types::TagSpecification::builder()
            .resource_type(aws_sdk_ec2::types::ResourceType::Image)
            .tags(tag)
            .build();
        let img = c
            .ec2
            .create_image()
            .instance_id(&instance)
            .name(name)
            .tag_specifications(spec)
            .send()
            .await
            .unwrap();
        made.push(img.image_id().unwrap().to_string());
    }
    let by_tag = ImageTerm {
        tags: BTreeMap::from([("kerf/ami".into(), "*".into())]),
        ..Default::default()
    };
    let picked = ami::resolve_terms(&c.ec2, &[by_tag]).await.unwrap();
    assert_eq!(
        picked.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        vec![made[1].as_str()]
    );
    let by_id = ImageTerm {
        id: Some(made[0].clone()),
        ..Default::default()
    };
    assert_eq!(
        ami::resolve_terms(&c.ec2, &[by_id]).await.unwrap()[0].name,
        "kerf-custom-1"
    );
}

#[tokio::test]
async fn launch_templates_are_reused_and_cleaned_up() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    let sg = seed::security_group(&c, "kerf-nodes").await;
    let cluster = ClusterInfo {
        name: CLUSTER.into(),
        endpoint: "https://example.eks.amazonaws.com".into(),
        certificate_authority: "Q0E=".into(),
        service_cidr: Some("10.100.0.0/16".into()),
    };
    let node = NodeBootstrap {
        max_pods: Some(29),
        ..Default::default()
    };
    let user_data = userdata::al2023::user_data(&cluster, &node, Some("#!/bin/bash\necho a"));
    let a = lt_spec(&user_data, vec![sg.clone()]);
    let b = lt_spec("#!/bin/bash\necho b", vec![sg]);
    let now = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).unwrap();
    let first = launch_template::ensure(&c.ec2, &a, now).await.unwrap();
    let again = launch_template::ensure(&c.ec2, &a, now).await.unwrap();
    assert_eq!(
        (first.id.clone(), first.last_used),
        (again.id.clone(), Some(now))
    );
    assert_eq!(first.name, a.name());
    let other = launch_template::ensure(&c.ec2, &b, now).await.unwrap();
    assert_ne!(other.id, first.id);
    assert_eq!(
        launch_template::list(&c.ec2, CLUSTER).await.unwrap().len(),
        2
    );
    let data = c
        .ec2
        .describe_launch_template_versions()
        .launch_template_id(&first.id)
        .send()
        .await
        .unwrap();
    let ud = data.launch_template_versions()[0]
        .launch_template_data()
        .and_then(|d| d.user_data())
        .unwrap();
    let ud = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(ud)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(ud, user_data);
    assert!(ud.contains("kind\": \"NodeConfig") && ud.contains("karpenter.sh/unregistered"));
    // A template made two hours later: unused since half an hour before then, `a` and `b`
    // go, and it stays.
    let later = now + jiff::SignedDuration::from_hours(2);
    let d = lt_spec("#!/bin/bash\necho d", a.security_group_ids.clone());
    launch_template::ensure(&c.ec2, &d, later).await.unwrap();
    let since = later - jiff::SignedDuration::from_mins(30);
    let mut deleted = launch_template::delete_unused(&c.ec2, CLUSTER, since)
        .await
        .unwrap();
    deleted.sort();
    let mut gone = vec![a.name(), b.name()];
    gone.sort();
    assert_eq!(deleted, gone);
    let left = launch_template::list(&c.ec2, CLUSTER).await.unwrap();
    assert_eq!(
        left.iter().map(|l| l.name.clone()).collect::<Vec<_>>(),
        vec![d.name()]
    );
    // Nothing unused since long ago: nothing deleted.
    let past = jiff::Timestamp::UNIX_EPOCH;
    assert!(
        launch_template::delete_unused(&c.ec2, CLUSTER, past)
            .await
            .unwrap()
            .is_empty()
    );
    // A launch five minutes after `d` was made leaves its last use as it is; one two hours
    // on moves it to then. (Read with DescribeTags: moto's DescribeLaunchTemplates answers
    // with the tags a template was created with.)
    let id = left[0].id.clone();
    let last_used = || {
        let ec2 = c.ec2.clone();
        let id = id.clone();
        async move {
            let out = ec2
                .describe_tags()
                .filters(Filter::builder().name("resource-id").values(id).build())
                .filters(Filter::builder().name("key").values(LAST_USED_TAG).build())
                .send()
                .await
                .unwrap();
            out.tags()[0].value().unwrap().to_string()
        }
    };
    let soon = later + jiff::SignedDuration::from_mins(5);
    launch_template::ensure(&c.ec2, &d, soon).await.unwrap();
    assert_eq!(last_used().await, later.to_string());
    let again = later + jiff::SignedDuration::from_hours(2);
    launch_template::ensure(&c.ec2, &d, again).await.unwrap();
    assert_eq!(last_used().await, again.to_string());
}

#[tokio::test]
async fn amis_from_ssm_parameters_named_by_the_class() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    put_param(&c, "/team/golden-ami", seed::EKS_AMI).await;
    put_param(&c, "/team/not-an-ami", "hello").await;
    let ids = ami::ids_from_parameters(&c.ssm, &["/team/golden-ami".to_string()])
        .await
        .unwrap();
    assert_eq!(ids, vec![seed::EKS_AMI.to_string()]);
    let wrong = ami::ids_from_parameters(&c.ssm, &["/team/not-an-ami".to_string()])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        wrong.contains("not an AMI id") && wrong.contains("ssmParameter"),
        "{wrong}"
    );
    let missing = ami::ids_from_parameters(&c.ssm, &["/team/none".to_string()])
        .await
        .unwrap_err()
        .to_string();
    assert!(missing.contains("does not exist"), "{missing}");
}
