//! The embedders: the static model in-process, or an OpenAI-compatible `/v1/embeddings`
//! endpoint (OpenAI, or Ollama's OpenAI API) in batches, through [`crate::http`] (timeouts
//! and retries). tg-embed embeds the symbols with it and tg-query the question, so index and
//! query vectors always match.

use super::{self as embed, StaticModel};
use crate::freshness;
use crate::http::{env, snippet, Endpoint};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

pub const ENV_MODE: &str = "TLDRGRAPH_EMBEDDINGS";
pub const ENV_BASE_URL: &str = "TLDRGRAPH_EMBED_BASE_URL";
pub const ENV_MODEL: &str = "TLDRGRAPH_EMBED_MODEL";
pub const ENV_API_KEY: &str = "TLDRGRAPH_EMBED_API_KEY";
pub const ENV_OPENAI_KEY: &str = "OPENAI_API_KEY";
/// First backoff in milliseconds (doubled per retry); tests shorten it.
pub const ENV_BACKOFF_MS: &str = "TLDRGRAPH_EMBED_BACKOFF_MS";

const OPENAI_URL: &str = "https://api.openai.com/v1";
const OPENAI_MODEL: &str = "text-embedding-3-small";
const OLLAMA_URL: &str = "http://127.0.0.1:11434/v1";
const OLLAMA_MODEL: &str = "nomic-embed-text";

/// An HTTP embeddings endpoint.
#[derive(Debug)]
pub struct HttpEmbedder {
    pub service: Service,
    pub endpoint: Endpoint,
    pub model: String,
    pub batch: usize,
}

/// Which HTTP service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Openai,
    Ollama,
}

impl HttpEmbedder {
    /// From the environment; the error is a usage problem to report.
    pub fn from_env(
        service: Service,
        timeout: Duration,
        retries: u32,
        batch: usize,
    ) -> Result<HttpEmbedder, String> {
        let (url, model) = match service {
            Service::Openai => (OPENAI_URL, OPENAI_MODEL),
            Service::Ollama => (OLLAMA_URL, OLLAMA_MODEL),
        };
        let base_url = env(ENV_BASE_URL).unwrap_or_else(|| url.to_string());
        // OPENAI_API_KEY is OpenAI's: it never goes to an Ollama endpoint.
        let api_key = env(ENV_API_KEY).or_else(|| {
            (service == Service::Openai)
                .then(|| env(ENV_OPENAI_KEY))
                .flatten()
        });
        if service == Service::Openai
            && api_key.is_none()
            && base_url.trim_end_matches('/') == OPENAI_URL
        {
            return Err(format!(
                "the openai embeddings provider needs a key: export {ENV_API_KEY} or {ENV_OPENAI_KEY}"
            ));
        }
        let backoff = Duration::from_millis(
            env(ENV_BACKOFF_MS)
                .and_then(|v| v.parse().ok())
                .unwrap_or(500),
        );
        let endpoint = Endpoint::new(&base_url, api_key, timeout, retries, backoff)
            .map_err(|e| format!("{ENV_BASE_URL}: {e}"))?;
        Ok(HttpEmbedder {
            service,
            endpoint,
            model: env(ENV_MODEL).unwrap_or_else(|| model.to_string()),
            batch: batch.max(1),
        })
    }

    /// What the index records: vectors of another endpoint or model are not comparable.
    pub fn id(&self) -> String {
        let service = match self.service {
            Service::Openai => "openai",
            Service::Ollama => "ollama",
        };
        format!("http:{service}:{}:{}", self.endpoint.base_url, self.model)
    }

    /// Embeds `texts` in batches; unit vectors in order, or why not.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.batch) {
            let body = json!({"model": self.model, "input": chunk});
            let text = self
                .endpoint
                .post_json("embeddings", &body, &mut |_| Ok(()))?;
            // A body echoing the request may carry the key: the message must not.
            out.extend(parse(&text, chunk.len()).map_err(|e| self.endpoint.redact(&e))?);
        }
        Ok(out)
    }
}

fn parse(text: &str, expected: usize) -> Result<Vec<Vec<f32>>, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("malformed response ({e}): {}", snippet(text)))?;
    let data = value["data"]
        .as_array()
        .ok_or_else(|| format!("no `data` array in {}", snippet(text)))?;
    if data.len() != expected {
        return Err(format!("{} vectors for {expected} texts", data.len()));
    }
    // Providers may reorder; `index` says which text each vector is for.
    let mut rows: Vec<(usize, Vec<f32>)> = Vec::with_capacity(data.len());
    for (position, item) in data.iter().enumerate() {
        let index = item["index"].as_u64().map_or(position, |i| i as usize);
        let mut vector: Vec<f32> = item["embedding"]
            .as_array()
            .ok_or_else(|| "an item without `embedding`".to_string())?
            .iter()
            .map(|v| v.as_f64().map(|f| f as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| "a non-numeric embedding".to_string())?;
        embed::normalize(&mut vector);
        rows.push((index, vector));
    }
    rows.sort_by_key(|(i, _)| *i);
    if rows.iter().enumerate().any(|(at, (i, _))| *i != at) {
        return Err("the `index` fields are not each text once".into());
    }
    let dim = rows.first().map_or(0, |(_, v)| v.len());
    if dim == 0 || rows.iter().any(|(_, v)| v.len() != dim) {
        return Err("embeddings of different or zero lengths".into());
    }
    Ok(rows.into_iter().map(|(_, v)| v).collect())
}

/// The embedder in use.
#[derive(Debug)]
pub enum Embedder {
    Static(StaticModel),
    /// The static table at a path, loaded only when there is something to embed (a rerun
    /// that reuses every vector never reads its 47 MB).
    StaticAt {
        path: std::path::PathBuf,
        id: String,
    },
    Http(HttpEmbedder),
}

impl Embedder {
    /// The default embedder, without loading it; why not, when the table is missing or bad.
    pub fn static_at(path: std::path::PathBuf) -> Result<Embedder, String> {
        let id = embed::model_id(&path)?;
        Ok(Embedder::StaticAt { path, id })
    }

    /// The same embedder with its table in memory (a `StaticAt` is read now), for a caller
    /// about to embed in several calls.
    pub fn loaded(self) -> Result<Embedder, String> {
        match self {
            Embedder::StaticAt { path, .. } => StaticModel::load(&path).map(Embedder::Static),
            other => Ok(other),
        }
    }

    pub fn id(&self) -> String {
        match self {
            Embedder::Static(model) => model.id().to_string(),
            Embedder::StaticAt { id, .. } => id.clone(),
            Embedder::Http(http) => http.id(),
        }
    }

    /// Unit vectors for `texts`, in order.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        use rayon::prelude::*;
        match self {
            Embedder::Static(model) => texts.par_iter().map(|t| model.embed(t)).collect(),
            Embedder::StaticAt { .. } if texts.is_empty() => Ok(Vec::new()),
            Embedder::StaticAt { path, .. } => {
                let model = StaticModel::load(path)?;
                texts.par_iter().map(|t| model.embed(t)).collect()
            }
            Embedder::Http(http) => http.embed(texts),
        }
    }
}

/// The embedder an index was built with, for embedding a query: the static model when the
/// index says static, the same endpoint when it says http (its settings from the environment).
/// The static table is opened with its rows left in the file; `verified` records the table's
/// stamp when it last hashed to `id`, so that an answer does not hash its 47 MB again while the
/// stamp holds.
pub fn for_index(id: &str, timeout: Duration, verified: &Path) -> Result<Embedder, String> {
    if id.starts_with("static:") {
        let path = embed::model_path();
        let stamp = freshness::file_stamp(&path);
        let trusted = freshness::verified_before(verified, stamp, id);
        let model = StaticModel::open(&path, trusted.then(|| id.to_string()))?;
        if model.id() != id {
            return Err(format!(
                "the index was embedded with {id}, the model here is {}: run `tldrgraph init` again",
                model.id()
            ));
        }
        if !trusted {
            freshness::remember_verified(verified, stamp, id);
        }
        return Ok(Embedder::Static(model));
    }
    let service = if id.starts_with("http:ollama:") {
        Service::Ollama
    } else {
        Service::Openai
    };
    let http = HttpEmbedder::from_env(service, timeout, 1, 1)?;
    if http.id() != id {
        return Err(format!(
            "the index was embedded with {id}; the environment now names {}",
            http.id()
        ));
    }
    Ok(Embedder::Http(http))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_put_back_in_order_and_normalised() {
        let body = r#"{"data":[{"index":1,"embedding":[0,2]},{"index":0,"embedding":[3,4]}]}"#;
        let rows = parse(body, 2).unwrap();
        assert_eq!(rows, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        assert!(parse(body, 3)
            .unwrap_err()
            .contains("2 vectors for 3 texts"));
        assert!(parse("{oops", 1).unwrap_err().contains("malformed"));
        let twice = r#"{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]}"#;
        assert!(parse(twice, 2).unwrap_err().contains("not each text once"));
    }
}
