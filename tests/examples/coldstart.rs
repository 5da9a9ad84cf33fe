//! Cold start of the function binaries (webhook, provisioner, disruption, termination,
//! interruption): process start → first invocation answered, against the local Lambda Runtime
//! API, moto (the webhook reads its secret from SSM) and the in-process API server (the
//! getting-started cluster, nothing pending). Runs each binary `RUNS` times and prints the median, minimum and maximum.
//!
//! ```sh
//! make lambda   # or any build of the two binaries
//! cargo run -p kerf-e2e --example coldstart -- target/lambda/kerf-webhook target/lambda/kerf-provisioner
//! ```

use std::path::Path;
use std::time::Duration;

use kerf_e2e::account;
use kerf_e2e::lambda::{Function, RuntimeApi};
use kerf_e2e::world::{getting_started, read};

const RUNS: usize = 21;

fn fixture(name: &str) -> serde_json::Value {
    match serde_json::from_str(&read(&format!("events/{name}"))) {
        Ok(v) => v,
        Err(e) => panic!("{name}: {e}"),
    }
}

async fn measure(
    binary: &Path,
    event: &serde_json::Value,
    env: &[(&str, String)],
) -> Vec<Duration> {
    let mut out = Vec::new();
    for _ in 0..RUNS {
        let api = RuntimeApi::start().await;
        let id = api.push(event.clone());
        let f = Function::start(binary, &api, env, None);
        match api.wait(&id, Duration::from_secs(30)).await {
            Ok(_) => out.push(f.started.elapsed()),
            Err(e) => panic!("{}: {e}", binary.display()),
        }
    }
    out.sort();
    out
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (_guard, moto) = kerf_e2e::moto::fresh().await;
    let acct = account::seed(&moto.url).await;
    let world = match getting_started().await {
        Ok(w) => w,
        Err(e) => panic!("world: {e}"),
    };
    let sim = match world.sim() {
        Ok(sim) => sim,
        Err(e) => panic!("world: {e}"),
    };
    let env = acct.env(sim.url());
    for bin in &args {
        let event = if bin.contains("webhook") {
            fixture("webhook-pod-unschedulable.json")
        } else if bin.contains("disruption") {
            fixture("scheduled-event.json")
        } else if bin.contains("termination") {
            fixture("sqs-termination-batch.json")
        } else if bin.contains("interruption") {
            fixture("sqs-interruption-batch.json")
        } else {
            fixture("sqs-provisioning-batch.json")
        };
        let t = measure(Path::new(bin), &event, &env).await;
        println!(
            "{bin}: median {:?}, min {:?}, max {:?} over {RUNS} cold starts",
            t[t.len() / 2],
            t[0],
            t[t.len() - 1]
        );
    }
}
