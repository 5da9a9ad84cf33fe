//! EventBridge: the interruption events' types (defined by the control layer, which handles
//! them) and a PutEvents helper.

use serde_json::Value;

pub use kerf_control::interrupt::events::{Envelope, Event, EventError, Interruption, parse};

use crate::error::{AwsError, from_sdk};

/// PutEvents with `entries` (at most 10); any failed entry is an error naming its code.
/// Returns the event ids.
pub async fn put_entries(
    events: &aws_sdk_eventbridge::Client,
    entries: Vec<aws_sdk_eventbridge::types::PutEventsRequestEntry>,
) -> Result<Vec<String>, AwsError> {
    let n = entries.len();
    let out = events
        .put_events()
        .set_entries(Some(entries))
        .send()
        .await
        .map_err(|e| from_sdk("PutEvents", e))?;
    if out.failed_entry_count() > 0 {
        let code = out
            .entries()
            .iter()
            .find_map(|e| e.error_code())
            .unwrap_or("Unknown");
        return Err(AwsError::invalid(
            "PutEvents",
            format!("{} of {n} entries failed: {code}", out.failed_entry_count()),
        ));
    }
    Ok(out
        .entries()
        .iter()
        .filter_map(|e| e.event_id().map(str::to_string))
        .collect())
}

/// Publishes one event (tests drive interruption flows this way; moto accepts `aws.*`
/// sources, real EventBridge does not).
pub async fn put_event(
    events: &aws_sdk_eventbridge::Client,
    source: &str,
    detail_type: &str,
    detail: &Value,
    resources: &[String],
) -> Result<String, AwsError> {
    let entry = aws_sdk_eventbridge::types::PutEventsRequestEntry::builder()
        .source(source)
        .detail_type(detail_type)
        .detail(detail.to_string())
        .set_resources(Some(resources.to_vec()))
        .build();
    let ids = put_entries(events, vec![entry]).await?;
    Ok(ids.into_iter().next().unwrap_or_default())
}
