//! The differences between Kerf's in-process API server and kube-apiserver that the
//! conformance diff (`conformance.rs`) found: those written down in the README with why they
//! do not matter to Kerf, and those still open.

use kerf_e2e::real::conformance::Known;

/// The differences between the servers that are written down (README, "The in-process API
/// server against kube-apiserver"), each with why it does not matter to Kerf.
pub const KNOWN: &[Known] = &[
    Known {
        class: " /openapi/",
        difference: "",
        why: "the OpenAPI documents describe the kinds each server serves; both carry Kerf's \
              CRD schemas and kube-apiserver's schemas of the built-in kinds Kerf serves, which \
              is what kubectl explain and client-side validation read",
    },
    Known {
        class: "GET /api?",
        difference: "APIGroupDiscoveryList",
        why: "kube-apiserver answers kubectl's request for aggregated discovery; the in-process \
              server answers with the legacy documents, which kubectl falls back to",
    },
    Known {
        class: "GET /apis?",
        difference: "APIGroupDiscoveryList",
        why: "as GET /api",
    },
    Known {
        class: "GET /ap",
        difference: "field .resources[].",
        why: "discovery's storage hashes, categories and per-resource group/version are not \
              read by kube clients that find kinds by group, version and kind",
    },
    Known {
        class: "GET /api/v1?",
        difference: "field .apiVersion only here",
        why: "an APIResourceList's apiVersion; clients go by its groupVersion",
    },
    Known {
        class: "/customresourcedefinitions",
        difference: "",
        why: "the in-process server's CRDs are built in and not served as objects; kubectl \
              explain reads OpenAPI v3 instead",
    },
    Known {
        class: "",
        difference: "field .items[].apiVersion only here",
        why: "list items carry their apiVersion and kind here; clients take them from the list",
    },
    Known {
        class: "",
        difference: "field .items[].kind only here",
        why: "as apiVersion",
    },
    Known {
        class: "pods",
        difference: "field .spec.",
        why: "kube-apiserver defaults pod fields Kerf does not read (dnsPolicy, restartPolicy, \
              schedulerName, securityContext, priority, preemptionPolicy, enableServiceLinks, \
              the service account and its token volume, image pull and termination message \
              policies) and adds the not-ready/unreachable NoExecute tolerations, which no \
              node Kerf launches carries",
    },
    Known {
        class: "pods",
        difference: "field .items[].spec.",
        why: "as a pod's defaults",
    },
    Known {
        class: "pods",
        difference: "field .status.qosClass only on kube-apiserver",
        why: "derived from requests, which Kerf reads itself",
    },
    Known {
        class: "pods",
        difference: "field .items[].status.qosClass only on kube-apiserver",
        why: "as a pod's qosClass",
    },
    Known {
        class: "",
        difference: "field .metadata.generation only on kube-apiserver",
        why: "kube-apiserver keeps a generation on pods too; Kerf compares generations of its \
              own CRDs only",
    },
    Known {
        class: "",
        difference: "field .items[].metadata.generation only on kube-apiserver",
        why: "as a pod's generation",
    },
    Known {
        class: "deployments",
        difference: "",
        why: "Deployments are defaulted (strategy, revision history, progress deadline, the \
              pod template's defaults) by kube-apiserver; Kerf never reads Deployments",
    },
    Known {
        class: "replicasets",
        difference: "field .spec.template.spec.",
        why: "a ReplicaSet's pod template is defaulted by kube-apiserver as a pod is (dnsPolicy, \
              restartPolicy, schedulerName, securityContext); Kerf reads none of them",
    },
    Known {
        class: "POST /apis/apps/v1/namespaces/{ns}/replicasets",
        difference: "field .status",
        why: "kube-apiserver answers a new ReplicaSet with `status.replicas: 0`; the \
              in-process world's ReplicaSet controller writes the status a moment later",
    },
    Known {
        class: "nodes",
        difference: "field .status.daemonEndpoints",
        why: "kube-apiserver defaults the kubelet endpoint's port to 0; Kerf does not read it",
    },
    Known {
        class: "nodes",
        difference: "field .items[].status.daemonEndpoints",
        why: "as a node's daemonEndpoints",
    },
    Known {
        class: "events",
        difference: "field .eventTime only on kube-apiserver",
        why: "kube-apiserver writes a core/v1 Event's unset eventTime as null",
    },
    Known {
        class: "events",
        difference: "field .involvedObject.uid only here",
        why: "an empty uid is kept here and omitted by kube-apiserver's encoding",
    },
    Known {
        class: "pods",
        difference: "lastProbeTime only on kube-apiserver",
        why: "kube-apiserver writes a pod condition's unset lastProbeTime as null",
    },
    Known {
        class: "pods",
        difference: "containerStatuses[].imageID only on kube-apiserver",
        why: "an unset imageID is written as an empty string there; Kerf reads no container \
              status",
    },
    Known {
        class: "pods",
        difference: "containerStatuses[].lastState only on kube-apiserver",
        why: "an unset lastState is written as {} there; Kerf reads no container status",
    },
    Known {
        class: "GET /api/v1/namespaces",
        difference: ".metadata.managedFields",
        why: "kube-apiserver records who created its own namespaces (default, kube-system, \
              ...); the in-process server's are there from the start",
    },
    Known {
        class: "poddisruptionbudgets",
        difference: "field .status.conditions",
        why: "the DisruptionAllowed condition kube-apiserver's eviction handler writes; Kerf \
              reads disruptionsAllowed, which both keep",
    },
    Known {
        class: "poddisruptionbudgets",
        difference: "field .items[].status.conditions",
        why: "as a budget's conditions",
    },
    Known {
        class: "",
        difference: "field .metadata.finalizers only here",
        why: "a patch that removes the last finalizer leaves an empty list here, which \
              kube-apiserver's encoding omits; both mean none",
    },
    Known {
        class: "karpenter",
        difference: "field .metadata.continue only on kube-apiserver",
        why: "a custom resource list's last page carries an empty continue token there; an \
              empty token and none both end the listing",
    },
];

/// Differences found and not explained yet (the conformance issue stays open on them): they
/// are printed on every run, and the test fails on any difference in neither list.
pub const OPEN: &[Known] = &[];
