//! A real HTTP/1.1 server on 127.0.0.1 for provider tests: it answers each request with the
//! next scripted reply (or hangs), one thread per connection, and records what it received.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Status, extra headers, body.
    Respond(u16, Vec<(String, String)>, String),
    /// Waits this long before answering 200 with a valid completion (past the client's timeout).
    Hang(Duration, String),
}

impl Reply {
    /// A chat completion whose message is `content`.
    pub fn completion(content: &str) -> Reply {
        Reply::Respond(200, Vec::new(), completion_body(content))
    }

    pub fn status(code: u16, body: &str) -> Reply {
        Reply::Respond(code, Vec::new(), body.to_string())
    }
}

pub fn completion_body(content: &str) -> String {
    serde_json::json!({
        "id": "cmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    })
    .to_string()
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }
}

struct State {
    script: Vec<Reply>,
    /// Used once the script is exhausted: a completion made from the request.
    fallback: fn(&Received) -> Reply,
    received: Vec<Received>,
}

pub struct Server {
    pub port: u16,
    state: Arc<Mutex<State>>,
}

impl Server {
    /// Starts the server; `script` answers the first requests in arrival order, `fallback`
    /// the rest.
    pub fn start(script: Vec<Reply>, fallback: fn(&Received) -> Reply) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("addr").port();
        let state = Arc::new(Mutex::new(State {
            script: script.into_iter().rev().collect(),
            fallback,
            received: Vec::new(),
        }));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        Server { port, state }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.lock().expect("lock").received.clone()
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Received> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    let reply = {
        let mut state = state.lock().expect("lock");
        state.received.push(request.clone());
        match state.script.pop() {
            Some(reply) => reply,
            None => (state.fallback)(&request),
        }
    };
    let (code, headers, body) = match reply {
        Reply::Respond(code, headers, body) => (code, headers, body),
        Reply::Hang(wait, content) => {
            std::thread::sleep(wait);
            (200, Vec::new(), completion_body(&content))
        }
    };
    let mut out = write_half;
    let mut head = format!(
        "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body.as_bytes());
    let _ = out.flush();
}
