//! tg-plan: the architectural bottleneck symbols worth an intent, and the user's approval
//! before any token is spent on them (the selection rules are in [`select`]).
//!
//! Stream: every record passes through in order, except the candidate records, the
//! `needs_confirmation` status and the summary of an earlier tg-plan, which are replaced. At the
//! end come the `candidate` records (by rank), `needs_confirmation` when approved candidates are
//! missing, and this stage's summary.

pub mod cli;
pub mod metrics;
pub mod select;

use cli::{Cli, Enrich, DEFAULT_BATCH};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};
use tg_shared::approval;
use tg_shared::artifacts::{self, plan::PlanFile};
use tg_shared::contract::{self, NeedsConfirmation};
use tg_shared::exit;
use tg_shared::intents::IntentStore;
use tg_shared::layers::{self, PlanSettings};
use tg_shared::record::{Diagnostic, EdgeKind, Level, Record, Resolution, Summary};
use tg_shared::stage::{Failure, Input, Output, StreamCheck};
use tg_shared::store::{Store, STORE_DIR};

/// The command that approves what this question is about: the flags that shape it
/// (`--batch`, `--limit`) repeated, so that running it as given approves no more than asked.
fn approve_command(cli: &Cli) -> String {
    let mut command = String::from("tldrgraph init --json --yes");
    if cli.batch != DEFAULT_BATCH {
        command.push_str(&format!(" --batch {}", cli.batch));
    }
    if let Some(limit) = cli.limit {
        command.push_str(&format!(" --limit {limit}"));
    }
    command
}

/// This stage's name, in its summary record.
pub const STAGE: &str = "tg-plan";
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

pub fn run(cli: &Cli) -> Result<(), Failure> {
    let (cwd, store) = tg_shared::stage::workspace(cli.root.as_deref())?;
    let settings = settings(cli, &cwd, &store)?;
    // Intents live in the store until tg-enrich puts them on the nodes, downstream of us.
    let intents = IntentStore::load(&store.path(artifacts::INTENTS))
        .map_err(|message| Failure::new(exit::DATA, message))?;
    let mut input = Input::open(cli.input.as_deref())?;
    let mut output = Output::new(cli.output.as_deref());
    let mut stream = StreamCheck::default();
    let mut plan_input = select::PlanInput::default();
    let mut index: FxHashMap<String, u32> = FxHashMap::default();
    // Per node: whether its intent is current (written for its present source).
    let mut current_intent: Vec<bool> = Vec::new();
    let mut layers_missing = false;
    let mut pending_edges: Vec<(String, String, EdgeKind)> = Vec::new();
    let mut total_nodes = 0u64;
    while let Some(item) = input.next_item(&mut stream) {
        let item = item?;
        match &item.record {
            Some(Record::Node(node)) => {
                total_nodes += 1;
                if !index.contains_key(&node.id) {
                    index.insert(node.id.clone(), plan_input.nodes.len() as u32);
                    plan_input.nodes.push(select::PlanNode {
                        id: node.id.clone(),
                        kind: node.kind,
                        file: node.file.clone(),
                        lines: node
                            .line_end
                            .saturating_sub(node.line_start)
                            .saturating_add(1),
                        layer: node.layer.clone(),
                        role: node.role,
                    });
                    current_intent.push(
                        node.intent_written_for_source()
                            || intents.lookup(&node.id, &node.hash).current().is_some(),
                    );
                }
            }
            // An `ambiguous` edge is one of several guesses (or build variants): it must not
            // make a symbol look central.
            Some(Record::Edge(edge))
                if matches!(
                    edge.kind,
                    EdgeKind::Calls | EdgeKind::Imports | EdgeKind::Inherits
                ) && edge.resolution != Some(Resolution::Ambiguous) =>
            {
                // Resolved at the end: a stream need not put nodes before edges.
                pending_edges.push((edge.src.clone(), edge.dst.clone(), edge.kind));
            }
            Some(Record::Layer(layer)) if layer.default => {
                plan_input.default_layer = Some(layer.id.clone());
            }
            Some(Record::Status(status)) if status.status == contract::NEEDS_LAYERS => {
                layers_missing = true;
            }
            _ => {}
        }
        // Ours, from an earlier tg-plan in the same pipeline: replaced below.
        let ours = match &item.record {
            Some(Record::Candidate(_)) => true,
            Some(Record::Status(status)) => status.status == contract::NEEDS_CONFIRMATION,
            Some(Record::Summary(summary)) => summary.stage == STAGE,
            Some(Record::Diagnostic(diagnostic)) => diagnostic.code == BAD_APPROVAL,
            _ => false,
        };
        if !ours {
            output.line(&item.raw)?;
        }
        if output.is_closed() {
            return Ok(());
        }
    }
    stream.finish(&input.name)?;
    for (src, dst, kind) in pending_edges {
        if let (Some(&s), Some(&d)) = (index.get(&src), index.get(&dst)) {
            plan_input.edges.push((s, d, kind));
        }
    }

    let mut counts: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    if layers_missing {
        // Nothing to rank before the layers exist: the agent designs them first.
        counts.insert("ranked".into(), false.into());
        output.record(&Record::Summary(Summary {
            stage: STAGE.into(),
            counts,
        }))?;
        return output.finish();
    }

    let started = std::time::Instant::now();
    let plan = select::plan(&plan_input, &settings);
    let ranking_time = started.elapsed();
    let needing: BTreeSet<String> = plan
        .candidates
        .iter()
        .filter(|c| {
            index
                .get(&c.id)
                .is_some_and(|&i| !current_intent[i as usize])
        })
        .map(|c| c.id.clone())
        .collect();

    // Artifacts first: if they cannot be written, the stream has no summary of ours and the
    // stages after this one commit nothing.
    let _lock = store
        .lock()
        .map_err(|e| Failure::cant_write(&store.lock_path(), &e))?;
    let plan_file = PlanFile {
        eligible: plan.eligible,
        budget: plan.budget,
        skipped_trivial: plan.skipped_trivial,
        skipped_not_product: plan.skipped_not_product,
        product_edges: plan.product_edges,
        covered_edges: plan.covered_edges,
        cross_layer_calls: plan.cross_layer_calls,
        coverable_calls: plan.coverable_calls,
        covered_calls: plan.covered_calls,
        betweenness_covered: plan.betweenness_covered,
        betweenness: plan.betweenness.clone(),
        candidates: plan.candidates.clone(),
    };
    plan_file.write(&store)?;
    let approval_path = store.path(artifacts::APPROVAL);
    let mut diagnostics = Vec::new();
    let (mut approved, mut declined) = match approval::load(&approval_path) {
        approval::Loaded::None => (BTreeSet::new(), BTreeSet::new()),
        approval::Loaded::Approved(ids, declined) => (ids, declined),
        approval::Loaded::Malformed(message) => {
            diagnostics.push(Diagnostic {
                level: Level::Warning,
                file: Some(format!("{STORE_DIR}/{}", artifacts::APPROVAL)),
                line: None,
                code: BAD_APPROVAL.into(),
                message: format!(
                    "ignored, counted as no approval: {message}; run `tldrgraph init --yes` again"
                ),
            });
            (BTreeSet::new(), BTreeSet::new())
        }
    };
    // Declined candidates are never asked about again; new ones are.
    let declined_count = needing.intersection(&declined).count();
    let needing: BTreeSet<String> = needing.difference(&declined).cloned().collect();
    // What this run would ask about: the unapproved candidates needing an intent, by rank, up
    // to the limit.
    let asked: Vec<String> = plan
        .candidates
        .iter()
        .filter(|c| needing.contains(&c.id) && !approved.contains(&c.id))
        .take(usize::try_from(cli.limit.unwrap_or(u64::MAX)).unwrap_or(usize::MAX))
        .map(|c| c.id.clone())
        .collect();
    if cli.yes && cli.enrich == Enrich::Auto {
        // The user approves what they were asked about, plus every candidate whose intent is
        // already current (so an unchanged plan never asks again). Approvals of symbols that
        // left the plan are dropped.
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
        approval::save(&approval_path, &approved, &declined, cli.batch, cli.limit)
            .map_err(|e| Failure::cant_write(&approval_path, &e))?;
    } else if cli.yes && !cli.quiet {
        eprintln!("tg-plan: --yes has no effect with --enrich off: nothing is enriched");
    }
    drop(_lock);

    for candidate in &plan.candidates {
        output.record(&Record::Candidate(candidate.clone()))?;
    }
    for diagnostic in diagnostics {
        output.record(&Record::Diagnostic(diagnostic))?;
    }
    let unapproved = needing.difference(&approved).count() as u64;
    let planned = unapproved.min(cli.limit.unwrap_or(u64::MAX));
    // With --yes the user approved what this run plans: it goes on. While approved symbols
    // still wait for their intents (a `--limit` run, or new candidates arriving mid-way), the
    // approved work comes first: the question about the rest waits until it is done.
    let approved_waiting = needing.len() as u64 - unapproved > 0;
    let blocked = cli.enrich == Enrich::Auto && planned > 0 && !cli.yes && !approved_waiting;
    if blocked {
        let rounds = contract::agent_rounds(planned, cli.batch);
        let payload = NeedsConfirmation {
            total_nodes,
            candidates_count: plan.candidates.len() as u64,
            planned_this_run: planned,
            batch_size: cli.batch,
            agent_rounds: rounds,
            next_action: contract::confirmation_action(planned, rounds),
            approve_command: approve_command(cli),
        };
        output.record(&Record::Status(contract::status(
            contract::NEEDS_CONFIRMATION,
            &payload,
        )))?;
    }
    counts.insert("ranked".into(), true.into());
    counts.insert("candidates".into(), (plan.candidates.len() as u64).into());
    counts.insert("eligible".into(), plan.eligible.into());
    counts.insert("budget".into(), plan.budget.into());
    counts.insert("skipped_trivial".into(), plan.skipped_trivial.into());
    counts.insert(
        "skipped_not_product".into(),
        plan.skipped_not_product.into(),
    );
    counts.insert("cross_layer_calls".into(), plan.cross_layer_calls.into());
    counts.insert("coverable_calls".into(), plan.coverable_calls.into());
    counts.insert("covered_calls".into(), plan.covered_calls.into());
    counts.insert(
        "approved".into(),
        (needing.len() as u64 - unapproved).into(),
    );
    counts.insert("needing_intent".into(), (needing.len() as u64).into());
    counts.insert("declined".into(), (declined_count as u64).into());
    output.record(&Record::Summary(Summary {
        stage: STAGE.into(),
        counts,
    }))?;
    output.finish()?;
    if !cli.quiet {
        eprintln!(
            "tg-plan: {} candidates of {} eligible symbols; {}/{} cross-layer calls covered; ranked in {:.2}s ({} betweenness)",
            plan.candidates.len(),
            plan.eligible,
            plan.covered_calls,
            plan.cross_layer_calls,
            ranking_time.as_secs_f64(),
            plan.betweenness
        );
    }
    Ok(())
}
