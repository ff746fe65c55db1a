//! LLM endpoint mode: OpenAI-compatible chat completions (OpenAI, or a local Ollama through its
//! `/v1` API) through [`tg_shared::http`] (timeouts, retries with backoff on 429, 5xx and
//! timeouts), with bounded concurrency and a spend cap. Each intent is stored the moment it arrives, so an interrupted run
//! loses nothing already paid for. The API key is sent in a header and nowhere else: every
//! message that could carry text from the server is scrubbed of it.

use crate::cli::{Cli, Provider};
use crate::prompt;
use crate::stream::SymbolInfo;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;
use tg_shared::exit;
use tg_shared::http::{env, snippet, Endpoint};
use tg_shared::intents::{IntentStore, StoredIntent, SOURCE_LLM};
use tg_shared::options::DEFAULT_MAX_REQUESTS;
use tg_shared::stage::Failure;

pub const ENV_PROVIDER: &str = "TLDRGRAPH_LLM_PROVIDER";
pub const ENV_BASE_URL: &str = "TLDRGRAPH_LLM_BASE_URL";
pub const ENV_MODEL: &str = "TLDRGRAPH_LLM_MODEL";
pub const ENV_API_KEY: &str = "TLDRGRAPH_LLM_API_KEY";
pub const ENV_OPENAI_KEY: &str = "OPENAI_API_KEY";
/// First backoff in milliseconds (doubled per retry); tests shorten it.
pub const ENV_BACKOFF_MS: &str = "TLDRGRAPH_LLM_BACKOFF_MS";

const OPENAI_URL: &str = "https://api.openai.com/v1";
const OPENAI_MODEL: &str = "gpt-4o-mini";
const OLLAMA_URL: &str = "http://127.0.0.1:11434/v1";
const OLLAMA_MODEL: &str = "llama3.2";
#[derive(Debug)]
pub struct ProviderConfig {
    pub kind: Provider,
    pub endpoint: Endpoint,
    pub model: String,
    pub concurrency: usize,
    pub max_requests: u64,
}

impl ProviderConfig {
    /// The provider from `--provider`, else `$TLDRGRAPH_LLM_PROVIDER`; `None` for the agent.
    pub fn resolve(cli: &Cli) -> Result<Option<ProviderConfig>, Failure> {
        let kind = match cli.llm.provider {
            Some(kind) => kind,
            None => match env(ENV_PROVIDER).as_deref().map(str::to_ascii_lowercase) {
                None => Provider::Agent,
                Some(name) => match name.as_str() {
                    "agent" => Provider::Agent,
                    "openai" => Provider::Openai,
                    "ollama" => Provider::Ollama,
                    other => {
                        return Err(Failure::new(
                            exit::USAGE,
                            format!("{ENV_PROVIDER}={other}: not a provider"),
                        )
                        .with_hint("use openai, ollama or agent"))
                    }
                },
            },
        };
        let (default_url, default_model) = match kind {
            Provider::Agent => return Ok(None),
            Provider::Openai => (OPENAI_URL, OPENAI_MODEL),
            Provider::Ollama => (OLLAMA_URL, OLLAMA_MODEL),
        };
        let base_url = env(ENV_BASE_URL).unwrap_or_else(|| default_url.to_string());
        // OPENAI_API_KEY is OpenAI's: it never goes to an Ollama endpoint.
        let api_key = env(ENV_API_KEY).or_else(|| {
            (kind == Provider::Openai)
                .then(|| env(ENV_OPENAI_KEY))
                .flatten()
        });
        let backoff_ms = env(ENV_BACKOFF_MS)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(500);
        let endpoint = Endpoint::new(
            &base_url,
            api_key,
            cli.http.timeout(),
            cli.http.retries,
            Duration::from_millis(backoff_ms),
        )
        .map_err(|e| Failure::new(exit::USAGE, format!("{ENV_BASE_URL}: {e}")))?;
        Ok(Some(ProviderConfig {
            kind,
            endpoint,
            model: env(ENV_MODEL).unwrap_or_else(|| default_model.to_string()),
            concurrency: usize::try_from(cli.concurrency).unwrap_or(4).max(1),
            max_requests: cli.llm.max_requests.unwrap_or(DEFAULT_MAX_REQUESTS),
        }))
    }

    /// `text` with the key (if any) replaced, for anything printed or stored.
    pub fn redact(&self, text: &str) -> String {
        self.endpoint.redact(text)
    }
}

/// Callers' and callees' names of the candidates, for prompts.
#[derive(Debug, Default)]
pub struct Neighbourhood {
    pub callers: HashMap<String, Vec<String>>,
    pub callees: HashMap<String, Vec<String>>,
}

/// One symbol to ask about.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: String,
    pub hash: String,
    pub prompt: String,
}

impl Job {
    pub fn new(symbol: &SymbolInfo, root: &Path, around: &Neighbourhood) -> Job {
        let none = Vec::new();
        let source = prompt::source_of(root, symbol);
        Job {
            id: symbol.id.clone(),
            hash: symbol.hash.clone(),
            prompt: prompt::user_message(
                symbol,
                source.as_deref(),
                around.callers.get(&symbol.id).unwrap_or(&none),
                around.callees.get(&symbol.id).unwrap_or(&none),
            ),
        }
    }
}

/// What a round of requests did.
#[derive(Debug, Default)]
pub struct Report {
    /// (id, intent) stored this run.
    pub stored: Vec<(String, String)>,
    /// Ids left without an intent (retried by the next run).
    pub failed: Vec<String>,
    /// Requests sent, retries included.
    pub requests: u64,
}

/// Asks for every job's intent and stores each answer in `store` (saved to `path`) as it comes.
pub fn enrich(
    config: &ProviderConfig,
    jobs: Vec<Job>,
    store: &mut IntentStore,
    path: &Path,
    quiet: bool,
) -> Result<Report, Failure> {
    let mut report = Report::default();
    if jobs.is_empty() {
        return Ok(report);
    }
    // Checked only when there is something to send: a run with nothing pending needs no key.
    if config.kind == Provider::Openai
        && !config.endpoint.has_key()
        && config.endpoint.base_url == OPENAI_URL
    {
        return Err(Failure::new(
            exit::USAGE,
            "the openai provider needs an API key and none is set",
        )
        .with_hint(format!(
            "export {ENV_API_KEY} (or {ENV_OPENAI_KEY}), or point {ENV_BASE_URL} at a keyless endpoint"
        )));
    }
    let workers = config.concurrency.min(jobs.len());
    let queue = Mutex::new(jobs.into_iter().collect::<VecDeque<Job>>());
    let sent = AtomicU64::new(0);
    let (tx, rx) = mpsc::channel::<(Job, Result<String, String>)>();
    let mut write_error = None;
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (queue, sent) = (&queue, &sent);
            scope.spawn(move || loop {
                let job = match queue.lock() {
                    Ok(mut queue) => queue.pop_front(),
                    Err(_) => None,
                };
                let Some(job) = job else { break };
                let answer = ask(config, &job, sent);
                if tx.send((job, answer)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // Each answer is on disk before the next is awaited.
        for (job, answer) in rx {
            match answer {
                Ok(intent) if write_error.is_none() => {
                    // An endpoint echoing headers must not put the key into a committed file.
                    let intent = config.redact(&intent);
                    // The agent's layer, inputs and outputs for this symbol outlive a new text.
                    let previous = store.get(&job.id).cloned();
                    store.insert(StoredIntent {
                        id: job.id.clone(),
                        intent: intent.clone(),
                        hash: job.hash.clone(),
                        source: SOURCE_LLM.into(),
                        model: Some(config.model.clone()),
                        layer: previous.as_ref().and_then(|p| p.layer.clone()),
                        inputs: previous.as_ref().and_then(|p| p.inputs.clone()),
                        outputs: previous.and_then(|p| p.outputs),
                    });
                    match store.save(path) {
                        Ok(_) => report.stored.push((job.id, intent)),
                        Err(err) => {
                            write_error = Some(Failure::cant_write(path, &err));
                            report.failed.push(job.id);
                        }
                    }
                }
                Ok(_) => report.failed.push(job.id),
                Err(why) => {
                    if !quiet {
                        eprintln!("tg-enrich: warning: {}: {}", job.id, config.redact(&why));
                    }
                    report.failed.push(job.id);
                }
            }
        }
    });
    report.requests = sent.load(Ordering::SeqCst).min(config.max_requests);
    report.failed.sort();
    report.stored.sort();
    if let Some(failure) = write_error {
        return Err(failure);
    }
    Ok(report)
}

/// One symbol's intent, with retries; the reason when there is none.
fn ask(config: &ProviderConfig, job: &Job, sent: &AtomicU64) -> Result<String, String> {
    let body = json!({
        "model": config.model,
        "temperature": 0,
        "max_tokens": 80,
        "messages": [
            {"role": "system", "content": prompt::SYSTEM},
            {"role": "user", "content": job.prompt},
        ],
    });
    // The spend cap counts every attempt, retries included.
    let mut within_cap = |last: &str| {
        if sent.fetch_add(1, Ordering::SeqCst) < config.max_requests {
            return Ok(());
        }
        Err(format!(
            "not asked: the spend cap of {} requests (--max-requests) is reached{}",
            config.max_requests,
            if last.is_empty() {
                String::new()
            } else {
                format!("; last error: {last}")
            }
        ))
    };
    let text = config
        .endpoint
        .post_json("chat/completions", &body, &mut within_cap)?;
    parse_completion(&text)
}

/// The intent in a chat-completions response body.
fn parse_completion(text: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("malformed response ({e}): {}", snippet(text)))?;
    let content = value["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| format!("no choices[0].message.content in {}", snippet(text)))?;
    prompt::clean_answer(content).ok_or_else(|| "an empty completion".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_are_parsed_or_refused_with_a_reason() {
        let ok = r#"{"choices":[{"message":{"role":"assistant","content":"Loads the graph."}}]}"#;
        assert_eq!(parse_completion(ok).as_deref(), Ok("Loads the graph."));
        assert!(parse_completion("{not json")
            .unwrap_err()
            .contains("malformed"));
        assert!(parse_completion(r#"{"choices":[]}"#)
            .unwrap_err()
            .contains("no choices"));
    }
}
