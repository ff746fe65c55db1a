//! HTTP to OpenAI-compatible endpoints: chat completions for tg-enrich and embeddings for
//! tg-embed. One client, one retry policy, and one way to keep the API key out of every message.
//! ureq stays behind this module.
//!
//! Retried with exponential backoff: 429, 5xx, timeouts and refused connections (a
//! `Retry-After` in seconds, at most [`MAX_RETRY_AFTER`], replaces the backoff). Anything else is
//! an answer: another 4xx, an unknown host, a malformed request.

use serde_json::Value;
use std::time::Duration;

/// The longest wait a `Retry-After` header may impose.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// `$name`, unless unset or blank.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// At most 200 characters of a body, on one line (for messages).
pub fn snippet(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(200)
        .collect()
}

/// Set to `1` (by `--allow-insecure-http`) to allow plain http to a host other than loopback.
pub const ENV_ALLOW_INSECURE_HTTP: &str = "TLDRGRAPH_ALLOW_INSECURE_HTTP";

/// Lets this process (and the stages it spawns) use plain http beyond loopback: what
/// `--allow-insecure-http` does. Call before any thread starts.
pub fn allow_insecure_http() {
    std::env::set_var(ENV_ALLOW_INSECURE_HTTP, "1");
}

fn insecure_http_allowed() -> bool {
    env(ENV_ALLOW_INSECURE_HTTP).is_some_and(|v| v == "1")
}

/// The host of `rest`, a URL after its scheme: `[::1]` keeps its brackets, userinfo is dropped.
fn url_host(rest: &str) -> &str {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    if host_port.starts_with('[') {
        return host_port
            .split(']')
            .next()
            .map_or(host_port, |h| &host_port[..h.len() + 1]);
    }
    host_port.split(':').next().unwrap_or(host_port)
}

/// Whether traffic to `host` never leaves this machine.
fn is_loopback(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") || host == "[::1]" {
        return true;
    }
    host.parse::<std::net::Ipv4Addr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// An endpoint: base URL, key, and how to retry.
pub struct Endpoint {
    pub base_url: String,
    api_key: Option<String>,
    pub timeout: Duration,
    pub retries: u32,
    /// First wait, doubled per retry.
    pub backoff: Duration,
    agent: ureq::Agent,
}

// Never print the key, even in a debug dump.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl Endpoint {
    /// `base_url` (trailing `/` dropped; it must be http or https) with `api_key`.
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        timeout: Duration,
        retries: u32,
        backoff: Duration,
    ) -> Result<Endpoint, String> {
        let base_url = base_url.trim_end_matches('/').to_string();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(format!("{base_url}: not an http(s) URL"));
        }
        if let Some(rest) = base_url.strip_prefix("http://") {
            let host = url_host(rest);
            if !is_loopback(host) && !insecure_http_allowed() {
                return Err(format!(
                    "{base_url}: plain http to {host} would send the code and the key unencrypted; use https, a loopback address, or pass --allow-insecure-http (or set {ENV_ALLOW_INSECURE_HTTP}=1)"
                ));
            }
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(concat!("tldrgraph/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Ok(Endpoint {
            base_url,
            api_key: api_key.filter(|k| !k.is_empty()),
            timeout,
            retries,
            backoff,
            agent,
        })
    }

    pub fn has_key(&self) -> bool {
        self.api_key.is_some()
    }

    /// `text` with the key replaced, for anything printed or stored.
    pub fn redact(&self, text: &str) -> String {
        match &self.api_key {
            Some(key) => text.replace(key.as_str(), "[redacted]"),
            None => text.to_string(),
        }
    }

    /// POSTs `body` to `{base}/{path}` and returns the text of a 200 answer, retrying as the
    /// module says. `before_attempt` runs before every attempt with the last error so far, and
    /// may refuse (a spend cap). Every error is already redacted.
    pub fn post_json(
        &self,
        path: &str,
        body: &Value,
        before_attempt: &mut dyn FnMut(&str) -> Result<(), String>,
    ) -> Result<String, String> {
        let url = format!("{}/{path}", self.base_url);
        let mut last = String::new();
        for attempt in 0..=self.retries {
            before_attempt(&last).map_err(|e| self.redact(&e))?;
            let mut request = self
                .agent
                .post(&url)
                .header("Content-Type", "application/json");
            if let Some(key) = &self.api_key {
                request = request.header("Authorization", format!("Bearer {key}"));
            }
            let mut wait = self.backoff.saturating_mul(1 << attempt.min(6));
            match request.send_json(body) {
                Ok(mut response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
                    let text = response.body_mut().read_to_string().unwrap_or_default();
                    if status == 200 {
                        return Ok(text);
                    }
                    last = self.redact(&format!("HTTP {status}: {}", snippet(&text)));
                    if status != 429 && status < 500 {
                        return Err(last);
                    }
                    if let Some(after) = retry_after {
                        wait = after;
                    }
                }
                Err(ureq::Error::Timeout(what)) => {
                    last = format!("timed out ({what}) after {}s", self.timeout.as_secs());
                }
                Err(ureq::Error::Io(err)) => last = format!("connection failed: {err}"),
                Err(ureq::Error::ConnectionFailed) => last = "connection failed".to_string(),
                Err(ureq::Error::HostNotFound) => return Err(format!("{url}: host not found")),
                Err(err) => return Err(self.redact(&format!("request failed: {err}"))),
            }
            if attempt < self.retries {
                std::thread::sleep(wait);
            }
        }
        Err(format!(
            "{url}: gave up after {} attempts: {last}",
            self.retries + 1
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_redacted_and_urls_are_checked() {
        let secs = Duration::from_secs(1);
        let e =
            Endpoint::new("http://127.0.0.1:9/v1/", Some("sk-1".into()), secs, 0, secs).unwrap();
        assert_eq!(e.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(e.redact("bad key sk-1!"), "bad key [redacted]!");
        assert!(!format!("{e:?}").contains("sk-1"));
        assert!(Endpoint::new("ftp://x", None, secs, 0, secs).is_err());
        for loopback in [
            "http://localhost:11434",
            "http://127.0.0.2/v1",
            "http://[::1]:8080/v1",
        ] {
            assert!(
                Endpoint::new(loopback, None, secs, 0, secs).is_ok(),
                "{loopback}"
            );
        }
        assert!(Endpoint::new("https://api.example.com/v1", None, secs, 0, secs).is_ok());
        // Only loopback counts, however the URL dresses the host up.
        for remote in [
            "http://example.com/v1",
            "http://127.0.0.1.evil.com/",
            "http://127.0.0.1@10.0.0.5:80/",
            "http://[::2]/",
            "http://10.0.0.1:11434",
        ] {
            if insecure_http_allowed() {
                break;
            }
            let err = Endpoint::new(remote, None, secs, 0, secs)
                .err()
                .unwrap_or_default();
            assert!(err.contains("--allow-insecure-http"), "{remote}: {err}");
        }
        assert_eq!(url_host("user:pw@host.example:80/x"), "host.example");
        assert_eq!(url_host("[::1]:80/x"), "[::1]");
        assert_eq!(snippet("a\n  b"), "a b");
    }
}
