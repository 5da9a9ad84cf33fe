//! `kerf`: parse arguments, run, print; exit 0 on success, 2 on bad input, 1 otherwise.

use std::io::Write;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Parser;
use kerf_cli::args::Cli;

/// Reading a cluster dump makes and frees millions of small values; mimalloc does that in
/// about half the time of the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    match kerf_cli::run(&cli, now) {
        Ok(out) => {
            for n in &out.notes {
                eprintln!("note: {n}");
            }
            for w in &out.warnings {
                eprintln!("warning: {w}");
            }
            let mut stdout = std::io::stdout().lock();
            if stdout.write_all(out.stdout.as_bytes()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
