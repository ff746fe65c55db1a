//! `tldrgraph ui --serve`: the page over HTTP on 127.0.0.1 only, a thread per connection,
//! remade when a build rewrites graph.json or plan.json or the sources move away from the build
//! (checked at each request, from the file stamps). GET and HEAD of `/` or `/map.html`; anything
//! else is 404 or 405.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tg_shared::artifacts;
use tg_shared::exit;
use tg_shared::stage::Failure;
use tg_shared::store::{self, Store};

/// The longest a request line and its headers may be.
const MAX_REQUEST_BYTES: u64 = 16 * 1024;

/// What the page was made from, by modification stamp: a new build changes one of them.
fn build_stamps(store: &Store) -> Vec<Option<(u64, u128)>> {
    [
        artifacts::GRAPH,
        artifacts::GRAPH_COMPRESSED,
        artifacts::PLAN,
    ]
    .iter()
    .map(|name| store::stamp(&store.path(name)))
    .collect()
}

/// Serves until the process is stopped; returns only when the port cannot be had.
pub fn serve(store: &Store, output: &Path, port: u16, html: String) -> Result<(), Failure> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(|e| {
        Failure::new(
            exit::UNAVAILABLE,
            format!("cannot listen on 127.0.0.1:{port}: {e}"),
        )
        .with_hint("choose another port with --port N (0 takes any free one)")
    })?;
    let address = listener
        .local_addr()
        .map_err(|e| Failure::new(exit::IO, format!("cannot read the bound address: {e}")))?;
    announce(&format!("http://{address}/"));
    let mut page = Page {
        html: Arc::new(html),
        stamps: build_stamps(store),
        stale: super::stale_line(store),
        output: output.to_path_buf(),
    };
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        page.refresh(store);
        // A thread per connection: a client that connects and says nothing holds only its own.
        let html = Arc::clone(&page.html);
        std::thread::spawn(move || {
            if let Err(e) = answer(stream, &html) {
                eprintln!("tldrgraph: a request failed: {e}");
            }
        });
    }
    Ok(())
}

/// The URL, on stdout at once (a script waits for it), and how to stop, on stderr.
fn announce(url: &str) {
    let mut out = std::io::stdout().lock();
    // A closed stdout only loses the announcement; the server still serves.
    let _ = writeln!(out, "{url}").and_then(|()| out.flush());
    eprintln!("tldrgraph: serving the map at {url} (loopback only; Ctrl-C stops)");
}

struct Page {
    html: Arc<String>,
    stamps: Vec<Option<(u64, u128)>>,
    /// The stale line the page shows, so that an edit after the build is told at the next request.
    stale: Option<String>,
    output: PathBuf,
}

impl Page {
    /// Remakes the page (and rewrites its file) when a build changed what it was made from, or
    /// the sources moved away from the build (the page then says it is stale); on failure keeps
    /// the last good page and says why.
    fn refresh(&mut self, store: &Store) {
        let stamps = build_stamps(store);
        let stale = super::stale_line(store);
        if stamps == self.stamps && stale == self.stale {
            return;
        }
        match super::build_page(store) {
            Ok(html) => {
                if let Err(e) = store::write_if_changed(&self.output, html.as_bytes()) {
                    eprintln!("tldrgraph: cannot rewrite {}: {e}", self.output.display());
                }
                self.html = Arc::new(html);
                self.stamps = stamps;
                self.stale = stale;
                eprintln!("tldrgraph: the graph or the sources changed; the map is remade");
            }
            Err(failure) => eprintln!(
                "tldrgraph: the map keeps the last build: {}",
                failure.message
            ),
        }
    }
}

fn answer(stream: TcpStream, html: &str) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?.take(MAX_REQUEST_BYTES));
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Read the headers to their blank line so the client is not reset mid-send.
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split(['?', '#']).next().unwrap_or("");
    let (status, body, content_type) = match (method, path) {
        ("GET" | "HEAD", "/" | "/map.html") => ("200 OK", html, "text/html; charset=utf-8"),
        ("GET" | "HEAD", _) => ("404 Not Found", "not found\n", "text/plain; charset=utf-8"),
        _ => (
            "405 Method Not Allowed",
            "only GET and HEAD\n",
            "text/plain; charset=utf-8",
        ),
    };
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Content-Security-Policy: {}\r\nX-Content-Type-Options: nosniff\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len(),
        super::page::content_security_policy()
    )?;
    if method != "HEAD" {
        out.write_all(body.as_bytes())?;
    }
    out.flush()
}
