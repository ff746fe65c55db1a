//! The MCP binding, the one file that knows the SDK (`rmcp`): each tool's name, description,
//! input and output schemas, and the hand-off of its work to [`super::tools`] on a blocking
//! thread (answers read files and may wait for a rebuild).

use super::session::Session;
use super::tools::{self, Answered, Envelope};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use std::sync::{Arc, Mutex};
use tg_query::answer::{DeadCodeAnswer, Direction, Neighbours, SearchAnswer, SymbolAnswer};
use tg_query::trace::Trace;

/// What the server tells a client when it connects.
const INSTRUCTIONS: &str = "tldrgraph: an architectural map of this repository (symbols, calls, layers, intents). \
Start with `status`; when it is not `done`, drive `init` (and `apply_intents`) as AGENT_CONTRACT.md describes. \
Ask `search` for where something is done, `symbol` for one definition, `callers`/`callees` and `trace` for how code connects, \
`layers` for the architecture and its violations, `dead_code` for what nothing reaches, \
`impact` for what a change touches and `check` for the violations it introduced. \
Every answer says in `freshness` whether it reflects the sources as they are now, and in `budget` what was cut to fit.";

#[derive(Clone)]
pub struct Server {
    session: Arc<Mutex<Session>>,
    tool_router: ToolRouter<Self>,
}

/// A tool's answer as an MCP result: structured content, or an error result a client shows
/// the agent (not a protocol error: the call itself was well formed).
fn result(answered: Answered) -> CallToolResult {
    match answered {
        Ok(value) => CallToolResult::structured(value),
        Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_json().to_string())]),
    }
}

#[tool_router]
impl Server {
    pub fn new(session: Session) -> Server {
        Server {
            session: Arc::new(Mutex::new(session)),
            tool_router: Self::tool_router(),
        }
    }

    /// Runs `work` on the session, off the protocol's thread.
    async fn with_session<F>(&self, work: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&mut Session) -> Answered + Send + 'static,
    {
        let session = Arc::clone(&self.session);
        let answered = tokio::task::spawn_blocking(move || {
            // A poisoned lock only means an earlier call panicked; the session is still whole
            // (every field is replaced, never left half-written).
            let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
            work(&mut session)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool failed: {e}"), None))?;
        Ok(result(answered))
    }

    #[tool(
        description = "The contract state of the last build (done, needs_layers, needs_confirmation, needs_enrichment, needs_embeddings) and whether the sources changed since; a few hundred bytes. Never rebuilds.",
        output_schema = schema_for_output::<tools::StatusAnswer>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn status(&self) -> Result<CallToolResult, ErrorData> {
        self.with_session(tools::status).await
    }

    #[tool(
        description = "Symbols that best match a query (what the code does, or names), product code first, each with its execution flow across layers.",
        output_schema = schema_for_output::<Envelope<SearchAnswer>>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search(
        &self,
        Parameters(p): Parameters<tools::SearchParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::search(s, p)).await
    }

    #[tool(
        description = "The surest call path from one symbol to another (ids, qualified names like Type.method or module.func, or unique short names); with no path, what the first reaches.",
        output_schema = schema_for_output::<Envelope<Trace>>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn trace(
        &self,
        Parameters(p): Parameters<tools::TraceParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::trace(s, p)).await
    }

    #[tool(
        description = "Who calls a symbol, up to a depth, each with the confidence of its call path and the line of the call.",
        output_schema = schema_for_output::<Envelope<Neighbours>>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn callers(
        &self,
        Parameters(p): Parameters<tools::NeighboursParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::neighbours(s, p, Direction::Callers))
            .await
    }

    #[tool(
        description = "What a symbol calls, up to a depth, each with the confidence of its call path and the line of the call.",
        output_schema = schema_for_output::<Envelope<Neighbours>>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn callees(
        &self,
        Parameters(p): Parameters<tools::NeighboursParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::neighbours(s, p, Direction::Callees))
            .await
    }

    #[tool(
        description = "One symbol's definition: file, lines, signature, intent, layer, role, its direct callers and callees, and its source lines on request.",
        output_schema = schema_for_output::<Envelope<SymbolAnswer>>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn symbol(
        &self,
        Parameters(p): Parameters<tools::SymbolParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::symbol(s, p)).await
    }

    #[tool(
        description = "Functions and methods that nothing calls, imports or references, minus entry points and API, surest first, each with a reason and a status (dead, or unknown when dispatch or reflection may reach it).",
        output_schema = schema_for_output::<Envelope<DeadCodeAnswer>>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn dead_code(
        &self,
        Parameters(p): Parameters<tools::DeadCodeParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::dead_code(s, p)).await
    }

    #[tool(
        description = "The layer map: per layer its symbols by kind and role, top files, dependencies on and from the other layers, and its violations of may_depend_on.",
        output_schema = schema_for_output::<Envelope<tools::LayersAnswer>>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn layers(
        &self,
        Parameters(p): Parameters<tools::LayersParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::layers(s, p)).await
    }

    #[tool(
        description = "What a change touches: the symbols whose own source changed (added, removed, moved) since a commit (default HEAD), in the staged files, or in named files against the last build; their callers up to a depth with the confidence of each path; the tests that reach them, as the test runner names them; public signatures that changed.",
        output_schema = schema_for_output::<tools::Budgeted<crate::impact::diff::Impact>>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn impact(
        &self,
        Parameters(p): Parameters<tools::ImpactParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::impact(s, p)).await
    }

    #[tool(
        description = "Layering violations (edges that break may_depend_on) of the working tree, or only those introduced since a commit. An error, never an empty list, when there is nothing to judge against (no layers config, an unknown commit).",
        output_schema = schema_for_output::<tools::Budgeted<tools::CheckAnswer>>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn check(
        &self,
        Parameters(p): Parameters<tools::CheckParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::check(s, p)).await
    }

    #[tool(
        description = "Build or update the graph and return the contract state, the same payload as `tldrgraph init --json` (AGENT_CONTRACT.md): needs_layers, needs_confirmation, needs_enrichment, needs_embeddings or done. `yes` records the user's approval to enrich.",
        output_schema = schema_for_output::<tools::InitAnswer>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn init(
        &self,
        Parameters(p): Parameters<tools::InitParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::init(s, p)).await
    }

    #[tool(
        description = "Store the intents written for a needs_enrichment batch (as `tldrgraph enrich --apply`), then run init: the next contract state, with `applied` beside it. A bad batch is rejected whole, every problem listed.",
        output_schema = schema_for_output::<tools::InitAnswer>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn apply_intents(
        &self,
        Parameters(p): Parameters<tools::ApplyIntentsParams>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_session(move |s| tools::apply_intents(s, p)).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tldrgraph", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
