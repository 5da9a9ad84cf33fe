//! The narrow ports the control layer uses, and their AWS implementations.
//!
//! `control` is generic over these traits, so it is tested against in-memory fakes (`sim`);
//! the AWS implementations below are tested against moto.

use std::future::Future;

use crate::config::Clients;
use crate::error::AwsError;
use crate::fleet::{LaunchRequest, Launched};
use crate::instances::{self, InstanceInfo};
use crate::launch;
use crate::queue::{Message, SqsQueue};

/// EC2 instance lifecycle.
pub trait Cloud: Send + Sync {
    /// Launches one instance for a NodeClaim (idempotent per NodeClaim).
    fn launch(
        &self,
        req: &LaunchRequest,
    ) -> impl Future<Output = Result<Launched, AwsError>> + Send;
    /// Terminates instances; unknown or terminated ones count as done.
    fn terminate(&self, ids: &[String]) -> impl Future<Output = Result<(), AwsError>> + Send;
    /// Describes instances by id (unknown ids are absent).
    fn describe(
        &self,
        ids: &[String],
    ) -> impl Future<Output = Result<Vec<InstanceInfo>, AwsError>> + Send;
    /// The cluster's live instances, for garbage collection.
    fn list_cluster_instances(
        &self,
    ) -> impl Future<Output = Result<Vec<InstanceInfo>, AwsError>> + Send;
}

/// A work queue.
pub trait Queue: Send + Sync {
    fn receive(
        &self,
        max: i32,
        wait_seconds: i32,
    ) -> impl Future<Output = Result<Vec<Message>, AwsError>> + Send;
    fn delete(&self, receipt_handle: &str) -> impl Future<Output = Result<(), AwsError>> + Send;
    /// Sends `body`, visible after `delay_seconds`.
    fn send(
        &self,
        body: &str,
        delay_seconds: i32,
    ) -> impl Future<Output = Result<String, AwsError>> + Send;
}

/// [`Cloud`] on EC2.
#[derive(Clone, Debug)]
pub struct Ec2Cloud {
    pub ec2: aws_sdk_ec2::Client,
    pub cluster: String,
}

impl Ec2Cloud {
    pub fn new(clients: &Clients, cluster: &str) -> Self {
        Ec2Cloud {
            ec2: clients.ec2.clone(),
            cluster: cluster.to_string(),
        }
    }
}

impl Cloud for Ec2Cloud {
    async fn launch(&self, req: &LaunchRequest) -> Result<Launched, AwsError> {
        launch::launch(&self.ec2, req).await
    }

    async fn terminate(&self, ids: &[String]) -> Result<(), AwsError> {
        instances::terminate(&self.ec2, ids).await
    }

    async fn describe(&self, ids: &[String]) -> Result<Vec<InstanceInfo>, AwsError> {
        instances::describe(&self.ec2, ids).await
    }

    async fn list_cluster_instances(&self) -> Result<Vec<InstanceInfo>, AwsError> {
        instances::list_cluster(&self.ec2, &self.cluster).await
    }
}

impl Queue for SqsQueue {
    async fn receive(&self, max: i32, wait_seconds: i32) -> Result<Vec<Message>, AwsError> {
        SqsQueue::receive(self, max, wait_seconds, None).await
    }

    async fn delete(&self, receipt_handle: &str) -> Result<(), AwsError> {
        SqsQueue::delete(self, receipt_handle).await
    }

    async fn send(&self, body: &str, delay_seconds: i32) -> Result<String, AwsError> {
        SqsQueue::send(self, body, delay_seconds).await
    }
}
