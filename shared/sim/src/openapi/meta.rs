//! ObjectMeta as the OpenAPI documents describe it: the fields users write in manifests and
//! the ones the server fills, with kube-apiserver's descriptions shortened.

use serde_json::{Value, json};

/// Its definition name.
pub const NAME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// What a kind's `metadata` field says.
pub const DESCRIPTION: &str = "Standard object's metadata. More info: \
    https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn map(description: &str) -> Value {
    json!({"type": "object", "description": description,
        "additionalProperties": {"type": "string"}})
}

/// The schema (owner references and managed fields are described as plain objects).
pub fn schema() -> Value {
    json!({
        "description": "ObjectMeta is metadata that all persisted resources must have, \
            which includes all objects users must create.",
        "type": "object",
        "properties": {
            "name": string("Name must be unique within a namespace. Cannot be updated."),
            "generateName": string("An optional prefix the server uses to generate a unique \
                name, if the Name field has not been provided."),
            "namespace": string("The namespace an object is in. Cluster-scoped objects have \
                none."),
            "labels": map("Map of string keys and values that can be used to organize and \
                categorize (scope and select) objects."),
            "annotations": map("Unstructured key value map stored with a resource that may \
                be set by external tools to store and retrieve arbitrary metadata."),
            "finalizers": {"type": "array", "items": {"type": "string"},
                "description": "Must be empty before the object is deleted from the registry."},
            "ownerReferences": {"type": "array", "items": {"type": "object"},
                "description": "List of objects depended by this object."},
            "uid": string("Unique in time and space value for this object. Read-only."),
            "resourceVersion": string("An opaque value that represents the internal version \
                of this object. Read-only."),
            "generation": {"type": "integer", "format": "int64",
                "description": "A sequence number representing a specific generation of the \
                    desired state. Read-only."},
            "creationTimestamp": string("When this object was created. Read-only."),
            "deletionTimestamp": string("When this resource will be deleted. Read-only."),
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64",
                "description": "Seconds allowed for this object to gracefully terminate. \
                    Read-only."},
            "managedFields": {"type": "array", "items": {"type": "object"},
                "description": "Maps workflow-id and version to the set of fields that are \
                    managed by that workflow."},
        }
    })
}
