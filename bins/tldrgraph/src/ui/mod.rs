//! `tldrgraph ui`: the last build's graph as one self-contained HTML page ([`export`] makes the
//! data, [`page`] the page), written to `.tldrgraph/map.html`, and optionally opened or served on
//! loopback ([`serve`]). Read-only: it never builds (an `init` does), and says when the graph it
//! draws is stale.

pub mod export;
pub mod page;
mod serve;

use crate::cli::UiArgs;
use std::path::Path;
use tg_shared::artifacts::{self, plan::PlanFile, state::SavedState};
use tg_shared::exit;
use tg_shared::freshness::Verified;
use tg_shared::stage::Failure;
use tg_shared::store::{self, Store};

pub fn ui_command(args: &UiArgs) -> i32 {
    match run(args) {
        Ok(text) => crate::print(&text),
        Err(failure) => crate::report(&failure),
    }
}

/// What to print on stdout: the page's path (or, with `--output -`, the page).
fn run(args: &UiArgs) -> Result<String, Failure> {
    let root = crate::repository(args.path.as_deref())?;
    let store = Store::at_root(&root);
    let to_stdout = args.output.as_deref() == Some(Path::new("-"));
    if to_stdout && (args.open || args.serve) {
        return Err(Failure::new(
            exit::USAGE,
            "--output - writes the page to stdout; --open and --serve need a file",
        ));
    }
    let html = build_page(&store)?;
    if to_stdout {
        return Ok(html);
    }
    let output = match &args.output {
        Some(path) => std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.clone()),
        None => store.path(artifacts::MAP),
    };
    write_page(&output, &html)?;
    eprintln!(
        "tldrgraph: wrote {} ({} KB)",
        output.display(),
        html.len().div_ceil(1024)
    );
    if args.open {
        open_in_browser(&output);
    }
    if args.serve {
        serve::serve(&store, &output, args.port, html)?;
    }
    Ok(output.display().to_string())
}

/// The page of the store's last build, from the one exporter.
pub fn build_page(store: &Store) -> Result<String, Failure> {
    let plan = PlanFile::read(store).ok();
    let mut exporter = export::Exporter::new(plan.as_ref());
    artifacts::graph::for_each_record(store, |record| {
        exporter.add(record);
        Ok(())
    })?;
    let stale = stale_line(store);
    let repo = store.root().file_name().map_or_else(
        || store.root().display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let data = exporter.finish(&repo, plan.as_ref(), stale);
    let json = serde_json::to_string(&data)
        .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise the map: {e}")))?;
    // The rows are in the JSON now; the page is built from that (a kernel's map is 236 MB).
    drop(data);
    Ok(page::render(&repo, &json))
}

/// Why the last build is not current, in one line, or `None` when it is (or there is no state
/// to judge by).
pub fn stale_line(store: &Store) -> Option<String> {
    let state = SavedState::read(store).ok()?;
    tg_lang::walk::changes_since(store.root(), store, &state, &mut Verified::load(store)).line()
}

fn write_page(path: &Path, html: &str) -> Result<(), Failure> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Failure::cant_write(dir, &e))?;
    }
    store::write_if_changed(path, html.as_bytes())
        .map(|_| ())
        .map_err(|e| Failure::cant_write(path, &e))
}

/// Opens `path` in the user's browser: `$BROWSER` if set (as browsers read it: a `:`-separated
/// list of commands, each a program and its arguments, the first that starts wins), else the
/// platform's opener. Opening is a convenience on top of the written page: when no browser
/// starts, the page's path is printed and the command still succeeds.
fn open_in_browser(path: &Path) {
    let default = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let commands = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| default.to_string());
    let mut tried = Vec::new();
    for command in commands.split(':').filter(|c| !c.trim().is_empty()) {
        let mut words = command.split_whitespace();
        let Some(program) = words.next() else {
            continue;
        };
        let status = std::process::Command::new(program)
            .args(words)
            .arg(path)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .status();
        match status {
            Ok(status) if status.success() => return,
            Ok(status) => tried.push(format!("{program} exited with {status}")),
            Err(e) => tried.push(format!("cannot start {program}: {e}")),
        }
    }
    eprintln!(
        "tldrgraph: no browser opened the page ({}); open {} yourself",
        tried.join("; "),
        path.display()
    );
}
