//! A moto server per test binary: started on a free 127.0.0.1 port, waited for, reset between
//! tests (`POST /moto-api/reset`), killed on drop and when the test process exits.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, MutexGuard};

/// A running moto server.
pub struct Moto {
    child: Child,
    pub url: String,
    pub log: PathBuf,
}

impl Drop for Moto {
    fn drop(&mut self) {
        // Closing stdin makes the wrapper shell kill moto; kill the wrapper too.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn moto_path() -> PathBuf {
    if let Some(p) = std::env::var_os("KERF_MOTO_SERVER") {
        return PathBuf::from(p);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/moto_server")
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local addr").port()
}

/// One raw HTTP/1.0 request; returns the status code and body.
pub fn http(addr: &str, method: &str, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n"
    )?;
    let mut resp = String::new();
    s.read_to_string(&mut resp)?;
    let status = resp
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = resp
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

impl Moto {
    /// Starts moto and waits until it answers.
    pub fn start() -> Moto {
        let path = moto_path();
        assert!(
            path.exists(),
            "moto server not found at {} — run scripts/setup.sh (it installs moto 5.2.1 into \
             .venv) or set KERF_MOTO_SERVER to a moto_server binary",
            path.display()
        );
        let port = free_port();
        let log = std::env::temp_dir().join(format!("kerf-aws-moto-{port}.log"));
        // The wrapper kills moto when our end of its stdin closes (also when we exit).
        let child = Command::new("sh")
            .arg("-c")
            .arg(r#""$0" -H 127.0.0.1 -p "$1" >"$2" 2>&1 & m=$!; cat >/dev/null; kill $m"#)
            .arg(&path)
            .arg(port.to_string())
            .arg(&log)
            .stdin(Stdio::piped())
            .spawn()
            .expect("spawn moto");
        let moto = Moto {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
        };
        moto.wait_ready(Duration::from_secs(30));
        moto
    }

    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    fn wait_ready(&self, limit: Duration) {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok((200, _)) = http(self.addr(), "GET", "/moto-api/") {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        panic!("moto did not become ready within {limit:?}; log:\n{log}");
    }

    /// Wipes all moto state.
    pub fn reset(&self) {
        let (status, body) = http(self.addr(), "POST", "/moto-api/reset").expect("reset moto");
        assert_eq!(status, 200, "moto reset failed: {body}");
    }
}

static MOTO: OnceLock<Moto> = OnceLock::new();
static SERIAL: Mutex<()> = Mutex::const_new(());

/// The binary's moto server, started on first use.
pub fn moto() -> &'static Moto {
    MOTO.get_or_init(Moto::start)
}

/// Serialises tests sharing moto and resets it; hold the guard for the whole test.
pub async fn fresh() -> (MutexGuard<'static, ()>, &'static Moto) {
    let guard = SERIAL.lock().await;
    let m = moto();
    m.reset();
    (guard, m)
}
