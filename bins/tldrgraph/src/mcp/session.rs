//! The server's hold on one repository: the index loaded once and kept between calls, and the
//! freshness check before each answer. When the sources changed since the last build, the
//! session runs `tldrgraph init --json` (this same executable, in a child process that outlives
//! a disconnected client) and waits for it up to its budget; past the budget it answers from
//! the index it has and says so.

use super::watch::{self, Watch};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tg_lang::walk_snapshot::watch_targets;
use tg_query::deadcode::Finding;
use tg_query::graph::Graph;
use tg_shared::artifacts::{self, state::ReadError, state::SavedState};
use tg_shared::contract;
use tg_shared::exit;
use tg_shared::freshness::{Changes, Verified};
use tg_shared::stage::Failure;
use tg_shared::store::{self, Store};

/// How long a lost race for the repository lock waits before trying again.
const LOCK_RETRY: Duration = Duration::from_millis(100);
/// Rebuilds one answer may run when the sources change while one runs.
const MAX_ROUNDS: u32 = 2;
/// Changed paths named in a notice.
const NAMED: usize = 5;

/// What an answer says about the graph it came from.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Freshness {
    /// The answer reflects the sources as they are now.
    pub fresh: bool,
    /// The contract state of the build answered from (`done`, `needs_enrichment`, ...).
    pub state: Option<String>,
    /// A rebuild ran before this answer: what it was for and how long it took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuilt: Option<Rebuilt>,
    /// Why the answer may be out of date, and what changed; absent when fresh and complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<String>,
    /// Changed, added and removed source files not yet in the graph (counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_changes: Option<ChangeCounts>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Rebuilt {
    pub milliseconds: u64,
    /// The files that changed, a few named.
    pub changes: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ChangeCounts {
    pub changed: usize,
    pub added: usize,
    pub removed: usize,
    pub config_changed: bool,
    pub decisions_changed: bool,
}

impl From<&Changes> for ChangeCounts {
    fn from(c: &Changes) -> Self {
        ChangeCounts {
            changed: c.changed.len(),
            added: c.added.len(),
            removed: c.removed.len(),
            config_changed: c.config_changed,
            decisions_changed: c.decisions_changed,
        }
    }
}

/// A running `tldrgraph init`, its stdout going to a file so that it finishes even when this
/// server is gone.
struct Rebuild {
    child: Child,
    output: tempfile::NamedTempFile,
    started: Instant,
    changes: Changes,
}

pub struct Session {
    store: Store,
    /// This executable, which runs `init`.
    exe: PathBuf,
    /// The longest an answer waits for a rebuild.
    wait: Duration,
    graph: Option<Graph>,
    /// Size and time of the search index the graph was loaded from.
    loaded_from: Option<(u64, u128)>,
    rebuild: Option<Rebuild>,
    verified: Verified,
    /// Sees changes to what a freshness check reads (none where it cannot watch it all).
    watch: Option<Watch>,
    /// The last check's state and changes, while the watcher has seen nothing change since.
    looked: Option<(Arc<SavedState>, Changes)>,
    /// Dead-code findings of the loaded graph (every file is read to make them).
    dead_code: Option<Vec<Finding>>,
    /// `--enrich` for every `init` this session runs: the server's option, then the `init`
    /// tool's last choice.
    enrich: Option<String>,
}

impl Session {
    pub fn new(root: &Path, exe: PathBuf, wait: Duration, enrich: Option<String>) -> Session {
        let store = Store::at_root(root);
        Session {
            verified: Verified::load(&store),
            watch: Watch::new(),
            looked: None,
            store,
            exe,
            wait,
            graph: None,
            loaded_from: None,
            rebuild: None,
            dead_code: None,
            enrich,
        }
    }

    pub fn set_enrich(&mut self, enrich: Option<String>) {
        self.enrich = enrich;
    }

    /// The flags every `init` of this session gets.
    pub fn init_flags(&self) -> Vec<String> {
        match &self.enrich {
            Some(mode) => vec!["--enrich".into(), mode.clone()],
            None => Vec::new(),
        }
    }

    pub fn root(&self) -> &Path {
        self.store.root()
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn exe(&self) -> &Path {
        &self.exe
    }

    /// The last build's state and what changed since, without rebuilding: the last check's
    /// answer while the watcher saw nothing change since it, else a check in full.
    pub fn look(&mut self) -> Result<(Arc<SavedState>, Changes), Failure> {
        // Read (and so emptied) before a full check: what happens during one is seen by the next.
        let quiet = self.watch.as_mut().is_some_and(Watch::quiet);
        match &self.looked {
            Some((state, changes)) if quiet => return Ok((state.clone(), changes.clone())),
            _ => self.looked = None,
        }
        let state = Arc::new(self.read_state()?);
        let (changes, dirs) = tg_lang::walk::changes_since_walking(
            self.store.root(),
            &self.store,
            &state,
            &mut self.verified,
        );
        if let Some(watch) = &mut self.watch {
            let targets =
                watch::with_store(watch_targets(self.store.root(), &dirs), self.store.dir());
            match watch.add(&targets) {
                Some(false) => self.looked = Some((state.clone(), changes.clone())),
                // Found before it was watched (or gone since): trusted once a check finds
                // every directory watched.
                Some(true) => {}
                None => {
                    eprintln!("tldrgraph mcp: the system's limit of inotify watches is reached (/proc/sys/fs/inotify/max_user_watches); every answer checks the sources in full");
                    self.watch = None;
                }
            }
        }
        Ok((state, changes))
    }

    /// The last build's state.json.
    fn read_state(&self) -> Result<SavedState, Failure> {
        SavedState::read(&self.store).map_err(|e| match e {
            ReadError::Missing => Failure::new(
                exit::NO_INPUT,
                format!("{} has never been built", self.store.root().display()),
            )
            .with_hint("call the `init` tool (or run `tldrgraph init --json`) first"),
            ReadError::Unreadable(path, err) => {
                Failure::new(exit::IO, format!("cannot read {}: {err}", path.display()))
            }
            ReadError::Damaged(path, err) => Failure::new(
                exit::DATA,
                format!(
                    "{}:{}: damaged build state: {err}",
                    path.display(),
                    err.line()
                ),
            )
            .with_hint("call the `init` tool to rebuild it"),
        })
    }

    /// The graph to answer from, brought up to date first when the sources changed (within the
    /// wait budget), and what the answer should say about its freshness.
    pub fn prepare(&mut self) -> Result<(&Graph, Freshness), Failure> {
        let (state, changes) = self.look()?;
        let mut freshness = Freshness {
            fresh: changes.fresh(),
            state: state.payload["status"].as_str().map(str::to_string),
            ..Freshness::default()
        };
        if !changes.fresh() || self.rebuild.is_some() {
            self.refresh(changes, &mut freshness)?;
        }
        if freshness.state.as_deref() != Some(contract::DONE) && freshness.stale.is_none() {
            freshness.stale = freshness.state.as_deref().map(incomplete);
        }
        self.load()?;
        let graph = self.graph.as_ref().ok_or_else(|| {
            Failure::new(exit::NO_INPUT, "the search index is not built yet")
                .with_hint("call the `init` tool and follow its state to `done`")
        })?;
        Ok((graph, freshness))
    }

    /// Rebuilds (or waits for the rebuild under way) until the budget; fills `freshness`.
    fn refresh(&mut self, mut changes: Changes, freshness: &mut Freshness) -> Result<(), Failure> {
        let deadline = Instant::now() + self.wait;
        let mut rounds = 0;
        loop {
            if self.rebuild.is_none() {
                self.rebuild = Some(self.start(changes.clone())?);
                rounds += 1;
            }
            let Some(rebuild) = self.rebuild.as_mut() else {
                break;
            };
            match wait_until(&mut rebuild.child, deadline) {
                Some(_) => {
                    let Some(done) = self.rebuild.take() else {
                        break;
                    };
                    let mut payload = read_payload(&done);
                    let (state, now) = self.look()?;
                    let in_time = Instant::now() < deadline;
                    if payload["exit_code"] == exit::LOCKED {
                        if now.fresh() {
                            // Another run (a second server, a person) held the lock and built
                            // what we needed: its state is the answer's.
                            payload = state.payload.clone();
                        } else if in_time {
                            std::thread::sleep(LOCK_RETRY);
                            continue;
                        }
                    } else if !now.fresh()
                        && payload["status"] != contract::ERROR
                        && in_time
                        && rounds < MAX_ROUNDS
                    {
                        // Edited again while it ran: once more, for the sources as they are.
                        changes = now;
                        continue;
                    }
                    settle(freshness, &done, payload, &now);
                    eprintln!(
                        "tldrgraph mcp: rebuilt in {} ms: {}",
                        done.started.elapsed().as_millis(),
                        freshness.state.as_deref().unwrap_or("no state")
                    );
                    return Ok(());
                }
                None => {
                    freshness.fresh = false;
                    freshness.pending_changes = Some((&changes).into());
                    freshness.stale = Some(format!(
                        "{}; a rebuild has run {} ms, past this answer's wait of {} ms: the answer is from the previous build (ask again for the new one)",
                        describe(&changes),
                        rebuild.started.elapsed().as_millis(),
                        self.wait.as_millis()
                    ));
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Starts `tldrgraph init --json ROOT`; stdout to a file, stderr discarded.
    fn start(&self, changes: Changes) -> Result<Rebuild, Failure> {
        eprintln!("tldrgraph mcp: rebuilding: {}", describe(&changes));
        let output = tempfile::NamedTempFile::new().map_err(|e| {
            Failure::new(
                exit::CANT_CREATE,
                format!("cannot make a temporary file: {e}"),
            )
        })?;
        let stdout = output.reopen().map_err(|e| {
            Failure::new(
                exit::CANT_CREATE,
                format!("cannot reopen a temporary file: {e}"),
            )
        })?;
        let child = Command::new(&self.exe)
            .arg("init")
            .arg("--json")
            .args(self.init_flags())
            .arg(self.store.root())
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                Failure::new(
                    exit::UNAVAILABLE,
                    format!("cannot run {} init: {e}", self.exe.display()),
                )
            })?;
        Ok(Rebuild {
            child,
            output,
            started: Instant::now(),
            changes,
        })
    }

    /// Loads the search index when it is new or changed on disk (another run rebuilt it).
    fn load(&mut self) -> Result<(), Failure> {
        let path = self.store.path(artifacts::SEARCH_INDEX);
        let stamp = store::stamp(&path);
        if stamp.is_none() {
            self.graph = None;
            self.loaded_from = None;
            return Ok(());
        }
        if self.graph.is_none() || stamp != self.loaded_from {
            let started = Instant::now();
            let graph = Graph::load(&self.store)?;
            graph.require(tg_query::graph::FOR_EVERYTHING)?;
            self.graph = Some(graph);
            eprintln!(
                "tldrgraph mcp: index loaded in {} ms",
                started.elapsed().as_millis()
            );
            self.loaded_from = stamp;
            self.dead_code = None;
        }
        Ok(())
    }

    /// Forgets the loaded graph, so the next answer reloads it.
    pub fn forget(&mut self) {
        self.graph = None;
        self.loaded_from = None;
        self.dead_code = None;
    }

    /// Every dead-code finding of the loaded graph (after [`Session::prepare`]), made once per
    /// graph.
    /// Findings made with a damaged value are refused, and not kept.
    pub fn dead_code(&mut self) -> Result<&[Finding], Failure> {
        if self.dead_code.is_none() {
            if let Some(graph) = &self.graph {
                let found = tg_query::deadcode::find(graph, self.store.root());
                graph.check()?;
                self.dead_code = Some(found);
            }
        }
        Ok(self.dead_code.as_deref().unwrap_or(&[]))
    }
}

/// What a finished rebuild means for the answer, given what is still changed (`now`).
fn settle(freshness: &mut Freshness, done: &Rebuild, payload: Value, now: &Changes) {
    let status = payload["status"].as_str().unwrap_or(contract::ERROR);
    freshness.fresh = now.fresh();
    freshness.state = Some(status.to_string());
    freshness.rebuilt = Some(Rebuilt {
        milliseconds: done.started.elapsed().as_millis() as u64,
        changes: describe(&done.changes),
    });
    if status == contract::ERROR {
        freshness.fresh = false;
        freshness.pending_changes = Some(now.into());
        freshness.stale = Some(format!(
            "{}; the rebuild failed ({}): the answer is from the previous build",
            describe(now),
            payload["error"].as_str().unwrap_or("no message")
        ));
    } else if !now.fresh() {
        freshness.pending_changes = Some(now.into());
        freshness.stale = Some(format!("{} during the rebuild", describe(now)));
    }
}

/// Waits for `child` until `deadline`; its status, or `None` when it is still running.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<std::process::ExitStatus> {
    let mut pause = Duration::from_millis(2);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() >= deadline => return None,
            Ok(None) => {
                std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            // Not our child any more (reaped elsewhere): treat as finished.
            Err(_) => return Some(std::process::ExitStatus::default()),
        }
    }
}

/// The payload a finished `init --json` printed, or an error payload saying why there is none.
fn read_payload(done: &Rebuild) -> Value {
    let text = std::fs::read_to_string(done.output.path()).unwrap_or_default();
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        serde_json::json!({
            "status": contract::ERROR,
            "error": format!("init printed no contract state ({e})"),
        })
    })
}

/// `2 files changed (a.py, b.py), 1 added (c.py)`, or `the layers config changed`.
pub fn describe(changes: &Changes) -> String {
    let mut parts = Vec::new();
    for (paths, what) in [
        (&changes.changed, "changed"),
        (&changes.added, "added"),
        (&changes.removed, "removed"),
    ] {
        if paths.is_empty() {
            continue;
        }
        let named: Vec<&str> = paths.iter().take(NAMED).map(String::as_str).collect();
        let more = if paths.len() > NAMED { ", ..." } else { "" };
        parts.push(format!(
            "{} file{} {what} ({}{more})",
            paths.len(),
            if paths.len() == 1 { "" } else { "s" },
            named.join(", ")
        ));
    }
    if changes.config_changed {
        parts.push("the layers config changed".into());
    }
    if changes.decisions_changed {
        parts.push("the approval or the intents changed".into());
    }
    if parts.is_empty() {
        "nothing changed".into()
    } else {
        parts.join(", ")
    }
}

/// What a build that stopped short of `done` means for an answer.
fn incomplete(state: &str) -> String {
    match state {
        contract::NEEDS_LAYERS => "the build waits for a layers config (`needs_layers`): call `init` for what to write".into(),
        contract::NEEDS_CONFIRMATION => "the build waits for the user's approval to enrich (`needs_confirmation`): answers have symbols and calls, not every intent".into(),
        contract::NEEDS_ENRICHMENT => "the build waits for intents (`needs_enrichment`): answers have symbols and calls, not every intent; call `init` for the batch".into(),
        contract::NEEDS_EMBEDDINGS => "the build has no embeddings yet (`needs_embeddings`): search is lexical only".into(),
        other => format!("the last build ended in `{other}`"),
    }
}
