//! `kerf sim --serve` watched with the real kubectl, as a new user would: Debian's kubectl
//! (installed into `.venv/bin` by `make test`), the control plane's (`scripts/cluster.sh
//! build`) when built, and the `kubectl` on the PATH when there is one. `get` shows
//! Karpenter's printer columns and kube-apiserver's for built-in kinds, short names resolve,
//! `apply` validates without `--validate=false` (an unknown field of a NodePool or a
//! Deployment is refused), `scale` works, `explain` knows Karpenter's kinds and the built-in
//! ones, a dump taken with kubectl starts a new scenario, and Ctrl-C ends the run with its
//! summary and report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every kubectl to try: Debian's (required), the control plane's when
/// `scripts/cluster.sh build` has built it, then the PATH's if it is another one.
fn kubectls() -> Vec<PathBuf> {
    let debian = repo().join(".venv/bin/kubectl");
    assert!(
        debian.exists(),
        "Debian's kubectl is needed for this test: scripts/setup.sh installs it into .venv/bin"
    );
    let mut out = vec![debian];
    let control_plane = repo().join("target/cluster/bin/kubectl");
    if control_plane.exists() {
        out.push(control_plane);
    }
    if let Ok(o) = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        && o.status.success()
    {
        out.push(PathBuf::from("kubectl"));
    }
    out
}

struct Served {
    child: Child,
    kubeconfig: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// `kerf sim --serve` on the getting-started NodePool and `inflate` (5 replicas, no steps),
/// 30 simulated seconds per second; waits for the kubeconfig it writes.
fn serve(dir: &Path) -> Served {
    std::fs::create_dir_all(dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    let examples = repo().join("examples/getting-started");
    let scenario = format!(
        "name: served\nobjects:\n  - file: {}\n  - file: {}\n",
        examples.join("nodepool.yaml").display(),
        examples.join("inflate.yaml").display()
    );
    let file = write(dir, "served.yaml", &scenario);
    let report = dir.join("served.html");
    let _ = std::fs::remove_file(&report);
    let child = Command::new(env!("CARGO_BIN_EXE_kerf"))
        .args(["sim", &file, "--serve", "--speed", "30", "--kubeconfig"])
        .arg(&kubeconfig)
        .arg("--report")
        .arg(&report)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut s = Served { child, kubeconfig };
    let start = Instant::now();
    while !s.kubeconfig.exists() {
        if let Some(status) = s.child.try_wait().unwrap() {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(s.child.stderr.as_mut().unwrap(), &mut err);
            panic!("kerf sim --serve ended ({status}) before serving: {err}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no kubeconfig written"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    s
}

fn kubectl(bin: &Path, s: &Served, args: &[&str]) -> Output {
    Command::new(bin)
        .env("KUBECONFIG", &s.kubeconfig)
        .args(args)
        .output()
        .unwrap()
}

/// A finished process's stdout, after asserting it succeeded (`what` names it on failure).
fn succeeded(o: Output, what: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{what}: {out}\n{err}");
    out
}

/// Runs kubectl; its stdout, after asserting it succeeded.
fn ok(bin: &Path, s: &Served, args: &[&str]) -> String {
    succeeded(
        kubectl(bin, s, args),
        &format!("{} {args:?}", bin.display()),
    )
}

/// Retries `args` until its output satisfies `done` (the cluster acts in simulated time).
fn eventually(bin: &Path, s: &Served, args: &[&str], done: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let out = ok(bin, s, args);
        if done(&out) {
            return out;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{args:?} never matched; last:\n{out}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn header(out: &str) -> Vec<&str> {
    out.lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: public.ecr.aws/nginx/nginx:1.27
        resources:
          requests: {cpu: 500m, memory: 256Mi}
";

const SPOT_POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: spot
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
  limits: {cpu: \"100\"}
";

fn check(bin: &Path, s: &Served, dir: &Path) {
    // Karpenter's printer columns, filled in by Kerf's status writes.
    let pools = eventually(bin, s, &["get", "nodepools"], |o| {
        o.lines()
            .any(|l| l.starts_with("default ") && l.contains("True"))
    });
    assert_eq!(
        header(&pools),
        ["NAME", "NODECLASS", "NODES", "READY", "AGE"]
    );
    let claims = eventually(bin, s, &["get", "nodeclaims"], |o| o.lines().count() > 1);
    assert_eq!(
        header(&claims),
        ["NAME", "TYPE", "CAPACITY", "ZONE", "NODE", "READY", "AGE"]
    );
    assert!(claims.contains("on-demand"), "{claims}");
    // kube-apiserver's columns for built-in kinds, and short names.
    let deploy = ok(bin, s, &["get", "deploy"]);
    assert_eq!(
        header(&deploy),
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    );
    assert!(deploy.contains("inflate"), "{deploy}");
    let pods = eventually(bin, s, &["get", "po"], |o| o.contains("Running"));
    assert_eq!(
        header(&pods),
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    );
    assert!(pods.contains("1/1"), "{pods}");
    let nodes = eventually(bin, s, &["get", "no", "-o", "wide"], |o| {
        o.contains(" Ready ")
    });
    assert!(header(&nodes).contains(&"INTERNAL-IP"), "{nodes}");
    assert!(ok(bin, s, &["get", "ec2nc"]).contains("default"));
    // apply validates (no --validate=false), creates, then patches.
    let web = write(dir, "web.yaml", WEB);
    assert!(ok(bin, s, &["apply", "-f", &web]).contains("deployment.apps/web created"));
    let web2 = write(dir, "web2.yaml", &WEB.replace("500m", "250m"));
    assert!(ok(bin, s, &["apply", "-f", &web2]).contains("deployment.apps/web configured"));
    let cpu = ok(
        bin,
        s,
        &[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].resources.requests.cpu}",
        ],
    );
    assert_eq!(cpu, "250m");
    assert!(ok(bin, s, &["scale", "deploy/web", "--replicas=3"]).contains("scaled"));
    eventually(bin, s, &["get", "deploy", "web"], |o| o.contains("3/3"));
    // A NodePool with a field its schema lacks is refused (client- or server-side).
    let bad = write(
        dir,
        "bad.yaml",
        &SPOT_POOL.replace("  limits:", "  bogus: 1\n  limits:"),
    );
    refused_for_bogus(bin, s, &bad);
    // So is a Deployment, by kube-apiserver's schema.
    let bad_web = WEB
        .replace("  name: web\nspec:", "  name: bad-web\nspec:")
        .replace("  replicas: 2", "  replicas: 2\n  bogus: 1");
    refused_for_bogus(bin, s, &write(dir, "bad-web.yaml", &bad_web));
    let good = write(dir, "spot.yaml", SPOT_POOL);
    assert!(ok(bin, s, &["apply", "-f", &good]).contains("nodepool.karpenter.sh/spot created"));
    // explain reads the published schemas, the CRDs' and kube-apiserver's.
    let explained = ok(bin, s, &["explain", "nodepools.spec.disruption"]);
    assert!(explained.contains("consolidationPolicy"), "{explained}");
    assert!(ok(bin, s, &["explain", "ec2nodeclass.spec"]).contains("amiSelectorTerms"));
    explain_built_in_kinds(bin, s);
    // Clean up for the next kubectl.
    ok(bin, s, &["delete", "-f", &good]);
    ok(bin, s, &["delete", "-f", &web]);
    // The garbage collector removes web's pods after the Deployment: wait for them, so
    // that the next kubectl (or the dump) sees only inflate.
    eventually(
        bin,
        s,
        &["get", "pods", "-l", "app=web", "-o", "name"],
        |o| o.trim().is_empty(),
    );
}

/// `kubectl apply -f file` fails, naming the unknown field `bogus`.
fn refused_for_bogus(bin: &Path, s: &Served, file: &str) {
    let refused = kubectl(bin, s, &["apply", "-f", file]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success(),
        "accepted an unknown field: {file}"
    );
    assert!(
        err.contains("unknown field") && err.contains("bogus"),
        "{err}"
    );
}

/// `kubectl explain` of built-in kinds, with kube-apiserver's descriptions (kubectl before
/// 1.27 reads them from /openapi/v2, later ones from /openapi/v3).
fn explain_built_in_kinds(bin: &Path, s: &Served) {
    let resources = ok(bin, s, &["explain", "pod.spec.containers.resources"]);
    for text in [
        "KIND:",
        "Pod",
        "ResourceRequirements describes the compute resource requirements.",
        "Limits describes the maximum amount of compute resources allowed.",
        "Requests describes the minimum amount of compute resources required.",
    ] {
        assert!(resources.contains(text), "{text} not in:\n{resources}");
    }
    let replicas = ok(bin, s, &["explain", "deployment.spec.replicas"]);
    assert!(replicas.contains("Deployment"), "{replicas}");
    // Wrapped at a width that differs between kubectl versions: compare the words.
    let words = replicas.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "Number of desired pods. This is a pointer to distinguish between \
            explicit zero and not specified. Defaults to 1."
        ),
        "{replicas}"
    );
    let provider = ok(bin, s, &["explain", "node.spec.providerID"]);
    let words = provider.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "ID of the node assigned by the cloud provider in the format: \
            <ProviderName>://<ProviderSpecificNodeID>"
        ),
        "{provider}"
    );
}

/// A dump of the served cluster, as a user takes one of theirs, starts a new scenario:
/// the server's fields are dropped, Nodes and controller-made pods skipped, and Kerf
/// provisions for the workloads again.
fn from_a_dump(bin: &Path, s: &Served, dir: &Path) {
    let kinds = "nodepools,ec2nodeclasses,deployments,pods,nodes";
    let dump = ok(bin, s, &["get", kinds, "-A", "-o", "yaml"]);
    assert!(
        dump.contains("managedFields") && dump.contains("kind: Node"),
        "a real dump"
    );
    write(dir, "dump.yaml", &dump);
    let scenario = "name: from-dump\nobjects:\n  - file: dump.yaml\nsteps:\n  \
        - until: {running: 5, pending: 0}\n    within: 5m\n";
    let file = write(dir, "from-dump.yaml", scenario);
    let run = Command::new(env!("CARGO_BIN_EXE_kerf"))
        .args(["sim", &file])
        .output()
        .unwrap();
    let out = succeeded(run, "kerf sim from-dump.yaml");
    assert!(out.contains("its controller makes it again"), "{out}");
    assert!(
        out.contains("5 pods placed") && out.contains("invariants held"),
        "{out}"
    );
}

#[test]
fn kubectl_watches_and_drives_the_served_cluster() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sim-serve");
    let mut s = serve(&dir);
    let config = std::fs::read_to_string(&s.kubeconfig).unwrap();
    assert!(config.contains("server: http://127.0.0.1:"), "{config}");
    for bin in kubectls() {
        check(&bin, &s, &dir);
    }
    from_a_dump(&kubectls()[0], &s, &dir);
    // Ctrl-C: the run ends with the NodeClaims and the cost, and removes its kubeconfig.
    let pid = s.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let child = std::mem::replace(&mut s.child, Command::new("true").spawn().unwrap());
    let stdout = succeeded(child.wait_with_output().unwrap(), "kerf sim --serve");
    assert!(stdout.contains("launched nodeclaim"), "{stdout}");
    assert!(stdout.contains("cost $"), "{stdout}");
    assert!(stdout.contains("invariants held"), "{stdout}");
    assert!(!s.kubeconfig.exists());
    let page = std::fs::read_to_string(dir.join("served.html")).unwrap();
    assert!(page.contains("<svg"), "the report is written at the end");
}
