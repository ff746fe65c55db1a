//! `tldrgraph mcp`: the map as a Model Context Protocol server over stdio. It keeps the index
//! loaded between calls (tg-query's answers are linked in, not spawned), checks freshness
//! before each answer and rebuilds through `init` when the sources changed, and fits every
//! answer to a token budget. stdout carries the protocol only; anything else goes to stderr.

pub mod budget;
mod framing;
mod server;
pub mod session;
pub mod tools;
mod watch;

use crate::cli::McpArgs;
use rmcp::ServiceExt;
use std::time::Duration;
use tg_shared::exit;
use tg_shared::stage::Failure;

/// Serves until the client closes stdin; the exit code.
pub fn serve(args: &McpArgs) -> i32 {
    let root = match crate::repository(args.root.as_deref()) {
        Ok(root) => root,
        Err(failure) => return crate::report(&failure),
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return crate::report(&Failure::new(
                exit::UNAVAILABLE,
                format!("cannot find this executable (to run init): {e}"),
            ))
        }
    };
    let wait = Duration::from_millis(args.wait_ms);
    let enrich = args.enrich.map(|mode| match mode {
        tg_shared::options::Enrich::Off => "off".to_string(),
        tg_shared::options::Enrich::Auto => "auto".to_string(),
    });
    let session = session::Session::new(&root, exe, wait, enrich);
    eprintln!(
        "tldrgraph mcp: serving {} over stdio (rebuilds wait up to {} ms)",
        root.display(),
        args.wait_ms
    );
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return crate::report(&Failure::new(
                exit::SOFTWARE,
                format!("cannot start the server's runtime: {e}"),
            ))
        }
    };
    let served = runtime.block_on(async move {
        let (transport, pump) = framing::frame(tokio::io::stdin(), tokio::io::stdout());
        let pump = tokio::spawn(pump);
        let running = server::Server::new(session)
            .serve(transport)
            .await
            .map_err(|e| format!("the client did not complete the handshake: {e}"))?;
        let stopped = running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("the server stopped: {e}"));
        // What the server wrote last reaches the client before we go.
        let _ = pump.await;
        stopped
    });
    // A read pending on stdin cannot be cancelled: do not wait for the runtime to drain it.
    runtime.shutdown_background();
    match served {
        Ok(()) => exit::OK,
        Err(message) => crate::report(&Failure::new(exit::SOFTWARE, message)),
    }
}
