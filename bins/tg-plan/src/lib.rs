//! tg-plan: the architectural bottleneck symbols worth an intent, and the user's approval
//! before any token is spent on them (the selection rules are in [`select`]).
//!
//! Stream: every record passes through in order, except the candidate records, the
//! `needs_confirmation` status and the summary of an earlier tg-plan, which are replaced. At the
//! end come the `candidate` records (by rank), `needs_confirmation` when approved candidates are
//! missing, and this stage's summary.

pub mod cli;
pub mod metrics;
pub mod patched;
pub mod select;
pub mod state;

use cli::{Cli, Enrich, DEFAULT_BATCH};
use rustc_hash::FxHashMap;
use serde_json::Value;
use std::collections::BTreeSet;
use tg_shared::approval;
use tg_shared::artifacts;
use tg_shared::contract::{self, NeedsConfirmation};
use tg_shared::exit;
use tg_shared::intents::IntentStore;
use tg_shared::layers::{self, PlanSettings};
use tg_shared::patch::Opened;
use tg_shared::record::{Diagnostic, EdgeKind, Level, Record, Resolution};
use tg_shared::stage::{self, Failure, Input, Output, Owned, Progress, StreamCheck};
use tg_shared::store::{Store, STORE_DIR};

/// The command that approves what this question is about: the flags that shape it
/// (`--batch`, `--limit`) repeated, so that running it as given approves no more than asked.
fn approve_command(cli: &Cli) -> String {
    let mut command = String::from("tldrgraph init --json --yes");
    if cli.batch() != DEFAULT_BATCH {
        command.push_str(&format!(" --batch {}", cli.batch()));
    }
    if let Some(limit) = cli.enrichment.limit {
        command.push_str(&format!(" --limit {limit}"));
    }
    command
}

/// This stage's name, in its summary record.
pub const STAGE: &str = "tg-plan";

/// What this stage appends: an earlier tg-plan's are replaced.
const OWNED: Owned = Owned {
    stage: STAGE,
    status: contract::NEEDS_CONFIRMATION,
    types: &["candidate"],
    diagnostics: &[BAD_APPROVAL],
};
/// The diagnostic code of an approval file that cannot be used.
pub const BAD_APPROVAL: &str = "bad_approval";

fn settings(cli: &Cli, cwd: &std::path::Path, store: &Store) -> Result<PlanSettings, Failure> {
    let mut settings = layers::load_repo_config(cwd, store, None)?
        .map(|config| config.plan)
        .unwrap_or_default();
    if let Some(n) = cli.min_lines {
        settings.min_lines = n;
    }
    if let Some(n) = cli.max_symbols {
        settings.max_symbols = n;
    }
    settings.include_tests |= cli.include_tests;
    settings.include_default_layer |= cli.include_default_layer;
    for (flag, value, slot) in [
        ("--coverage", cli.coverage, &mut settings.coverage),
        ("--max-share", cli.max_share, &mut settings.max_share),
    ] {
        if let Some(value) = value {
            if !(value > 0.0 && value <= 1.0) {
                return Err(Failure::new(
                    exit::USAGE,
                    format!("{flag} {value}: a share above 0 and at most 1"),
                ));
            }
            *slot = value;
        }
    }
    Ok(settings)
}

/// What the plan needs from the stream.
#[derive(Default)]
pub struct Seen {
    /// The stream's nodes (each id once, in stream order: files by path, a file's nodes as
    /// tg-extract writes them).
    pub nodes: Vec<select::PlanNode>,
    /// Per node: whether its intent is current (written for its present source).
    pub current_intent: Vec<bool>,
    /// (src, dst, kind) of every dependency edge between two nodes of the stream, before the
    /// accessor rule ([`Seen::plan_input`]); in no particular order (ranking is order-free).
    pub edges: Vec<(u32, u32, EdgeKind)>,
    /// A `needs_layers` upstream: nothing is ranked before the layers exist.
    pub layers_missing: bool,
    pub default_layer: Option<String>,
    pub total_nodes: u64,
    /// A node id repeated, a node's file was not its file record's, or an edge reached no
    /// node: the state (which keeps nodes once, by file, and edges between nodes) would not
    /// be the stream's, so none is kept.
    pub irregular: bool,
}

/// Whether an edge counts for the ranking: an `ambiguous` edge is one of several guesses (or
/// build variants), and must not make a symbol look central.
pub fn is_ranked_edge(edge: &tg_shared::record::Edge) -> bool {
    matches!(
        edge.kind,
        EdgeKind::Calls | EdgeKind::Imports | EdgeKind::Inherits
    ) && edge.resolution != Some(Resolution::Ambiguous)
}

impl Seen {
    /// The node's entry, with whether its intent is current.
    pub fn push_node(&mut self, node: &tg_shared::record::Node, intents: &IntentStore) {
        self.nodes.push(select::PlanNode {
            id: node.id.clone(),
            kind: node.kind,
            file: node.file.clone(),
            lines: node
                .line_end
                .saturating_sub(node.line_start)
                .saturating_add(1),
            layer: node.layer.clone(),
            role: node.role,
            getter: node.getter,
        });
        self.current_intent.push(
            node.intent_written_for_source()
                || intents.lookup(&node.id, &node.hash).current().is_some(),
        );
    }

    /// What the tail of a stream says: whether the layers exist, and which is the default.
    pub fn observe_tail(&mut self, record: Option<&Record>) {
        match record {
            Some(Record::Layer(layer)) if layer.default => {
                self.default_layer = Some(layer.id.clone());
            }
            Some(Record::Status(status)) if status.status == contract::NEEDS_LAYERS => {
                self.layers_missing = true;
            }
            _ => {}
        }
    }

    /// The graph to rank, its nodes taken out of `self` (given back by [`Seen::give_back`]):
    /// reading a property is a call for traces and impact, but an accessor read everywhere is
    /// no architectural dependency, so calls of getters are left out.
    fn plan_input(&mut self) -> select::PlanInput {
        let nodes = std::mem::take(&mut self.nodes);
        let edges = (self.edges.iter())
            .filter(|&&(_, d, kind)| !(kind == EdgeKind::Calls && nodes[d as usize].getter))
            .copied()
            .collect();
        select::PlanInput {
            nodes,
            edges,
            default_layer: self.default_layer.clone(),
        }
    }

    fn give_back(&mut self, input: select::PlanInput) {
        self.nodes = input.nodes;
    }
}

/// Reads the stream after its `header`, passing it through without an earlier tg-plan's
/// records. `None` when the reader went away.
fn read_stream(
    intents: &IntentStore,
    (header, mut stream): (tg_shared::ndjson::Item, StreamCheck),
    input: &mut Input,
    output: &mut Output,
) -> Result<Option<Seen>, Failure> {
    let mut seen = Seen::default();
    let mut index: FxHashMap<String, u32> = FxHashMap::default();
    let mut pending_edges: Vec<(String, String, EdgeKind)> = Vec::new();
    let mut file: Option<String> = None;
    let mut next = Some(Ok(header));
    while let Some(item) = next {
        let item = item?;
        match &item.record {
            Some(Record::File(record)) => file = Some(record.path.clone()),
            Some(Record::Node(node)) => {
                seen.total_nodes += 1;
                seen.irregular |= file.as_deref() != Some(node.file.as_str());
                match index.contains_key(&node.id) {
                    true => seen.irregular = true,
                    false => {
                        index.insert(node.id.clone(), seen.nodes.len() as u32);
                        seen.push_node(node, intents);
                    }
                }
            }
            // Resolved at the end: a stream need not put nodes before edges.
            Some(Record::Edge(edge)) if is_ranked_edge(edge) => {
                pending_edges.push((edge.src.clone(), edge.dst.clone(), edge.kind));
            }
            record => seen.observe_tail(record.as_ref()),
        }
        if !OWNED.owns(item.record.as_ref()) {
            output.line(&item.raw)?;
        }
        if output.is_closed() {
            return Ok(None);
        }
        next = input.next_item(&mut stream);
    }
    stream.finish(&input.name)?;
    for (src, dst, kind) in pending_edges {
        match (index.get(&src), index.get(&dst)) {
            (Some(&s), Some(&d)) => seen.edges.push((s, d, kind)),
            _ => seen.irregular = true,
        }
    }
    Ok(Some(seen))
}

/// The candidates whose intent is not current.
fn needing_intent(seen: &Seen, plan: &select::Plan) -> BTreeSet<String> {
    let candidates: rustc_hash::FxHashSet<&str> =
        plan.candidates.iter().map(|c| c.id.as_str()).collect();
    (seen.nodes.iter().zip(&seen.current_intent))
        .filter(|(node, &current)| !current && candidates.contains(node.id.as_str()))
        .map(|(node, _)| node.id.clone())
        .collect()
}

/// The approved and declined candidates on record; a damaged approval file counts as none,
/// with a diagnostic saying so.
fn load_approval(
    path: &std::path::Path,
) -> (BTreeSet<String>, BTreeSet<String>, Option<Diagnostic>) {
    match approval::load(path) {
        approval::Loaded::None => (BTreeSet::new(), BTreeSet::new(), None),
        approval::Loaded::Approved(ids, declined) => (ids, declined, None),
        approval::Loaded::Malformed(message) => {
            let diagnostic = Diagnostic {
                level: Level::Warning,
                file: Some(format!("{STORE_DIR}/{}", artifacts::APPROVAL)),
                line: None,
                code: BAD_APPROVAL.into(),
                message: format!(
                    "ignored, counted as no approval: {message}; run `tldrgraph init --yes` again"
                ),
            };
            (BTreeSet::new(), BTreeSet::new(), Some(diagnostic))
        }
    }
}

/// `--yes`: the user approves what they were asked about, plus every candidate whose intent is
/// already current (so an unchanged plan never asks again). Approvals of symbols that left the
/// plan are dropped.
fn approve(
    plan: &select::Plan,
    (approved, declined): (&mut BTreeSet<String>, &mut BTreeSet<String>),
    asked: &[String],
    needing: &BTreeSet<String>,
) {
    let in_plan: BTreeSet<&str> = plan.candidates.iter().map(|c| c.id.as_str()).collect();
    approved.retain(|id| in_plan.contains(id.as_str()));
    declined.retain(|id| in_plan.contains(id.as_str()));
    approved.extend(asked.iter().cloned());
    approved.extend(
        plan.candidates
            .iter()
            .filter(|c| !needing.contains(&c.id) && !declined.contains(&c.id))
            .map(|c| c.id.clone()),
    );
}

/// Where the approval stands after this run.
struct Decisions {
    /// Candidates needing an intent, not declined.
    needing: BTreeSet<String>,
    approved: BTreeSet<String>,
    declined_count: usize,
    diagnostic: Option<Diagnostic>,
}

/// Writes the plan and, with `--yes`, the approval, under the store's lock. Artifacts first: if
/// they cannot be written, the stream has no summary of ours and the stages after this one
/// commit nothing.
fn commit_plan(
    cli: &Cli,
    store: &Store,
    plan: &select::Plan,
    needing: BTreeSet<String>,
    progress: &Progress,
) -> Result<Decisions, Failure> {
    let _lock = store
        .lock()
        .map_err(|e| Failure::cant_write(&store.lock_path(), &e))?;
    plan.write(store)?;
    let approval_path = store.path(artifacts::APPROVAL);
    let (mut approved, mut declined, diagnostic) = load_approval(&approval_path);
    // Declined candidates are never asked about again; new ones are.
    let declined_count = needing.intersection(&declined).count();
    let needing: BTreeSet<String> = needing.difference(&declined).cloned().collect();
    // What this run would ask about: the unapproved candidates needing an intent, by rank, up
    // to the limit.
    let asked: Vec<String> = plan
        .candidates
        .iter()
        .filter(|c| needing.contains(&c.id) && !approved.contains(&c.id))
        .take(usize::try_from(cli.enrichment.limit.unwrap_or(u64::MAX)).unwrap_or(usize::MAX))
        .map(|c| c.id.clone())
        .collect();
    if cli.approval.yes && cli.enrichment.mode() == Enrich::Auto {
        approve(plan, (&mut approved, &mut declined), &asked, &needing);
        approval::save(
            &approval_path,
            &approved,
            &declined,
            cli.batch(),
            cli.enrichment.limit,
        )
        .map_err(|e| Failure::cant_write(&approval_path, &e))?;
    } else if cli.approval.yes {
        progress.say("--yes has no effect with --enrich off: nothing is enriched");
    }
    Ok(Decisions {
        needing,
        approved,
        declined_count,
        diagnostic,
    })
}

pub fn run(cli: &Cli) -> Result<(), Failure> {
    let progress = Progress::new(STAGE, cli.stage.quiet);
    let (cwd, store) = cli.stage.workspace()?;
    let settings = settings(cli, &cwd, &store)?;
    // Intents live in the store until tg-enrich puts them on the nodes, downstream of us.
    let intents = IntentStore::load(&store.path(artifacts::INTENTS))
        .map_err(|message| Failure::new(exit::DATA, message))?;
    let mut input = Input::open(cli.stream.input.as_deref())?.metered(&progress);
    let mut output = Output::new(cli.stream.output.as_deref());
    let (mut seen, stream_id) = match tg_shared::patch::open(&mut input)? {
        Opened::Patch(patch) => {
            progress.phase("patch read");
            let seen = patched::apply(&store, &intents, &patch)?;
            progress.phase("state load and apply");
            patched::write_head(&patch, &mut output, &OWNED)?;
            if output.is_closed() {
                // The reader went away: nothing is committed, as for a whole stream.
                return Ok(());
            }
            (seen, Some(patch.of.result))
        }
        Opened::Whole {
            header,
            check,
            stream,
        } => {
            let read = (*header, check);
            let Some(seen) = read_stream(&intents, read, &mut input, &mut output)? else {
                return Ok(());
            };
            (seen, stream)
        }
    };
    if seen.layers_missing {
        // Nothing to rank before the layers exist: the agent designs them first.
        output.record(&stage::summary(STAGE, [("ranked", Value::from(false))]))?;
        output.finish()?;
        state::save(&store, stream_id.as_deref(), intents.digest(), &seen);
        return Ok(());
    }

    let started = std::time::Instant::now();
    if progress.elapsed() > 1.0 {
        // A large graph: ranking takes seconds more, with no count to meter.
        progress.say(format_args!(
            "ranking {} symbols and {} edges",
            seen.nodes.len(),
            seen.edges.len()
        ));
    }
    let memo = store.plan_metrics_path();
    let plan_input = seen.plan_input();
    let (plan, ranking_reused) = select::plan(&plan_input, &settings, Some(&memo));
    seen.give_back(plan_input);
    let ranking_time = started.elapsed();
    progress.phase("ranking and selection");
    let needing = needing_intent(&seen, &plan);
    let decisions = commit_plan(cli, &store, &plan, needing, &progress)?;
    progress.phase("plan.json");
    let Decisions {
        needing, approved, ..
    } = &decisions;

    for candidate in &plan.candidates {
        output.record(&Record::Candidate(candidate.clone()))?;
    }
    if let Some(diagnostic) = &decisions.diagnostic {
        output.record(&Record::Diagnostic(diagnostic.clone()))?;
    }
    let unapproved = needing.difference(approved).count() as u64;
    let planned = unapproved.min(cli.enrichment.limit.unwrap_or(u64::MAX));
    // With --yes the user approved what this run plans: it goes on. While approved symbols
    // still wait for their intents (a `--limit` run, or new candidates arriving mid-way), the
    // approved work comes first: the question about the rest waits until it is done.
    let approved_waiting = needing.len() as u64 - unapproved > 0;
    let blocked = cli.enrichment.mode() == Enrich::Auto
        && planned > 0
        && !cli.approval.yes
        && !approved_waiting;
    if blocked {
        let rounds = contract::agent_rounds(planned, cli.batch());
        let payload = NeedsConfirmation {
            total_nodes: seen.total_nodes,
            candidates_count: plan.candidates.len() as u64,
            planned_this_run: planned,
            batch_size: cli.batch(),
            agent_rounds: rounds,
            next_action: contract::confirmation_action(planned, rounds),
            approve_command: approve_command(cli),
        };
        output.record(&Record::Status(contract::status(
            contract::NEEDS_CONFIRMATION,
            &payload,
        )))?;
    }
    output.record(&stage::summary(
        STAGE,
        [
            ("ranked", Value::from(true)),
            ("candidates", (plan.candidates.len() as u64).into()),
            ("eligible", plan.eligible.into()),
            ("budget", plan.budget.into()),
            ("skipped_trivial", plan.skipped_trivial.into()),
            ("skipped_not_product", plan.skipped_not_product.into()),
            ("cross_layer_calls", plan.cross_layer_calls.into()),
            ("coverable_calls", plan.coverable_calls.into()),
            ("covered_calls", plan.covered_calls.into()),
            ("approved", (needing.len() as u64 - unapproved).into()),
            ("needing_intent", (needing.len() as u64).into()),
            ("declined", (decisions.declined_count as u64).into()),
        ],
    ))?;
    output.finish()?;
    progress.phase("plan");
    state::save(&store, stream_id.as_deref(), intents.digest(), &seen);
    progress.phase("state save");
    progress.say(format_args!(
        "{} candidates of {} eligible symbols; {}/{} cross-layer calls covered; ranked in {:.2}s ({} betweenness{})",
        plan.candidates.len(),
        plan.eligible,
        plan.covered_calls,
        plan.cross_layer_calls,
        ranking_time.as_secs_f64(),
        plan.betweenness,
        match ranking_reused {
            true => "; the last ranking, for the same dependency graph",
            false => "",
        }
    ));
    Ok(())
}
