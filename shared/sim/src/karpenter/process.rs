//! The real Karpenter as a process beside a control plane: its KWOK provider's binary
//! (`scripts/karpenter.sh build`), run out of cluster with the control plane's kubeconfig
//! and the settings Karpenter reads from its environment, its health and metrics on free
//! ports of 127.0.0.1, its log in a file. It can be restarted (to read a rewritten
//! instance-types file) and tells how much CPU and memory it has used.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use std::io::{Read, Write};

use super::KarpenterError;

/// How long Karpenter may take to report ready.
const READY_WITHIN: Duration = Duration::from_secs(90);

/// What a process has used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// CPU time, user and system, in seconds.
    pub cpu_seconds: f64,
    /// Peak resident memory, in bytes.
    pub peak_rss: u64,
}

/// How Karpenter is started.
#[derive(Debug, Clone)]
pub struct Launch {
    pub bin: PathBuf,
    pub kubeconfig: PathBuf,
    /// Where its instance-types file and log go.
    pub dir: PathBuf,
    /// Karpenter's `FEATURE_GATES` (empty: its defaults).
    pub feature_gates: String,
}

/// A running Karpenter; killed when dropped.
#[derive(Debug)]
pub struct KarpenterProcess {
    launch: Launch,
    child: Child,
    health: u16,
    /// CPU time of the runs before a restart.
    before: Usage,
}

/// A port free now on 127.0.0.1.
fn free_port() -> Result<u16, KarpenterError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(KarpenterError::io("a port"))?;
    Ok(l.local_addr().map_err(KarpenterError::io("a port"))?.port())
}

impl Launch {
    /// The instance-types file Karpenter reads.
    pub fn types_file(&self) -> PathBuf {
        self.dir.join("instance-types.json")
    }

    /// Karpenter's log.
    pub fn log(&self) -> PathBuf {
        self.dir.join("karpenter.log")
    }

    fn spawn(&self) -> Result<(Child, u16), KarpenterError> {
        let (metrics, health) = (free_port()?, free_port()?);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log())
            .map_err(KarpenterError::io("its log"))?;
        let err = log.try_clone().map_err(KarpenterError::io("its log"))?;
        let mut cmd = Command::new(&self.bin);
        cmd.env("KUBECONFIG", &self.kubeconfig)
            .env("SYSTEM_NAMESPACE", super::NAMESPACE)
            .env("DISABLE_LEADER_ELECTION", "true")
            .env("METRICS_PORT", metrics.to_string())
            .env("HEALTH_PROBE_PORT", health.to_string())
            .env("INSTANCE_TYPES_FILE_PATH", self.types_file())
            .env("LOG_LEVEL", "info")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        if !self.feature_gates.is_empty() {
            cmd.env("FEATURE_GATES", &self.feature_gates);
        }
        let child = cmd
            .spawn()
            .map_err(KarpenterError::io_at(self.bin.clone()))?;
        Ok((child, health))
    }
}

/// Whether `GET /readyz` on `port` answers 200 (a blocking check of at most a second).
fn ready(port: u16) -> bool {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let second = Duration::from_secs(1);
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, second) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(second));
    let req = b"GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    let mut head = [0u8; 12];
    s.write_all(req).is_ok() && s.read_exact(&mut head).is_ok() && head.ends_with(b"200")
}

impl KarpenterProcess {
    /// Starts Karpenter and waits until it reports ready.
    pub async fn start(launch: Launch) -> Result<KarpenterProcess, KarpenterError> {
        let (child, health) = launch.spawn()?;
        let mut p = KarpenterProcess {
            launch,
            child,
            health,
            before: Usage::default(),
        };
        p.wait_ready().await?;
        Ok(p)
    }

    async fn wait_ready(&mut self) -> Result<(), KarpenterError> {
        let start = Instant::now();
        while !ready(self.health) {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(KarpenterError::Exited {
                    status: status.to_string(),
                    log: self.launch.log(),
                });
            }
            if start.elapsed() > READY_WITHIN {
                return Err(KarpenterError::NotReady(self.launch.log()));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Ok(())
    }

    /// Stops Karpenter and starts it again (it reads its instance-types file at start).
    pub async fn restart(&mut self) -> Result<(), KarpenterError> {
        let used = self.usage();
        self.stop();
        let (child, health) = self.launch.spawn()?;
        self.child = child;
        self.health = health;
        self.before = Usage {
            cpu_seconds: used.cpu_seconds,
            peak_rss: used.peak_rss,
        };
        self.wait_ready().await
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// CPU and peak memory so far, over every run since the first start.
    pub fn usage(&self) -> Usage {
        let now = proc_usage(Path::new(&format!("/proc/{}", self.child.id())));
        Usage {
            cpu_seconds: self.before.cpu_seconds + now.cpu_seconds,
            peak_rss: self.before.peak_rss.max(now.peak_rss),
        }
    }

    /// Where it logs.
    pub fn log(&self) -> PathBuf {
        self.launch.log()
    }

    /// The instance-types file it reads at start.
    pub fn types_file(&self) -> PathBuf {
        self.launch.types_file()
    }
}

impl Drop for KarpenterProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Linux reports CPU times in `/proc` in ticks of 1/100 s (USER_HZ).
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU time and peak RSS of the process or thread at `dir` (`/proc/<pid>`,
/// `/proc/thread-self`); zeros when it cannot be read.
pub fn proc_usage(dir: &Path) -> Usage {
    let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
    let peak_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    Usage {
        cpu_seconds: (ticks(11) + ticks(12)) / TICKS_PER_SECOND,
        peak_rss: peak_kib * 1024,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_used_memory_and_a_busy_thread_cpu() {
        let me = proc_usage(Path::new("/proc/self"));
        assert!(me.peak_rss > 1024 * 1024, "{me:?}");
        // Spin until the thread's CPU time shows (however loaded the machine is).
        let start = Instant::now();
        let mut x = 0u64;
        let mut thread = Usage::default();
        while thread.cpu_seconds < 0.05 && start.elapsed() < Duration::from_secs(30) {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            thread = proc_usage(Path::new("/proc/thread-self"));
        }
        assert!(thread.cpu_seconds >= 0.05, "{thread:?}");
    }

    #[test]
    fn a_missing_process_reads_as_nothing_used() {
        assert_eq!(proc_usage(Path::new("/proc/no-such-pid")), Usage::default());
    }
}
