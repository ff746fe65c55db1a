//! tldrgraph: composes the `tg-*` stages with real pipes and speaks the agent contract
//! (`agent_contract.md`, written as `.tldrgraph/AGENT_CONTRACT.md`). It spawns the sibling
//! executables for every stage; the MCP server ([`mcp`]) alone links tg-query's answers, so
//! that the index stays loaded between calls.

pub mod cli;
pub mod impact;
pub mod install;
mod interner;
pub mod mcp;
pub mod pipeline;
pub mod render;
pub mod shortcut;
pub mod ui;

use cli::{
    ApproveArgs, AskArgs, Cli, Command, ContractArgs, EnrichArgs, InitArgs, InstallArgs, PlanArgs,
    StatusArgs,
};
use pipeline::Stage;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use tg_shared::artifacts::{self, plan::PlanFile};
use tg_shared::contract;
use tg_shared::exit;
use tg_shared::options;
use tg_shared::stage::{Failure, Output};
use tg_shared::store::{self, Store, LOCK_HELD_ENV};

/// The stages of `tldrgraph init`, in pipeline order.
pub const INIT_STAGES: [&str; 6] = [
    "tg-extract",
    "tg-classify",
    "tg-plan",
    "tg-enrich",
    "tg-embed",
    "tg-status",
];

/// Its text: fixed for a given build, so it is rewritten only when the tool changes.
pub const AGENT_CONTRACT: &str = include_str!("agent_contract.md");

pub fn run(cli: &Cli) -> i32 {
    match &cli.command {
        Command::Init(args) => init(args),
        Command::Status(args) => status(args),
        Command::Layers(args) => layers_command(args),
        Command::Contract(args) => contract(args),
        Command::Install(args) => install_command(args, true),
        Command::Uninstall(args) => install_command(args, false),
        Command::Plan(args) => plan_command(args),
        Command::Approve(args) => approve_command(args),
        Command::Enrich(args) => enrich_command(args),
        Command::Query(args) => {
            let mut rest: Vec<OsString> = vec!["search".into()];
            rest.extend(options::to_argv(&args.search));
            ask(&args.ask, rest)
        }
        Command::Trace(args) => {
            let mut rest: Vec<OsString> = vec!["trace".into()];
            rest.extend(options::to_argv(&args.call_path));
            ask(&args.ask, rest)
        }
        Command::Mcp(args) => mcp::serve(args),
        Command::Impact(args) => impact::impact_command(args),
        Command::Check(args) => impact::check_command(args),
        Command::Ui(args) => ui::ui_command(args),
        Command::DeadCode(args) => {
            let mut rest: Vec<OsString> = vec!["dead-code".into()];
            rest.extend(options::to_argv(&args.findings));
            ask(&args.ask, rest)
        }
    }
}

/// Runs `tg-query` with `rest`, its output and exit code passed through unchanged.
fn ask(args: &AskArgs, rest: Vec<OsString>) -> i32 {
    let (root, located) = match prepare(args.root.as_deref(), &["tg-query"]) {
        Ok(prepared) => prepared,
        Err((failure, _)) => return report(&failure),
    };
    let Some((_, exe)) = located.into_iter().next() else {
        return exit::UNAVAILABLE;
    };
    let mut command = std::process::Command::new(exe);
    command.arg("--root").arg(&root);
    if args.json {
        command.arg("--json");
    }
    command.args(rest);
    match command.status() {
        Ok(status) => status.code().unwrap_or(exit::SOFTWARE),
        Err(err) => report(&Failure::new(
            exit::UNAVAILABLE,
            format!("cannot run tg-query: {err}"),
        )),
    }
}

/// What each layer of the config matches: `tg-extract | tg-classify --check`, its report
/// printed as tg-classify prints it and its exit code returned (65: the config is invalid).
fn layers_command(args: &AskArgs) -> i32 {
    let (root, located) = match prepare(args.root.as_deref(), &["tg-extract", "tg-classify"]) {
        Ok(prepared) => prepared,
        Err((failure, _)) => return report(&failure),
    };
    let stages: Vec<Stage> = located
        .into_iter()
        .map(|(name, exe)| {
            let mut stage_args: Vec<OsString> =
                vec!["--root".into(), root.clone().into_os_string()];
            if name == "tg-extract" {
                stage_args.push(root.clone().into_os_string());
            } else {
                stage_args.push("--check".into());
                if args.json {
                    stage_args.push("--json".into());
                }
            }
            Stage {
                name,
                exe,
                args: stage_args,
            }
        })
        .collect();
    let mut printed = Ok(0);
    let finished = pipeline::run(&stages, &[], false, false, &mut |out| {
        printed = std::io::copy(out, &mut std::io::stdout().lock());
    });
    let finished = match finished {
        Ok(finished) => finished,
        Err(e) => {
            let failure = Failure::new(
                exit::UNAVAILABLE,
                format!("cannot run {}: {}", e.stage, e.error),
            );
            return report(&failure);
        }
    };
    if let Err(err) = printed {
        return report(&Failure::new(
            exit::IO,
            format!("cannot print the report: {err}"),
        ));
    }
    // tg-classify's problems (an invalid config) are part of its report; tg-extract's
    // progress is not, unless it failed.
    for outcome in &finished.outcomes {
        if outcome.name == "tg-classify" || !outcome.status.success() {
            for line in &outcome.stderr {
                eprintln!("{line}");
            }
        }
    }
    // The verdict is tg-classify's; tg-extract failing under a valid verdict leaves it unsure.
    match finished.outcomes.iter().rev().find(|o| !o.status.success()) {
        Some(failed) => failed.status.code().unwrap_or(exit::SOFTWARE),
        None => exit::OK,
    }
}

/// Prints `payload` as JSON, or as text for a person; returns `code`.
fn emit(payload: &Value, json: bool, code: i32) -> i32 {
    let text = if json {
        payload.to_string()
    } else if payload["status"] == contract::ERROR {
        eprint!("{}", render::human(payload));
        return code;
    } else {
        render::human(payload)
    };
    match print(&text) {
        exit::OK => code,
        failed => failed,
    }
}

/// An error as a contract state: `{"status":"error","error":...,"hint":...}`.
fn error_payload(failure: &Failure, stage: Option<&str>) -> Value {
    let mut payload = json!({
        "status": contract::ERROR,
        "error": failure.message,
        "hint": failure.hint.clone().unwrap_or_else(|| default_hint(failure.code).to_string()),
    });
    if let Some(stage) = stage {
        payload["stage"] = Value::String(stage.to_string());
    }
    payload["exit_code"] = Value::from(failure.code);
    payload
}

fn default_hint(code: i32) -> &'static str {
    match code {
        exit::DATA => "fix the file named in the error, then run `tldrgraph init --json` again",
        exit::NO_INPUT => "check the path",
        exit::UNAVAILABLE => "build the workspace (`make build`) or put the tg-* binaries on PATH",
        exit::LOCKED => "wait for the other run to finish, then run the command again",
        exit::CANT_CREATE | exit::IO => "check the permissions and free space of .tldrgraph/",
        _ => "run the command again with --verbose and report the stage's output",
    }
}

/// Reports `failure` on stderr (for the commands that print text, not a contract state);
/// its exit code.
fn report(failure: &Failure) -> i32 {
    failure.report("tldrgraph");
    failure.code
}

/// The repository: `path` if given, else the git top level above the current directory.
fn repository(path: Option<&Path>) -> Result<PathBuf, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::new(exit::IO, format!("cannot read the current directory: {e}")))?;
    let root = match path {
        Some(path) => std::fs::canonicalize(cwd.join(path)).map_err(|e| {
            Failure::new(
                exit::NO_INPUT,
                format!("repository {} cannot be opened: {e}", path.display()),
            )
        })?,
        None => store::find_root(&cwd, None).map_err(|e| Failure::new(exit::NO_INPUT, e))?,
    };
    if !root.is_dir() {
        return Err(Failure::new(
            exit::NO_INPUT,
            format!("{} is not a directory", root.display()),
        )
        .with_hint("give the repository's directory"));
    }
    Store::open_checked(&root).map_err(|e| Failure::new(exit::NO_PERM, e))?;
    Ok(root)
}

/// The repository lock for a command that writes, without waiting: a run that holds it is
/// reported (exit 75) and nothing is changed.
fn take_lock(store: &Store) -> Result<tg_shared::store::StoreLock, Failure> {
    match store.try_lock() {
        Ok(Some(lock)) => {
            lock.share_with_children().map_err(|e| {
                Failure::new(
                    exit::IO,
                    format!("cannot share {}: {e}", store.lock_path().display()),
                )
            })?;
            store.remove_stale_temporaries();
            Ok(lock)
        }
        Ok(None) => Err(Failure::new(
            exit::LOCKED,
            format!(
                "another tldrgraph run holds {}; nothing was changed",
                store.lock_path().display()
            ),
        )
        .with_hint("wait for the other run to finish, then run the command again")),
        Err(err) => Err(Failure::new(
            exit::CANT_CREATE,
            format!("cannot take {}: {err}", store.lock_path().display()),
        )),
    }
}

/// Each named stage's executable, or which one is missing.
fn locate_stages(
    names: &[&'static str],
) -> Result<Vec<(&'static str, PathBuf)>, (Failure, &'static str)> {
    let own = std::env::current_exe().ok();
    let beside = own.as_deref().and_then(Path::parent);
    names
        .iter()
        .map(|name| match pipeline::locate(name, beside) {
            Some(exe) => Ok((*name, exe)),
            None => {
                let place = beside.map_or_else(String::new, |d| format!("{} nor ", d.display()));
                Err((
                    Failure::new(
                        exit::UNAVAILABLE,
                        format!("stage {name} is missing: it is neither in {place}on PATH"),
                    ),
                    *name,
                ))
            }
        })
        .collect()
}

/// Runs `stages`; the payload the last one printed, or the first failure as an error payload.
fn run_pipeline(
    stages: &[Stage],
    forward_stderr: bool,
    inherit_stdin: bool,
) -> Result<Value, StageFailure> {
    let stdout = run_stages(stages, forward_stderr, inherit_stdin)?;
    let text = String::from_utf8_lossy(&stdout);
    serde_json::from_str::<Value>(text.trim()).map_err(|e| {
        let last = stages.last().map_or("the last stage", |s| s.name);
        (
            Failure::new(
                exit::SOFTWARE,
                format!("{last} printed no contract state ({e}): {:?}", text.trim()),
            ),
            Some(last),
        )
    })
}

/// Runs `stages` joined by pipes (holding the lock for them); what the last one printed, or
/// the first failure.
fn run_stages(
    stages: &[Stage],
    forward_stderr: bool,
    inherit_stdin: bool,
) -> Result<Vec<u8>, StageFailure> {
    let mut stdout = Vec::new();
    run_stages_into(stages, forward_stderr, inherit_stdin, &mut |out| {
        // A read error leaves `stdout` short; the last stage's exit status tells the rest.
        let _ = out.read_to_end(&mut stdout);
    })?;
    Ok(stdout)
}

/// Runs `stages` as [`run_stages`] does, handing what the last one prints to `read_stdout` as
/// it comes rather than holding it (a stream of the whole graph can be a gigabyte).
fn run_stages_into(
    stages: &[Stage],
    forward_stderr: bool,
    inherit_stdin: bool,
    read_stdout: &mut dyn FnMut(&mut dyn std::io::Read),
) -> Result<(), StageFailure> {
    let finished = pipeline::run(
        stages,
        &[(LOCK_HELD_ENV, "1")],
        forward_stderr,
        inherit_stdin,
        read_stdout,
    )
    .map_err(|e| {
        let code = match e.error.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                exit::UNAVAILABLE
            }
            _ => exit::SOFTWARE,
        };
        (
            Failure::new(code, format!("cannot run {}: {}", e.stage, e.error)),
            Some(e.stage),
        )
    })?;
    if let Some(failed) = finished.first_failure() {
        let code = match failed.status.code() {
            Some(
                code @ (exit::USAGE | exit::DATA | exit::NO_INPUT | exit::CANT_CREATE | exit::IO),
            ) => code,
            Some(2) => exit::USAGE,
            _ => exit::SOFTWARE,
        };
        let mut failure = Failure::new(
            code,
            format!(
                "{} failed ({}): {}",
                failed.name,
                pipeline::describe(&failed.status),
                failed.error_message()
            ),
        );
        failure.hint = failed.hint();
        return Err((failure, Some(failed.name)));
    }
    Ok(())
}

/// Stage names and their executables.
type Located = Vec<(&'static str, PathBuf)>;
/// A failure and the stage it happened in, if any.
type StageFailure = (Failure, Option<&'static str>);

/// The repository and the stages a command needs, or the error state to print.
fn prepare(
    path: Option<&Path>,
    names: &[&'static str],
) -> Result<(PathBuf, Located), StageFailure> {
    let root = repository(path).map_err(|failure| (failure, None))?;
    let located = locate_stages(names).map_err(|(failure, stage)| (failure, Some(stage)))?;
    Ok((root, located))
}

fn init(args: &InitArgs) -> i32 {
    let json = args.json;
    if args.allow_insecure_http {
        // The stages inherit it.
        tg_shared::http::allow_insecure_http();
    }
    let fail = |failure: Failure, stage: Option<&str>| {
        emit(&error_payload(&failure, stage), json, failure.code)
    };
    let (root, located) = match prepare(args.path.as_deref(), &INIT_STAGES) {
        Ok(prepared) => prepared,
        Err((failure, stage)) => return fail(failure, stage),
    };
    warn_unused_flags(args);
    let store = Store::at_root(&root);
    let _lock = match take_lock(&store) {
        Ok(lock) => lock,
        Err(failure) => return fail(failure, None),
    };
    let contract_path = store.path(artifacts::AGENT_CONTRACT);
    if let Err(err) = store::write_if_changed(&contract_path, AGENT_CONTRACT.as_bytes()) {
        return fail(Failure::cant_write(&contract_path, &err), None);
    }
    let enrichment = match remembered_enrichment(&store, &args.enrichment) {
        Ok(enrichment) => enrichment,
        Err(failure) => return fail(failure, None),
    };
    let response_waiting = shortcut::response_waiting(store.dir());
    if let Some(enrich) = located.iter().find(|(name, _)| *name == "tg-enrich") {
        if let Err((failure, stage)) =
            apply_dropped_response(&store, &enrich.1, !json || args.verbose)
        {
            return fail(failure, stage);
        }
    }
    let status_exe = located
        .iter()
        .find(|(name, _)| *name == "tg-status")
        .map(|(_, exe)| exe.clone());
    let init_args = args;
    let root_arg = || -> Vec<OsString> { vec!["--root".into(), root.clone().into_os_string()] };
    let stages: Vec<Stage> = located
        .into_iter()
        .map(|(name, exe)| {
            let mut args = root_arg();
            args.extend(forwarded_args(name, init_args, &enrichment));
            if name == "tg-extract" {
                args.push(root.clone().into_os_string());
            }
            Stage { name, exe, args }
        })
        .collect();
    let key = shortcut::key(&stages);
    if !response_waiting && shortcut::may_answer(args) && shortcut::same_key(&store, &key) {
        if let Some(payload) = status_exe.and_then(|exe| last_build_if_current(&root, exe)) {
            if !json || args.verbose {
                eprintln!("tldrgraph: nothing changed since the last build; its state:");
            }
            return emit(&payload, json, exit::OK);
        }
    }
    match run_pipeline(&stages, !json || args.verbose, false) {
        Ok(payload) => {
            let failed = payload["status"] == contract::ERROR;
            shortcut::remember(&store, (!failed).then_some(key.as_str()));
            emit(&payload, json, exit::OK)
        }
        Err((failure, stage)) => {
            shortcut::remember(&store, None);
            fail(failure, stage)
        }
    }
}

/// The last build's payload when `tg-status --from-artifacts` finds it current (see
/// [`shortcut`]).
fn last_build_if_current(root: &Path, exe: PathBuf) -> Option<Value> {
    let stage = Stage {
        name: "tg-status",
        exe,
        args: vec![
            "--from-artifacts".into(),
            "--root".into(),
            root.as_os_str().to_owned(),
        ],
    };
    run_pipeline(&[stage], false, false)
        .ok()
        .and_then(shortcut::answer)
}

/// `--enrich` as given, recorded in `.tldrgraph/enrich.mode`; when not given, the mode recorded
/// by an earlier `init` (zero-token mode sticks until `--enrich auto`).
fn remembered_enrichment(
    store: &Store,
    given: &options::Enrichment,
) -> Result<options::Enrichment, Failure> {
    use options::Enrich;
    let path = store.path(artifacts::ENRICH_MODE);
    let mut enrichment = given.clone();
    match given.enrich {
        Some(mode) => {
            let text = match mode {
                Enrich::Off => "off\n",
                Enrich::Auto => "auto\n",
            };
            store::write_if_changed(&path, text.as_bytes())
                .map_err(|e| Failure::cant_write(&path, &e))?;
        }
        None => {
            enrichment.enrich = match std::fs::read_to_string(&path).as_deref().map(str::trim) {
                Ok("off") => Some(Enrich::Off),
                Ok("auto") => Some(Enrich::Auto),
                Ok(other) => {
                    eprintln!(
                        "tldrgraph: warning: {} says `{other}`, not off or auto; ignored",
                        path.display()
                    );
                    None
                }
                Err(_) => None,
            }
        }
    }
    Ok(enrichment)
}

/// The flags of `init` that the stage `name` owns, as its command line (`enrichment` as
/// [`remembered_enrichment`] settled it).
fn forwarded_args(name: &str, args: &InitArgs, enrichment: &options::Enrichment) -> Vec<OsString> {
    use options::to_argv;
    match name {
        "tg-extract" => to_argv(&args.selection),
        "tg-plan" => [to_argv(enrichment), to_argv(&args.approval)].concat(),
        "tg-enrich" => [to_argv(enrichment), to_argv(&args.llm)].concat(),
        "tg-embed" => to_argv(&args.embedder),
        _ => Vec::new(),
    }
}

/// Applies an answer the agent dropped at `.tldrgraph/enrichment_response.<ext>` (the original
/// tool's flow), then renames it `enrichment_response.applied.<ext>`. A bad file stays where it
/// is and fails the run, naming its problems.
fn apply_dropped_response(store: &Store, exe: &Path, forward: bool) -> Result<(), StageFailure> {
    for ext in artifacts::ENRICHMENT_RESPONSE_EXTENSIONS {
        let path = store.path(&format!("{}.{ext}", artifacts::ENRICHMENT_RESPONSE_STEM));
        if !path.is_file() {
            continue;
        }
        let stage = Stage {
            name: "tg-enrich",
            exe: exe.to_path_buf(),
            args: vec![
                "--root".into(),
                store.root().as_os_str().to_owned(),
                "--apply".into(),
                path.clone().into_os_string(),
            ],
        };
        run_pipeline(&[stage], forward, false)?;
        let applied = store.path(&format!(
            "{}.applied.{ext}",
            artifacts::ENRICHMENT_RESPONSE_STEM
        ));
        std::fs::rename(&path, &applied).map_err(|e| {
            (
                Failure::new(
                    exit::CANT_CREATE,
                    format!(
                        "applied {} but cannot rename it to {}: {e}",
                        path.display(),
                        applied.display()
                    ),
                ),
                None,
            )
        })?;
    }
    Ok(())
}

/// `tldrgraph enrich --apply FILE`: stores the agent's intents through tg-enrich.
fn enrich_command(args: &EnrichArgs) -> i32 {
    let json = args.json;
    let fail = |failure: Failure, stage: Option<&str>| {
        emit(&error_payload(&failure, stage), json, failure.code)
    };
    let (root, located) = match prepare(args.path.as_deref(), &["tg-enrich"]) {
        Ok(prepared) => prepared,
        Err((failure, stage)) => return fail(failure, stage),
    };
    let store = Store::at_root(&root);
    let _lock = match take_lock(&store) {
        Ok(lock) => lock,
        Err(failure) => return fail(failure, None),
    };
    let stages: Vec<Stage> = located
        .into_iter()
        .map(|(name, exe)| Stage {
            name,
            exe,
            args: vec![
                "--root".into(),
                root.clone().into_os_string(),
                "--apply".into(),
                args.apply.clone().into_os_string(),
            ],
        })
        .collect();
    let stdin = args.apply.as_os_str() == "-";
    match run_pipeline(&stages, false, stdin) {
        Ok(summary) if json => emit(&summary, true, exit::OK),
        Ok(summary) => print(&format!(
            "applied {} intents ({} new or changed; {} stored); run `tldrgraph init --json` again",
            summary["applied"], summary["changed"], summary["intents"]
        )),
        Err((failure, stage)) => fail(failure, stage),
    }
}

/// Flags for stages this build does not have yet are accepted (so agent scripts need no change
/// when the stages land) and said to do nothing, on stderr.
fn warn_unused_flags(args: &InitArgs) {
    let unused = [
        (args.enrichment.batch.is_some(), "--batch", "tg-plan"),
        (args.enrichment.limit.is_some(), "--limit", "tg-plan"),
        (args.approval.yes, "--yes", "tg-plan"),
        (args.enrichment.enrich.is_some(), "--enrich", "tg-plan"),
        (args.llm.provider.is_some(), "--provider", "tg-enrich"),
        (
            args.embedder.embeddings.is_some(),
            "--embeddings",
            "tg-embed",
        ),
    ];
    for (given, flag, stage) in unused {
        if given && !INIT_STAGES.contains(&stage) {
            eprintln!("tldrgraph: {flag} has no effect yet: this build has no {stage} stage");
        }
    }
}

/// `status --exit-code`: the code of the state in `payload`.
pub fn state_code(payload: &Value) -> i32 {
    let status = payload["status"].as_str().unwrap_or(contract::ERROR);
    match status {
        "not_built" => return exit::state::NOT_BUILT,
        contract::ERROR => return exit::state::ERROR,
        _ => {}
    }
    if payload["fresh"] == Value::Bool(false) {
        return exit::state::STALE;
    }
    match status {
        contract::NEEDS_LAYERS => exit::state::NEEDS_LAYERS,
        "needs_confirmation" => exit::state::NEEDS_CONFIRMATION,
        "needs_enrichment" => exit::state::NEEDS_ENRICHMENT,
        "needs_embeddings" => exit::state::NEEDS_EMBEDDINGS,
        contract::DONE => exit::state::DONE,
        _ => exit::state::ERROR,
    }
}

fn status(args: &StatusArgs) -> i32 {
    let json = args.json;
    let fail = |failure: Failure, stage: Option<&str>| {
        emit(&error_payload(&failure, stage), json, failure.code)
    };
    let (root, located) = match prepare(args.path.as_deref(), &["tg-status"]) {
        Ok(prepared) => prepared,
        Err((failure, stage)) => return fail(failure, stage),
    };
    let stages: Vec<Stage> = located
        .into_iter()
        .map(|(name, exe)| Stage {
            name,
            exe,
            args: vec![
                "--from-artifacts".into(),
                "--root".into(),
                root.clone().into_os_string(),
            ],
        })
        .collect();
    match run_pipeline(&stages, false, false) {
        Err((failure, stage)) if args.exit_code => {
            emit(&error_payload(&failure, stage), json, exit::state::ERROR)
        }
        Ok(payload) => {
            let code = if args.exit_code {
                state_code(&payload)
            } else {
                exit::OK
            };
            emit(&payload, json, code)
        }
        Err((failure, stage)) => fail(failure, stage),
    }
}

/// Exit code of `contract --check` when the file is missing or differs.
pub const CONTRACT_STALE: i32 = 1;

fn contract(args: &ContractArgs) -> i32 {
    let root = match repository(args.path.as_deref()) {
        Ok(root) => root,
        Err(failure) => return report(&failure),
    };
    let path = Store::at_root(&root).path(artifacts::AGENT_CONTRACT);
    if args.check {
        let current = std::fs::read(&path).ok();
        if current.as_deref() == Some(AGENT_CONTRACT.as_bytes()) {
            return exit::OK;
        }
        eprintln!(
            "tldrgraph: {} is {} this build writes; run `tldrgraph contract` and commit it",
            path.display(),
            if current.is_some() {
                "not what"
            } else {
                "missing, unlike what"
            }
        );
        return CONTRACT_STALE;
    }
    let _lock = match Store::at_root(&root).lock() {
        Ok(lock) => lock,
        Err(err) => {
            eprintln!("tldrgraph: error: cannot take the repository lock: {err}");
            return exit::CANT_CREATE;
        }
    };
    match store::write_if_changed(&path, AGENT_CONTRACT.as_bytes()) {
        Ok(_) => exit::OK,
        Err(err) => {
            eprintln!("tldrgraph: error: cannot write {}: {err}", path.display());
            exit::CANT_CREATE
        }
    }
}

fn install_command(args: &InstallArgs, installing: bool) -> i32 {
    let root = match repository(args.path.as_deref()) {
        Ok(root) => root,
        Err(failure) => return report(&failure),
    };
    let result = if installing {
        install::install(&root, args.dry_run, args.mcp)
    } else {
        install::uninstall(&root, args.dry_run)
    };
    match result {
        Ok(actions) => {
            let prefix = if args.dry_run { "would " } else { "" };
            let mut text = String::new();
            for action in &actions {
                text.push_str(&format!("{prefix}{} {}\n", action.verb, action.path));
            }
            if actions.is_empty() {
                text.push_str("nothing to do\n");
            }
            print(&text)
        }
        Err(message) => {
            eprintln!("tldrgraph: error: {message}");
            exit::CANT_CREATE
        }
    }
}

/// Prints `text` on stdout; the exit code (0, or the output's failure, reported).
fn print(text: &str) -> i32 {
    let mut out = Output::new(None);
    match out.line(text.trim_end()).and_then(|()| out.finish()) {
        Ok(()) => exit::OK,
        Err(failure) => report(&failure),
    }
}

fn plan_command(args: &PlanArgs) -> i32 {
    let root = match repository(args.path.as_deref()) {
        Ok(root) => root,
        Err(failure) => return report(&failure),
    };
    let plan = match PlanFile::read(&Store::at_root(&root)) {
        Ok(plan) => plan,
        Err(failure) => {
            eprintln!(
                "tldrgraph: error: no plan to show ({}); run `tldrgraph init` once layers exist",
                failure.message
            );
            return exit::NO_INPUT;
        }
    };
    let mut shown = plan.clone();
    if let Some(top) = args.top {
        shown.candidates.truncate(top);
    }
    if args.json {
        return match serde_json::to_string(&shown) {
            Ok(text) => print(&text),
            Err(err) => report(&Failure::new(exit::SOFTWARE, err.to_string())),
        };
    }
    let mut text = format!(
        "{} candidates of {} eligible symbols; {} of {} cross-layer calls covered\n",
        plan.candidates.len(),
        plan.eligible,
        plan.covered_calls,
        plan.cross_layer_calls
    );
    for c in &shown.candidates {
        text.push_str(&format!(
            "{:>4}  {:.3}  {}  ({})\n",
            c.rank,
            c.score,
            c.id,
            c.reasons.join("; ")
        ));
    }
    print(&text)
}

/// Records the current plan's unapproved candidates as declined, keeping what was approved.
fn decline_rest(store: &Store, path: &Path) -> i32 {
    let _lock = match take_lock(store) {
        Ok(lock) => lock,
        Err(failure) => return report(&failure),
    };
    let plan = match PlanFile::read(store) {
        Ok(plan) => plan,
        Err(failure) => {
            eprintln!("tldrgraph: error: cannot read the plan {}", failure.message);
            eprintln!("hint: run `tldrgraph init --json` first: it writes the plan");
            return exit::NO_INPUT;
        }
    };
    let candidates: BTreeSet<String> = plan.candidates.into_iter().map(|c| c.id).collect();
    let (approved, batch, limit) = match tg_shared::approval::read(path) {
        Ok(Some(approval)) => (
            approval.ids.into_iter().collect::<BTreeSet<String>>(),
            approval.batch,
            approval.limit,
        ),
        _ => (BTreeSet::new(), tg_shared::contract::DEFAULT_BATCH, None),
    };
    // The rest is every candidate without an intent written for its present source, approved
    // or not: an approved one still waiting would keep `init` at needs_enrichment.
    let mut enriched: BTreeSet<String> = BTreeSet::new();
    let read = artifacts::graph::for_each_record(store, |record| {
        if let tg_shared::record::Record::Node(node) = record {
            if candidates.contains(&node.id) && node.intent_written_for_source() {
                enriched.insert(node.id);
            }
        }
        Ok(())
    });
    if let Err(failure) = read {
        return report(&failure);
    }
    let declined: BTreeSet<String> = candidates.difference(&enriched).cloned().collect();
    let approved: BTreeSet<String> = approved.difference(&declined).cloned().collect();
    if let Err(err) = tg_shared::approval::save(path, &approved, &declined, batch, limit) {
        eprintln!("tldrgraph: error: cannot write {}: {err}", path.display());
        return exit::CANT_CREATE;
    }
    print(&format!(
        "{} candidates declined, {} approved; `tldrgraph init --json` now reaches done; `tldrgraph approve --revoke` withdraws both",
        declined.len(),
        approved.len()
    ))
}

fn approve_command(args: &ApproveArgs) -> i32 {
    let root = match repository(args.path.as_deref()) {
        Ok(root) => root,
        Err(failure) => return report(&failure),
    };
    let store = Store::at_root(&root);
    let path = store.path(artifacts::APPROVAL);
    if args.decline_rest {
        return decline_rest(&store, &path);
    }
    if !args.revoke {
        return print(&match tg_shared::approval::load(&path) {
            tg_shared::approval::Loaded::Approved(ids, declined) => format!(
                "{} symbols approved for enrichment, {} declined; `tldrgraph approve --revoke` withdraws both",
                ids.len(),
                declined.len()
            ),
            tg_shared::approval::Loaded::None => {
                "nothing approved; `tldrgraph init --yes` approves the current plan".to_string()
            }
            tg_shared::approval::Loaded::Malformed(why) => format!(
                "{} is malformed ({why}) and counts as no approval; `tldrgraph init --yes` writes it again",
                path.display()
            ),
        });
    }
    let _lock = match take_lock(&store) {
        Ok(lock) => lock,
        Err(failure) => return report(&failure),
    };
    match std::fs::remove_file(&path) {
        Ok(()) => print("approval revoked; the next `tldrgraph init` asks again"),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => print("nothing was approved"),
        Err(err) => {
            eprintln!("tldrgraph: error: cannot remove {}: {err}", path.display());
            exit::CANT_CREATE
        }
    }
}
