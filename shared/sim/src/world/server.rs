//! The API server a world runs on, and the cluster components that run beside it: Kerf's
//! in-process server with the simulated scheduler, kubelets and controllers, on a simulated
//! clock that can jump; or a real control plane ([`super::real`]), whose own scheduler,
//! controllers and KWOK run on the wall clock, with only the instances' kubelets bridged.

use std::sync::Arc;

use kube::api::{Api, ListParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use super::real::RealCluster;
use super::{Kubelet, Scheduler, World, WorldError};
use crate::Sim;

/// Kerf's in-process API server and the simulated components that read its store.
#[derive(Debug)]
pub struct InProcess {
    pub sim: Sim,
    pub kubelet: Kubelet,
    pub scheduler: Scheduler,
}

/// Where the world's cluster runs.
#[derive(Debug)]
pub enum Server {
    InProcess(Box<InProcess>),
    Real(Box<RealCluster>),
}

/// A resource the world can list cluster-wide.
pub trait Listed:
    Resource<DynamicType = ()> + DeserializeOwned + Clone + std::fmt::Debug + Send + Sync + 'static
{
}

impl<T> Listed for T where
    T: Resource<DynamicType = ()>
        + DeserializeOwned
        + Clone
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// Every object of `T` through the API (all namespaces).
pub(crate) async fn list_all<T: Listed>(client: &Client) -> Result<Vec<T>, kube::Error> {
    Ok(Api::<T>::all(client.clone())
        .list(&ListParams::default())
        .await?
        .items)
}

impl World {
    /// The in-process server, or an error naming `what` needs it.
    pub fn sim(&self) -> Result<&Sim, WorldError> {
        match &self.server {
            Server::InProcess(p) => Ok(&p.sim),
            Server::Real(_) => Err(WorldError::InProcessOnly("the in-process API server")),
        }
    }

    /// The simulated kubelets (in-process server only; KWOK plays them on a real one).
    pub fn kubelet_mut(&mut self) -> Result<&mut Kubelet, WorldError> {
        match &mut self.server {
            Server::InProcess(p) => Ok(&mut p.kubelet),
            Server::Real(_) => Err(WorldError::InProcessOnly("the simulated kubelets")),
        }
    }

    /// The simulated kube-scheduler (in-process server only).
    pub fn scheduler(&self) -> Result<&Scheduler, WorldError> {
        match &self.server {
            Server::InProcess(p) => Ok(&p.scheduler),
            Server::Real(_) => Err(WorldError::InProcessOnly("the simulated scheduler")),
        }
    }

    /// Whether the world runs on a real control plane.
    pub fn is_real(&self) -> bool {
        matches!(self.server, Server::Real(_))
    }

    /// Every object of `T` in the cluster: from the in-process store, or listed from the real
    /// API server.
    pub async fn list<T: Listed>(&self) -> Result<Arc<Vec<T>>, WorldError> {
        match &self.server {
            Server::InProcess(p) => {
                let res = format!("{}/{}", T::group(&()), T::plural(&()));
                Ok(p.sim.cached().list::<T>(&res)?)
            }
            Server::Real(_) => Ok(Arc::new(list_all::<T>(&self.client).await?)),
        }
    }
}
