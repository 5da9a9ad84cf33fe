//! The termination message: which NodeClaim the termination function takes one step further.
//! Sent by whoever starts a termination ([`crate::retire`]) and by the termination function
//! itself while a step must wait; owned by no reconciler.

use serde::{Deserialize, Serialize};

/// `{"nodeClaim": "<name>"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminationMessage {
    pub node_claim: String,
}

impl TerminationMessage {
    pub fn new(node_claim: &str) -> Self {
        TerminationMessage {
            node_claim: node_claim.to_string(),
        }
    }

    /// The message in a body, or `None` when it is not one (it can never succeed).
    pub fn parse(body: &str) -> Option<TerminationMessage> {
        serde_json::from_str(body).ok()
    }

    pub fn body(&self) -> String {
        // One string field always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_termination_message_round_trips_and_garbage_is_none() {
        let m = TerminationMessage::new("default-abc");
        assert_eq!(m.body(), r#"{"nodeClaim":"default-abc"}"#);
        assert_eq!(TerminationMessage::parse(&m.body()), Some(m));
        assert_eq!(TerminationMessage::parse(r#"{"nodeClaim": 3}"#), None);
        assert_eq!(TerminationMessage::parse("not json"), None);
    }
}
