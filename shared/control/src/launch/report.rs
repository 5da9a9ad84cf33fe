//! What one provisioning invocation did: filled in by the provisioner's passes and by the
//! static NodePools' scale-up they run, read by the provisioner function's answer.

use kerf_engine::plan::Unschedulable;

/// What one provisioning invocation did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ProvisionReport {
    /// Passes run (a second one follows insufficient capacity).
    pub passes: usize,
    /// Provisionable pods seen by the last pass.
    pub pending: usize,
    /// Pods nominated to existing capacity in the last pass.
    pub nominated: usize,
    /// NodeClaims created.
    pub created: Vec<String>,
    /// NodeClaims launched (created here or resumed).
    pub launched: Vec<String>,
    /// Launches that found no capacity.
    pub insufficient_capacity: usize,
    /// Pods the last pass could not place, with why.
    pub unschedulable: Vec<Unschedulable>,
    /// Steps that failed, with the error (they are retried by a later pass).
    pub errors: Vec<String>,
}
