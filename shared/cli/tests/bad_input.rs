//! Input a new user gets wrong, and what `kerf` says about it: an empty file or a directory
//! without manifests, Karpenter's pre-v1 API, manifests given to `kerf sim`, a directory given
//! to `kerf sim`, and an object the API server refuses in a scenario. Each names the file and
//! what is wrong, and exits 2.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn kerf(args: &[&str]) -> (Option<i32>, String, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_kerf"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn plan_refuses_an_empty_file_and_a_directory_without_manifests() {
    let d = dir("bad-input-empty");
    for (name, text) in [
        ("empty.yaml", ""),
        ("comments.yaml", "# nothing yet\n---\n"),
    ] {
        let f = write(&d, name, text);
        let (code, _, err) = kerf(&["plan", &f]);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("{f}: no Kubernetes objects")),
            "{name}: {err}"
        );
    }
    let empty_dir = d.join("notes");
    std::fs::create_dir_all(&empty_dir).unwrap();
    write(&empty_dir, "README.txt", "not a manifest");
    let (code, _, err) = kerf(&["plan", empty_dir.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("notes: a directory without .yaml, .yml or .json files"),
        "{err}"
    );
    // An empty list is what `kubectl get … -o yaml` prints for no objects: nothing to plan.
    let f = write(&d, "none.yaml", "apiVersion: v1\nkind: List\nitems: []\n");
    let (code, out, err) = kerf(&["plan", &f]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("0 pending"), "{out}");
}

#[test]
fn plan_points_a_pre_v1_provisioner_to_migrate() {
    let d = dir("bad-input-v1alpha5");
    let f = write(
        &d,
        "provisioner.yaml",
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: default}\nspec: {}\n",
    );
    let (code, _, err) = kerf(&["plan", &f]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("karpenter.sh/v1alpha5 Provisioner is Karpenter's pre-v1 API")
            && err.contains(&format!("`kerf migrate {f}`")),
        "{err}"
    );
}

#[test]
fn sim_says_manifests_are_not_a_scenario_and_shows_how_to_wrap_them() {
    let d = dir("bad-input-manifest");
    let pools =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/getting-started/nodepool.yaml");
    let f = write(&d, "pool.yaml", &std::fs::read_to_string(pools).unwrap());
    let (code, _, err) = kerf(&["sim", &f]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("a Kubernetes manifest (NodePool), not a scenario"),
        "{err}"
    );
    assert!(err.contains("objects:\n  - file: pool.yaml"), "{err}");
    // The wrapping it shows runs.
    let wrapped = err.split_once("\n\n").unwrap().1;
    let wrapped = wrapped.split_once("\n\n").unwrap().0;
    let s = write(&d, "wrapped.yaml", wrapped);
    let (code, out, err) = kerf(&["sim", &s]);
    assert_eq!(code, Some(0), "{out}{err}");
}

#[test]
fn sim_on_a_directory_names_the_problem_and_the_scenarios_in_it() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (code, _, err) = kerf(&["sim", examples.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("is a directory; kerf sim runs one scenario file, such as")
            && err.contains("consolidation.yaml"),
        "{err}"
    );
}

#[test]
fn an_object_the_server_refuses_names_the_file_and_object_and_exits_2() {
    let d = dir("bad-input-rejected");
    write(
        &d,
        "pool.yaml",
        "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: bad}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: Sometimes, values: [spot]}
",
    );
    let s = write(
        &d,
        "scenario.yaml",
        "name: rejected\nobjects:\n  - file: pool.yaml\nsteps:\n  - advance: 1m\n",
    );
    let (code, _, err) = kerf(&["sim", &s]);
    assert_eq!(code, Some(2), "{err}");
    let pool = d.join("pool.yaml").display().to_string();
    assert!(
        err.contains(&format!("{pool}: NodePool/bad: "))
            && err.contains("operator: Unsupported value: \"Sometimes\""),
        "{err}"
    );
    assert!(!err.contains("Status {"), "a debug dump: {err}");
    // Inline, in a step: the scenario file and the step's entry.
    let s = write(
        &d,
        "inline.yaml",
        "name: inline\nsteps:\n  - apply:\n      manifest: |\n        apiVersion: karpenter.sh/v1\n        kind: NodePool\n        metadata: {name: worse}\n        spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: [{key: karpenter.sh/capacity-type, operator: Sometimes, values: [spot]}]}}}\n",
    );
    let (code, _, err) = kerf(&["sim", &s]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("{s}: steps[0].apply: NodePool/worse: ")),
        "{err}"
    );
}

#[test]
fn a_wrongly_typed_field_points_to_its_line_in_the_users_yaml() {
    let d = dir("bad-input-line");
    let f = write(
        &d,
        "web.yaml",
        "# the web tier\napiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: web}\nspec:\n  \
         replicas: \"three\"\n  selector: {matchLabels: {app: d}}\n  template:\n    \
         metadata: {labels: {app: d}}\n    spec:\n      containers: [{name: a, image: x}]\n",
    );
    let (code, _, err) = kerf(&["plan", &f]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("document 2 (Deployment/web/d): spec.replicas: invalid type: string \"three\", expected i32 at line 10"),
        "{err}"
    );
    assert!(
        !err.contains("column"),
        "a position in converted JSON: {err}"
    );
}

#[test]
fn a_wrongly_typed_field_in_a_lists_item_points_to_its_line_too() {
    let d = dir("bad-input-list-line");
    let f = write(
        &d,
        "dump.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  \
         metadata: {name: a, namespace: default}\n  spec:\n    containers: [{name: a, image: x}]\n\
         - apiVersion: v1\n  kind: Pod\n  metadata: {name: b, namespace: default}\n  spec:\n    \
         containers:\n    - name: b\n      image: x\n      ports:\n      - containerPort: eighty\n",
    );
    let (code, _, err) = kerf(&["plan", &f]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("(Pod/default/b): spec.containers[0].ports[0].containerPort: invalid type: string \"eighty\", expected i32 at line 17"),
        "{err}"
    );
}

#[test]
fn a_dump_without_its_claims_says_which_objects_to_add() {
    let d = dir("bad-input-no-claims");
    let f = write(
        &d,
        "dump.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: db-0, namespace: default}\nspec:\n  \
         containers: [{name: app, image: pause}]\n  volumes:\n  - name: data\n    \
         persistentVolumeClaim: {claimName: data-db-0}\nstatus: {phase: Pending}\n",
    );
    let (code, out, err) = kerf(&["plan", &f]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("1 pod(s) use persistent volume claims")
            && err.contains("pv,pvc,storageclass,csinode"),
        "{err}"
    );
    assert!(
        out.contains("persistentvolumeclaim default/data-db-0 not found"),
        "{out}"
    );
}
