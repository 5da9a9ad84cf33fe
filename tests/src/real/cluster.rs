//! A real control plane for one test: `scripts/cluster.sh up NAME` with a name unique to the
//! test process, clients as the admin or as any user and groups (client certificates the
//! cluster's CA signs, minted by `scripts/cluster.sh user`), and a guard whose drop runs
//! `scripts/cluster.sh down NAME`. A watchdog (a shell in its own process group, detached from
//! the test's stdio) runs `down` too if the test process dies without dropping the guard
//! (killed by a timeout); it exits by itself once the control plane is stopped.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::world::repo;

/// A running control plane; dropping it stops it.
#[derive(Debug)]
pub struct ControlPlane {
    pub name: String,
    /// `target/cluster/run/NAME`.
    pub run_dir: PathBuf,
}

fn script() -> PathBuf {
    repo().join("scripts/cluster.sh")
}

/// Runs `scripts/cluster.sh ARGS...`; its stdout, or a panic with its stderr.
fn run_script(args: &[&str]) -> String {
    let out = Command::new("bash")
        .arg(script())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("scripts/cluster.sh {args:?}: {e}"));
    assert!(
        out.status.success(),
        "scripts/cluster.sh {args:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl ControlPlane {
    /// Starts control plane `real-<pid>-<tag>` and waits until it is ready.
    pub async fn up(tag: &str) -> ControlPlane {
        Self::start(tag, &[]).await
    }

    /// Starts control plane `real-<pid>-<tag>` for the real Karpenter: its KWOK plays the
    /// kubelet of the Nodes Karpenter's KWOK provider creates.
    pub async fn for_karpenter(tag: &str) -> ControlPlane {
        let selector = ("KERF_CLUSTER_KWOK_SELECTOR", "kwok.x-k8s.io/node=fake");
        Self::start(tag, &[selector]).await
    }

    /// Starts etcd and kube-apiserver alone as `real-<pid>-<tag>` (no controller, scheduler
    /// or KWOK acts on what is written: a replay's requests are the only writes).
    pub async fn api_only(tag: &str) -> ControlPlane {
        Self::start(tag, &[("KERF_CLUSTER_API_ONLY", "1")]).await
    }

    async fn start(tag: &str, env: &[(&str, &str)]) -> ControlPlane {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let name = format!("real-{}-{tag}", std::process::id());
        let run_dir = repo().join("target/cluster/run").join(&name);
        // The guard exists before the start, so a failed start is cleaned up too.
        let cp = ControlPlane { name, run_dir };
        let (name, watchdog) = (cp.name.clone(), cp.watchdog_script());
        let started = std::time::Instant::now();
        tokio::task::spawn_blocking(move || {
            let up = Command::new("bash")
                .arg(script())
                .args(["up", &name])
                .envs(env)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("scripts/cluster.sh up {name}: {e}"));
            spawn_watchdog(&watchdog(up.id()));
            let out = up.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "scripts/cluster.sh up {name} failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        })
        .await
        .unwrap();
        eprintln!(
            "[real] control plane {} up in {:.1}s",
            cp.name,
            started.elapsed().as_secs_f64()
        );
        cp
    }

    /// The watchdog's shell script given the pid of `up`: once this process is gone and `up`
    /// has finished (so nothing starts after the stop), `down` if the control plane runs.
    fn watchdog_script(&self) -> impl FnOnce(u32) -> String + Send + 'static {
        let ports = self.run_dir.join("ports.env");
        let name = self.name.clone();
        move |up: u32| {
            format!(
                "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
                 while kill -0 {up} 2>/dev/null; do sleep 1; done; \
                 if [ -f '{ports}' ]; then exec bash '{script}' down '{name}'; fi",
                pid = std::process::id(),
                ports = ports.display(),
                script = script().display(),
            )
        }
    }

    /// The admin kubeconfig (system:masters).
    pub fn admin_kubeconfig(&self) -> PathBuf {
        self.run_dir.join("kubeconfig")
    }

    /// A client as the admin.
    pub async fn admin(&self) -> Client {
        client_from(&self.admin_kubeconfig()).await
    }

    /// Mints a kubeconfig for `user` in `groups`; returns its path.
    pub async fn user_kubeconfig(&self, user: &str, groups: &[&str]) -> PathBuf {
        let mut args: Vec<String> = vec!["user".into(), self.name.clone(), user.into()];
        args.extend(groups.iter().map(|g| g.to_string()));
        let out = tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_script(&args)
        })
        .await
        .unwrap();
        PathBuf::from(out.trim())
    }

    /// A client as `user` in `groups`.
    pub async fn user(&self, user: &str, groups: &[&str]) -> Client {
        client_from(&self.user_kubeconfig(user, groups).await).await
    }
}

/// Runs the watchdog in its own process group (a test runner's kill of the test's group
/// spares it), detached from the test's stdio.
fn spawn_watchdog(watch: &str) {
    let spawned = Command::new("sh")
        .arg("-c")
        .arg(watch)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    if let Err(e) = spawned {
        eprintln!("[real] no watchdog: {e}");
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        // After a failure the logs stay in target/cluster/run/NAME/logs for a post-mortem.
        let keep = std::thread::panicking();
        let mut cmd = Command::new("bash");
        cmd.arg(script()).arg("down").arg(&self.name);
        if keep {
            cmd.arg("--keep-logs");
        }
        match cmd.stdin(Stdio::null()).output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!(
                "[real] scripts/cluster.sh down {} failed: {}",
                self.name,
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => eprintln!("[real] scripts/cluster.sh down {}: {e}", self.name),
        }
        if keep {
            eprintln!(
                "[real] logs kept in {}",
                self.run_dir.join("logs").display()
            );
        }
    }
}

/// A client from a kubeconfig file (its current context).
pub async fn client_from(path: &Path) -> Client {
    let kc = Kubeconfig::read_from(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // No client-side retries, as Kerf's functions run: every answer is seen as sent.
    config.default_retry = false;
    Client::try_from(config).unwrap_or_else(|e| panic!("client for {}: {e}", path.display()))
}
