//! The crashing Cloud port: every EC2-facing call goes through the shared switch.

use std::sync::Arc;

use jiff::Timestamp;
use kerf_api::v1::{EC2NodeClass, EC2NodeClassStatus};
use kerf_catalog::Catalog;
use kerf_control::ports::{Cloud, CloudError, Instance, LaunchRequest, Launched, Unhealthy};

use super::{CrashCloud, gone_cloud};

impl<K: Cloud> Cloud for CrashCloud<K> {
    async fn catalog(&self, class: &EC2NodeClass) -> Result<Arc<Catalog>, CloudError> {
        self.switch
            .run("catalog", self.inner.catalog(class), gone_cloud())
            .await
    }
    async fn node_class_status(
        &self,
        class: &EC2NodeClass,
    ) -> Result<EC2NodeClassStatus, CloudError> {
        self.switch
            .run(
                "node_class_status",
                self.inner.node_class_status(class),
                gone_cloud(),
            )
            .await
    }
    async fn launch(&self, req: &LaunchRequest) -> Result<Launched, CloudError> {
        self.switch
            .run("launch", self.inner.launch(req), gone_cloud())
            .await
    }
    async fn describe(&self, ids: &[String]) -> Result<Vec<Instance>, CloudError> {
        self.switch
            .run("describe", self.inner.describe(ids), gone_cloud())
            .await
    }
    async fn list(&self) -> Result<Vec<Instance>, CloudError> {
        self.switch
            .run("list", self.inner.list(), gone_cloud())
            .await
    }
    async fn terminate(&self, ids: &[String]) -> Result<(), CloudError> {
        self.switch
            .run("terminate", self.inner.terminate(ids), gone_cloud())
            .await
    }
    async fn unhealthy(&self) -> Result<Vec<Unhealthy>, CloudError> {
        self.switch
            .run("unhealthy", self.inner.unhealthy(), gone_cloud())
            .await
    }
    async fn delete_unused_templates(&self, now: Timestamp) -> Result<Vec<String>, CloudError> {
        let call = self.inner.delete_unused_templates(now);
        self.switch
            .run("delete_unused_templates", call, gone_cloud())
            .await
    }
}
