//! The options more than one program takes, declared once: a stage flattens them into its
//! command line, and the `tldrgraph` wrapper flattens the same types into its own and forwards
//! them with [`to_argv`], so the two cannot drift apart (a flag, its type, its values, its help).

use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_json::Value;
use std::ffi::OsString;

/// The command line that gives back `args` when parsed: `--long value` for every option whose
/// value is not its default (repeated for a list, alone for a set flag), then the positional
/// values in order. Generic over any clap [`Args`] that serialises its fields under their own
/// names (flattened groups with `#[serde(flatten)]`, enums as their clap value names).
pub fn to_argv<T: Args + Serialize>(args: &T) -> Vec<OsString> {
    let command = T::augment_args(clap::Command::new("argv"));
    let values = match serde_json::to_value(args) {
        Ok(Value::Object(values)) => values,
        // Only a struct of fields can be an `Args`; nothing else is forwarded.
        _ => return Vec::new(),
    };
    let mut options: Vec<OsString> = Vec::new();
    let mut positionals: Vec<OsString> = Vec::new();
    for arg in command.get_arguments() {
        let Some(value) = values.get(arg.get_id().as_str()) else {
            continue;
        };
        let items = value_items(value);
        let texts: Vec<String> = items.iter().map(|item| value_text(item)).collect();
        let is_default = arg
            .get_default_values()
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .eq(texts.iter().cloned());
        if is_default && !texts.is_empty() {
            continue;
        }
        for (item, text) in items.into_iter().zip(texts) {
            match arg.get_long() {
                Some(long) if item == &Value::Bool(true) => {
                    options.push(format!("--{long}").into())
                }
                Some(long) => options.extend([format!("--{long}").into(), text.into()]),
                None => positionals.push(text.into()),
            }
        }
    }
    options.extend(positionals);
    options
}

/// A field's values: none (unset, or a flag not given), one, or a list's.
fn value_items(value: &Value) -> Vec<&Value> {
    match value {
        Value::Null | Value::Bool(false) => Vec::new(),
        Value::Array(items) => items.iter().collect(),
        single => vec![single],
    }
}

/// A value as a command line writes it.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Enrichment mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enrich {
    /// Zero-token mode: nothing is asked or sent; symbols without an intent get the first
    /// sentence of their doc comment, marked `intent_source: doc`.
    Off,
    Auto,
}

/// Who writes the intents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// The calling agent answers `needs_enrichment` batches.
    Agent,
    Openai,
    Ollama,
}

/// Where embeddings come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Embeddings {
    Off,
    Auto,
    Openai,
    Ollama,
}

/// Which files tg-extract reads.
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize)]
pub struct Selection {
    /// Skip paths matching GLOB (repo-relative, gitignore-style `*`, `**`); repeatable. Added to
    /// the `exclude:` list of .tldrgraph/layers.config.yaml.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// Read files that .gitignore, .ignore or .git/info/exclude hide (`.git/` and hidden entries
    /// are still skipped).
    #[arg(long)]
    pub no_ignore: bool,
}

/// How much to enrich this run (tg-plan, tg-enrich).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize)]
pub struct Enrichment {
    /// Symbols per enrichment batch, an agent round (default: the batch size approved with
    /// `tldrgraph init --yes`, else 200).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub batch: Option<u64>,

    /// Enrich at most N symbols this run, the first by rank (0: none, so nothing to confirm).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,

    /// Enrichment mode (default auto); `off` is zero-token mode: no confirmation, nothing asked
    /// or sent, doc comments stand in for intents.
    #[arg(long, value_enum)]
    pub enrich: Option<Enrich>,
}

impl Enrichment {
    pub fn mode(&self) -> Enrich {
        self.enrich.unwrap_or(Enrich::Auto)
    }
}

/// The user's approval of the planned enrichment (tg-plan).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize)]
pub struct Approval {
    /// Approve the current candidates (recorded in .tldrgraph/approval.json).
    #[arg(long)]
    pub yes: bool,
}

/// Whether an LLM endpoint writes the intents, and how many requests it may take (tg-enrich).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize)]
pub struct Llm {
    /// Ask an LLM endpoint instead of the calling agent (default: $TLDRGRAPH_LLM_PROVIDER, else
    /// the agent). `openai`: any OpenAI-compatible chat-completions endpoint
    /// ($TLDRGRAPH_LLM_BASE_URL, $TLDRGRAPH_LLM_MODEL, key in $TLDRGRAPH_LLM_API_KEY or
    /// $OPENAI_API_KEY); `ollama`: a local Ollama (default http://127.0.0.1:11434/v1).
    #[arg(long, value_enum)]
    pub provider: Option<Provider>,

    /// Spend cap: send at most N requests this run, retries included (default 500).
    #[arg(long, value_name = "N")]
    pub max_requests: Option<u64>,
}

/// The default `--max-requests`.
pub const DEFAULT_MAX_REQUESTS: u64 = 500;

/// Where embeddings come from (tg-embed).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize)]
pub struct EmbeddingsChoice {
    /// `auto`: the embedded model; `off`: lexical search only; `openai`/`ollama`: an HTTP
    /// `/v1/embeddings` endpoint ($TLDRGRAPH_EMBED_BASE_URL, $TLDRGRAPH_EMBED_MODEL, key in
    /// $TLDRGRAPH_EMBED_API_KEY or $OPENAI_API_KEY). Default: $TLDRGRAPH_EMBEDDINGS, else auto.
    #[arg(long, value_enum)]
    pub embeddings: Option<Embeddings>,
}

/// How a stage talks to an HTTP endpoint (tg-enrich's LLM, tg-embed's embeddings).
#[derive(Debug, Clone, PartialEq, Args, Serialize)]
pub struct Http {
    /// Seconds one HTTP request may take, connection to last byte.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub timeout: u64,

    /// Retries of a request answered 429 or 5xx, or timed out, with exponential backoff.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub retries: u32,

    /// Allow plain http to an endpoint other than loopback (the code and the key would travel
    /// unencrypted); same as TLDRGRAPH_ALLOW_INSECURE_HTTP=1.
    #[arg(long)]
    pub allow_insecure_http: bool,
}

impl Http {
    /// One request's time limit (at least a second).
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.timeout.max(1))
    }

    /// Lets plain http reach a remote endpoint in this process and the ones it starts, when
    /// asked.
    pub fn apply(&self) {
        if self.allow_insecure_http {
            crate::http::allow_insecure_http();
        }
    }
}

/// How search ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Reciprocal rank fusion of BM25 and embedding cosine.
    Hybrid,
    /// BM25 over identifier-aware terms only.
    Lexical,
    /// Embedding cosine only.
    Semantic,
}

/// A search (tg-query search, `tldrgraph query`).
#[derive(Debug, Clone, PartialEq, Args, Serialize)]
pub struct SearchArgs {
    /// What to look for, in words.
    pub text: String,

    /// How many symbols to return.
    #[arg(long, value_name = "K", default_value_t = 5)]
    pub top_k: usize,

    /// Also pack the most relevant symbols' signatures and intents into at most this many
    /// tokens (approximated as 4 characters per token): a context pack for an agent.
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,

    /// Only symbols of this layer (its id, or its name as answers print it); repeatable.
    #[arg(long, value_name = "ID")]
    pub layer: Vec<String>,

    /// Never symbols of this layer (its id, or its name); repeatable.
    #[arg(long, value_name = "ID")]
    pub exclude_layer: Vec<String>,

    /// Rank tests, examples and tooling among the product code by score alone (by default
    /// they follow the product hits).
    #[arg(long)]
    pub include_tests: bool,

    #[arg(long, value_enum, default_value_t = Mode::Hybrid)]
    pub mode: Mode,
}

/// A call path (tg-query trace, `tldrgraph trace`): ids, qualified names or unique short names.
#[derive(Debug, Clone, PartialEq, Args, Serialize)]
pub struct TraceArgs {
    pub from: String,
    pub to: String,
}

/// Dead code (tg-query dead-code, `tldrgraph dead-code`).
#[derive(Debug, Clone, PartialEq, Args, Serialize)]
pub struct DeadCodeArgs {
    /// Only findings with at least this confidence (0 to 1).
    #[arg(long, value_name = "C", default_value_t = 0.0)]
    pub min_confidence: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{FromArgMatches, Parser};

    /// Parses `argv` (after a program name) as `T`.
    fn parse<T: Args + FromArgMatches>(argv: &[&str]) -> T {
        let command = T::augment_args(clap::Command::new("t").no_binary_name(true));
        let matches = command.try_get_matches_from(argv).expect("parses");
        T::from_arg_matches(&matches).expect("fills the struct")
    }

    fn strings(argv: Vec<OsString>) -> Vec<String> {
        argv.into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn argv_parses_back_to_the_same_options() {
        let given = [
            "who loads the graph",
            "--top-k",
            "3",
            "--layer",
            "core",
            "--layer",
            "io",
            "--mode",
            "lexical",
            "--include-tests",
            "--budget",
            "800",
        ];
        let search: SearchArgs = parse(&given);
        let argv = strings(to_argv(&search));
        assert_eq!(
            argv,
            [
                "--top-k",
                "3",
                "--budget",
                "800",
                "--layer",
                "core",
                "--layer",
                "io",
                "--include-tests",
                "--mode",
                "lexical",
                "who loads the graph",
            ]
        );
        let again: SearchArgs = parse(&argv.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(again, search);
    }

    #[test]
    fn defaults_and_unset_options_are_left_out() {
        let search: SearchArgs = parse(&["x"]);
        assert_eq!(strings(to_argv(&search)), ["x"]);
        assert!(to_argv(&Enrichment::default()).is_empty());
        let dead: DeadCodeArgs = parse(&["--min-confidence", "0.5"]);
        assert_eq!(strings(to_argv(&dead)), ["--min-confidence", "0.5"]);
    }

    #[test]
    fn enums_and_flags_forward_as_their_command_line_names() {
        let options = Enrichment {
            batch: Some(20),
            limit: None,
            enrich: Some(Enrich::Off),
        };
        assert_eq!(
            strings(to_argv(&options)),
            ["--batch", "20", "--enrich", "off"]
        );
        let llm = Llm {
            provider: Some(Provider::Openai),
            max_requests: Some(9),
        };
        assert_eq!(
            strings(to_argv(&llm)),
            ["--provider", "openai", "--max-requests", "9"]
        );
        let selection = Selection {
            exclude: vec!["vendor".into(), "*.min.js".into()],
            no_ignore: true,
        };
        assert_eq!(
            strings(to_argv(&selection)),
            [
                "--exclude",
                "vendor",
                "--exclude",
                "*.min.js",
                "--no-ignore"
            ]
        );
        // A struct that parses back from its argv is the same struct.
        #[derive(Debug, Parser)]
        struct Both {
            #[command(flatten)]
            selection: Selection,
        }
        let argv = strings(to_argv(&selection));
        let both =
            Both::try_parse_from(std::iter::once("t".to_string()).chain(argv)).expect("parses");
        assert_eq!(both.selection, selection);
    }
}
