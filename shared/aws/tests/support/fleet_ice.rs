//! CreateFleet with injected InsufficientInstanceCapacity: blocked overrides are removed from
//! the request, the rest is launched by moto (which picks the first remaining override), and
//! the blocked ones come back in `errorSet` as AWS reports them. With nothing left, the answer
//! is synthesised: no instance, only errors.

use std::collections::BTreeMap;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Response;

use super::form;
use super::proxy::forward;

/// Which overrides fail: `zone` / `capacity_type` `None` match any.
#[derive(Clone, Debug)]
pub struct IceRule {
    pub instance_type: String,
    pub zone: Option<String>,
    pub capacity_type: Option<String>,
    /// The per-override error code, e.g. `InsufficientInstanceCapacity`.
    pub code: String,
}

impl IceRule {
    fn matches(&self, itype: &str, zone: &str, lifecycle: &str) -> bool {
        self.instance_type == itype
            && self.zone.as_deref().is_none_or(|z| z == zone)
            && self.capacity_type.as_deref().is_none_or(|c| c == lifecycle)
    }
}

#[derive(Default)]
struct Config {
    /// Fields of the config other than overrides (`LaunchTemplateSpecification.*`).
    fields: Vec<(String, String)>,
    overrides: BTreeMap<usize, Vec<(String, String)>>,
}

/// Splits the form into other pairs and launch template configs by index.
fn split(pairs: Vec<(String, String)>) -> (Vec<(String, String)>, BTreeMap<usize, Config>) {
    let mut rest = Vec::new();
    let mut cfgs: BTreeMap<usize, Config> = BTreeMap::new();
    for (k, v) in pairs {
        let Some((i, tail)) = k
            .strip_prefix("LaunchTemplateConfigs.")
            .and_then(|t| t.split_once('.'))
        else {
            rest.push((k, v));
            continue;
        };
        let Ok(i) = i.parse::<usize>() else {
            rest.push((k, v));
            continue;
        };
        let cfg = cfgs.entry(i).or_default();
        match tail
            .strip_prefix("Overrides.")
            .and_then(|t| t.split_once('.'))
        {
            Some((j, field)) => {
                let j = j.parse().unwrap_or(0);
                cfg.overrides
                    .entry(j)
                    .or_default()
                    .push((field.to_string(), v));
            }
            None => cfg.fields.push((tail.to_string(), v)),
        }
    }
    (rest, cfgs)
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    form::get(fields, name).unwrap_or_default()
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn error_item(cfg: &Config, ov: &[(String, String)], lifecycle: &str, code: &str) -> String {
    let (itype, zone) = (field(ov, "InstanceType"), field(ov, "AvailabilityZone"));
    format!(
        "<item><launchTemplateAndOverrides><launchTemplateSpecification><launchTemplateName>{}</launchTemplateName>\
         <version>{}</version></launchTemplateSpecification><overrides><instanceType>{}</instanceType>\
         <subnetId>{}</subnetId><availabilityZone>{}</availabilityZone></overrides></launchTemplateAndOverrides>\
         <lifecycle>{lifecycle}</lifecycle><errorCode>{}</errorCode>\
         <errorMessage>We currently do not have sufficient {} capacity in the Availability Zone you requested ({}).</errorMessage></item>",
        xml_escape(field(
            &cfg.fields,
            "LaunchTemplateSpecification.LaunchTemplateName"
        )),
        xml_escape(field(&cfg.fields, "LaunchTemplateSpecification.Version")),
        xml_escape(itype),
        xml_escape(field(ov, "SubnetId")),
        xml_escape(zone),
        xml_escape(code),
        xml_escape(itype),
        xml_escape(zone),
    )
}

/// Handles one CreateFleet under ICE rules.
pub async fn create_fleet(
    parts: &hyper::http::request::Parts,
    body: &str,
    rules: &[IceRule],
    upstream: &str,
) -> Response<Full<Bytes>> {
    let pairs = form::decode(body);
    let lifecycle = form::get(
        &pairs,
        "TargetCapacitySpecification.DefaultTargetCapacityType",
    )
    .unwrap_or("on-demand")
    .to_string();
    let (mut out, cfgs) = split(pairs);
    let mut errors = String::new();
    let mut kept_cfgs = 0;
    for cfg in cfgs.values() {
        let mut kept = Vec::new();
        for ov in cfg.overrides.values() {
            let blocked = rules.iter().find(|r| {
                r.matches(
                    field(ov, "InstanceType"),
                    field(ov, "AvailabilityZone"),
                    &lifecycle,
                )
            });
            if let Some(rule) = blocked {
                errors.push_str(&error_item(cfg, ov, &lifecycle, &rule.code))
            } else {
                kept.push(ov)
            }
        }
        if kept.is_empty() {
            continue;
        }
        kept_cfgs += 1;
        for (k, v) in &cfg.fields {
            out.push((format!("LaunchTemplateConfigs.{kept_cfgs}.{k}"), v.clone()));
        }
        for (j, ov) in kept.iter().enumerate() {
            for (k, v) in ov.iter() {
                out.push((
                    format!("LaunchTemplateConfigs.{kept_cfgs}.Overrides.{}.{k}", j + 1),
                    v.clone(),
                ));
            }
        }
    }
    if kept_cfgs == 0 {
        return synthesized(&errors);
    }
    let resp = forward(parts, Bytes::from(form::encode(&out)), upstream).await;
    splice_errors(resp, &errors).await
}

fn synthesized(errors: &str) -> Response<Full<Bytes>> {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CreateFleetResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\
         <requestId>injected</requestId><fleetId>fleet-injected</fleetId><errorSet>{errors}</errorSet>\
         <fleetInstanceSet/></CreateFleetResponse>"
    );
    let mut r = Response::new(Full::new(Bytes::from(body)));
    r.headers_mut()
        .insert("content-type", "text/xml".parse().expect("hdr"));
    r
}

async fn splice_errors(resp: Response<Full<Bytes>>, errors: &str) -> Response<Full<Bytes>> {
    if errors.is_empty() || !resp.status().is_success() {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).replace("<errorSet/>", "");
    let text = text.replacen(
        "</CreateFleetResponse>",
        &format!("<errorSet>{errors}</errorSet></CreateFleetResponse>"),
        1,
    );
    Response::from_parts(parts, Full::new(Bytes::from(text)))
}
