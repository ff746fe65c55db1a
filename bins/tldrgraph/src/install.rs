//! `tldrgraph install` / `uninstall`: what an agent needs to find and drive tldrgraph in a
//! repository, written so that it can be taken out again exactly.
//!
//! - `AGENTS.md`: a managed block between markers (the file is created if absent; the block is
//!   replaced in place if present; the user's text around it is never touched);
//! - `.gitignore`: a managed block with the generated, non-committed artifacts;
//! - `.claude/commands/tldrgraph.md` and `.cursor/rules/tldrgraph.mdc`: files of their own,
//!   written only where no file of the user's is in the way;
//! - with `--mcp`, the project-scoped MCP server entry `mcpServers.tldrgraph` in `.mcp.json`
//!   (Claude Code) and `.cursor/mcp.json` (Cursor), beside any servers already there (the file
//!   is rewritten as pretty JSON; an entry of that name the user wrote is left alone);
//! - `.tldrgraph/install.json`: what was written, so `uninstall` removes exactly that (commit it
//!   with the rest, so a teammate can uninstall too).
//!
//! Running `install` twice changes nothing the second time; `--dry-run` only lists the actions.

use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};
use tg_shared::artifacts;
use tg_shared::hash::content_hash;
use tg_shared::store;

const BLOCK_BEGIN_MD: &str =
    "<!-- tldrgraph:begin (managed by `tldrgraph install`; `tldrgraph uninstall` removes it) -->";
const BLOCK_END_MD: &str = "<!-- tldrgraph:end -->";
const BLOCK_BEGIN_SH: &str = "# tldrgraph:begin (managed by `tldrgraph install`)";
const BLOCK_END_SH: &str = "# tldrgraph:end";

const AGENTS_BLOCK: &str = "## tldrgraph: the architectural map of this repository

Before changing code across modules, build or refresh the map with `tldrgraph init --json` and
follow the state it prints until `status` is `done`; `.tldrgraph/AGENT_CONTRACT.md` explains every
state and what to do on it (the first run asks you to design `.tldrgraph/layers.config.yaml`).
`tldrgraph status --json` tells whether the map is current without rebuilding it.
`.tldrgraph/layers.yaml` lists the layers, the dependencies between them and the violations of
their `may_depend_on` rules; `.tldrgraph/graph.json` holds every symbol and edge (on a very large
repository, `.tldrgraph/graph.json.zst`: the same JSON, compressed; read it with `zstd -dc`).";

const GITIGNORE_BLOCK: &str = ".tldrgraph/cache/
.tldrgraph/make/
.tldrgraph/*.lock
.tldrgraph/graph.json
.tldrgraph/graph.json.zst
.tldrgraph/state.json
.tldrgraph/layers.yaml
.tldrgraph/symbols.md
.tldrgraph/plan.json
.tldrgraph/enrichment_request.json
.tldrgraph/enrichment_response.*
.tldrgraph/search.bin
.tldrgraph/vectors.i8
.tldrgraph/vectors.f32
.tldrgraph/search.sum
.tldrgraph/init.key
.tldrgraph/map.html";

const COMMAND_FILE: &str = "---
description: Build or refresh tldrgraph's architectural map of this repository
---
Run `tldrgraph init --json` and act on the `status` it prints, as
`.tldrgraph/AGENT_CONTRACT.md` describes, until the status is `done`:
- `needs_layers`: read `.tldrgraph/symbols.md`, design the layers of this repository in
  `.tldrgraph/layers.config.yaml` (schema in AGENT_CONTRACT.md), check them with
  `tldrgraph layers`, then run `tldrgraph init --json` again;
- `error`: fix what `error` and `hint` name, then run it again;
- any other state: follow AGENT_CONTRACT.md.
Then use `.tldrgraph/layers.yaml` and `.tldrgraph/graph.json` to answer questions about the
architecture.
";

const CURSOR_RULE: &str = "---
description: tldrgraph, the architectural map of this repository
alwaysApply: false
---
To understand or change this repository's architecture, run `tldrgraph init --json` and follow
the state it prints until `status` is `done`; `.tldrgraph/AGENT_CONTRACT.md` explains every
state. `.tldrgraph/layers.yaml` summarises the layers and their violations.
";

/// A file install manages: a block inside a file that may hold the user's text, or a file of
/// its own.
#[derive(Debug, Clone, Copy)]
enum Managed {
    Block {
        path: &'static str,
        begin: &'static str,
        end: &'static str,
        body: &'static str,
    },
    File {
        path: &'static str,
        content: &'static str,
    },
}

const MANAGED: [Managed; 4] = [
    Managed::Block {
        path: "AGENTS.md",
        begin: BLOCK_BEGIN_MD,
        end: BLOCK_END_MD,
        body: AGENTS_BLOCK,
    },
    Managed::Block {
        path: ".gitignore",
        begin: BLOCK_BEGIN_SH,
        end: BLOCK_END_SH,
        body: GITIGNORE_BLOCK,
    },
    Managed::File {
        path: ".claude/commands/tldrgraph.md",
        content: COMMAND_FILE,
    },
    Managed::File {
        path: ".cursor/rules/tldrgraph.mdc",
        content: CURSOR_RULE,
    },
];

/// `.tldrgraph/install.json`.
#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// Files with a managed block: whether install created the file, and whether it added a
    /// newline to end the user's last line before the block.
    pub blocks: Vec<BlockEntry>,
    /// Files install wrote whole, with the hash of what it wrote.
    pub files: Vec<FileEntry>,
    /// MCP configs holding the server entry install wrote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerEntry {
    pub path: String,
    /// Install created the file, or only its `mcpServers` object.
    pub created_file: bool,
    pub created_section: bool,
}

/// The MCP configs `install --mcp` writes the server entry into: Claude Code's project-scoped
/// `.mcp.json` and Cursor's `.cursor/mcp.json` (the same `mcpServers` shape).
const MCP_CONFIGS: [&str; 2] = [".mcp.json", ".cursor/mcp.json"];
/// The entry's name and its content: the server runs from the project directory, where it
/// finds the repository, so the entry holds no path and suits every clone.
const MCP_SERVER_NAME: &str = "tldrgraph";

fn mcp_server_entry() -> serde_json::Value {
    serde_json::json!({"command": "tldrgraph", "args": ["mcp"]})
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BlockEntry {
    pub path: String,
    pub created: bool,
    pub added_newline: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileEntry {
    pub path: String,
    pub hash: String,
}

/// One thing install or uninstall does (or would do, with `--dry-run`).
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub verb: &'static str,
    pub path: String,
}

/// What went wrong, with the path concerned.
pub type Error = String;

fn read_manifest(root: &Path) -> Result<Manifest, Error> {
    let path = root
        .join(store::STORE_DIR)
        .join(artifacts::INSTALL_MANIFEST);
    match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{}: line {}: {e} (delete it only if nothing was installed)",
                path.display(),
                e.line()
            )
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
        Err(err) => Err(format!("cannot read {}: {err}", path.display())),
    }
}

/// The block in the file's own line ending (CRLF files stay CRLF).
fn block_text(begin: &str, end: &str, body: &str, crlf: bool) -> String {
    let block = format!("{begin}\n{body}\n{end}\n");
    if crlf {
        block.replace('\n', "\r\n")
    } else {
        block
    }
}

/// Byte offsets of the lines of `text` that are exactly `marker` (ignoring a trailing `\r`),
/// each with the offset just past its line ending.
fn marker_lines(text: &str, marker: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if content == marker {
            found.push((start, start + line.len()));
        }
        start += line.len();
    }
    found
}

/// Byte range of the managed block, from its begin-marker line to the end of its end-marker
/// line; an error when the markers do not pair up (never guess what to delete).
fn find_block(
    path: &str,
    text: &str,
    begin: &str,
    end: &str,
) -> Result<Option<(usize, usize)>, Error> {
    let begins = marker_lines(text, begin);
    let ends = marker_lines(text, end);
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    match (begins.as_slice(), ends.as_slice()) {
        ([], []) => Ok(None),
        ([(start, _)], [(_, stop)]) if stop > start => Ok(Some((*start, *stop))),
        ([(start, _)], []) => Err(format!(
            "{path}:{}: the tldrgraph block has no end marker `{end}`; put it back after the block \
             (or delete the whole block) and run the command again",
            line_of(*start)
        )),
        _ => Err(format!(
            "{path}: the tldrgraph markers do not pair up ({} begin, {} end); leave one `{begin}` \
             line followed by one `{end}` line, then run the command again",
            begins.len(),
            ends.len()
        )),
    }
}

fn write(root: &Path, rel: &str, text: &str, dry_run: bool) -> Result<(), Error> {
    if dry_run {
        return Ok(());
    }
    let path = root.join(rel);
    store::write_atomic(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn read_optional(path: &Path) -> Result<Option<String>, Error> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("{} is not UTF-8; not touching it", path.display())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(format!("cannot read {}: {err}", path.display())),
    }
}

pub fn install(root: &Path, dry_run: bool, mcp: bool) -> Result<Vec<Action>, Error> {
    let mut manifest = read_manifest(root)?;
    if mcp {
        // A config that cannot be read stops the install before anything is written.
        for path in MCP_CONFIGS {
            read_mcp_config(root, path)?;
        }
    }
    let before = serde_json::to_string(&manifest).unwrap_or_default();
    let mut actions = Vec::new();
    let mut act = |verb: &'static str, path: &str| {
        actions.push(Action {
            verb,
            path: path.to_string(),
        })
    };
    for managed in MANAGED {
        match managed {
            Managed::Block {
                path,
                begin,
                end,
                body,
            } => {
                let current = read_optional(&root.join(path))?;
                let text = current.clone().unwrap_or_default();
                let block = block_text(begin, end, body, text.contains("\r\n"));
                let updated = match find_block(path, &text, begin, end)? {
                    Some((start, stop)) => format!("{}{block}{}", &text[..start], &text[stop..]),
                    None => {
                        let added_newline = !text.is_empty() && !text.ends_with('\n');
                        manifest.blocks.retain(|b| b.path != path);
                        manifest.blocks.push(BlockEntry {
                            path: path.to_string(),
                            created: current.is_none(),
                            added_newline,
                        });
                        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
                        let separator = match (text.is_empty(), added_newline) {
                            (true, _) => String::new(),
                            (false, true) => newline.repeat(2),
                            (false, false) => newline.to_string(),
                        };
                        format!("{text}{separator}{block}")
                    }
                };
                if current.as_deref() == Some(updated.as_str()) {
                    act("unchanged", path);
                } else {
                    act(
                        if current.is_none() {
                            "create"
                        } else {
                            "update"
                        },
                        path,
                    );
                    write(root, path, &updated, dry_run)?;
                }
            }
            Managed::File { path, content } => {
                let current = read_optional(&root.join(path))?;
                let ours = manifest.files.iter().any(|f| f.path == path);
                let recorded = manifest.files.iter().find(|f| f.path == path);
                match current {
                    Some(text) if text == content => act("unchanged", path),
                    Some(_) if !ours => act("skip (a file of yours is there)", path),
                    // Edited since install: the user's now, like a file of theirs.
                    Some(text)
                        if recorded.is_some_and(|f| f.hash != content_hash(text.as_bytes())) =>
                    {
                        act("skip (edited since install)", path)
                    }
                    existing => {
                        act(
                            if existing.is_none() {
                                "create"
                            } else {
                                "update"
                            },
                            path,
                        );
                        write(root, path, content, dry_run)?;
                        manifest.files.retain(|f| f.path != path);
                        manifest.files.push(FileEntry {
                            path: path.to_string(),
                            hash: content_hash(content.as_bytes()),
                        });
                    }
                }
            }
        }
    }
    if mcp {
        for path in MCP_CONFIGS {
            let verb = install_server(root, path, &mut manifest, dry_run)?;
            act(verb, path);
        }
    }
    let after = serde_json::to_string(&manifest).unwrap_or_default();
    let manifest_rel = format!("{}/{}", store::STORE_DIR, artifacts::INSTALL_MANIFEST);
    if after != before {
        act("record", &manifest_rel);
        let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())? + "\n";
        write(root, &manifest_rel, &text, dry_run)?;
    }
    Ok(actions)
}

pub fn uninstall(root: &Path, dry_run: bool) -> Result<Vec<Action>, Error> {
    let manifest = read_manifest(root)?;
    let mut actions = Vec::new();
    for managed in MANAGED {
        let Managed::Block {
            path, begin, end, ..
        } = managed
        else {
            continue;
        };
        let Some(text) = read_optional(&root.join(path))? else {
            continue;
        };
        let Some((start, stop)) = find_block(path, &text, begin, end)? else {
            continue;
        };
        let entry = manifest.blocks.iter().find(|b| b.path == path);
        let mut head = text[..start].to_string();
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let blank = newline.repeat(2);
        // Take back the separator install put before the block.
        if entry.is_some() && start > 0 && head.ends_with(&blank) {
            head.truncate(head.len() - newline.len());
        }
        if entry.is_some_and(|e| e.added_newline) && head.ends_with(newline) {
            head.truncate(head.len() - newline.len());
        }
        let rest = format!("{head}{}", &text[stop..]);
        if rest.is_empty() && entry.is_some_and(|e| e.created) {
            actions.push(Action {
                verb: "remove",
                path: path.to_string(),
            });
            if !dry_run {
                fs::remove_file(root.join(path))
                    .map_err(|e| format!("cannot remove {path}: {e}"))?;
            }
        } else {
            actions.push(Action {
                verb: "update",
                path: path.to_string(),
            });
            write(root, path, &rest, dry_run)?;
        }
    }
    for entry in &manifest.servers {
        if let Some(verb) = uninstall_server(root, entry, dry_run)? {
            actions.push(Action {
                verb,
                path: entry.path.clone(),
            });
        }
    }
    for file in &manifest.files {
        let path = root.join(&file.path);
        match fs::read(&path) {
            Ok(bytes) if content_hash(&bytes) == file.hash => {
                actions.push(Action {
                    verb: "remove",
                    path: file.path.clone(),
                });
                if !dry_run {
                    fs::remove_file(&path)
                        .map_err(|e| format!("cannot remove {}: {e}", file.path))?;
                    remove_empty_parents(root, &path);
                }
            }
            Ok(_) => actions.push(Action {
                verb: "keep (edited since install)",
                path: file.path.clone(),
            }),
            Err(_) => {}
        }
    }
    let manifest_path: PathBuf = root
        .join(store::STORE_DIR)
        .join(artifacts::INSTALL_MANIFEST);
    if manifest_path.exists() {
        actions.push(Action {
            verb: "remove",
            path: format!("{}/{}", store::STORE_DIR, artifacts::INSTALL_MANIFEST),
        });
        if !dry_run {
            fs::remove_file(&manifest_path)
                .map_err(|e| format!("cannot remove {}: {e}", manifest_path.display()))?;
            // `.tldrgraph/` itself goes only if install was all that was in it.
            let _ = fs::remove_dir(root.join(store::STORE_DIR));
        }
    }
    Ok(actions)
}

/// Removes the directories install created for a file (`.claude/commands`, `.claude`) once
/// they are empty; a directory holding anything else stays.
fn remove_empty_parents(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// An MCP config as a JSON object (`{}` when absent); an error naming the file and line when
/// it is not one (never overwrite what cannot be read).
fn read_mcp_config(
    root: &Path,
    path: &str,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, Error> {
    let Some(text) = read_optional(&root.join(path))? else {
        return Ok(None);
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(map))
            if map.get("mcpServers").is_some_and(|s| !s.is_object()) =>
        {
            Err(format!(
                "{path}: `mcpServers` is not an object; not touching it"
            ))
        }
        Ok(serde_json::Value::Object(map)) => Ok(Some(map)),
        Ok(_) => Err(format!("{path}: not a JSON object; not touching it")),
        Err(e) => Err(format!(
            "{path}:{}: not valid JSON ({e}); fix it, then run the command again",
            e.line()
        )),
    }
}

fn write_mcp_config(
    root: &Path,
    path: &str,
    config: &serde_json::Map<String, serde_json::Value>,
    dry_run: bool,
) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(config).map_err(|e| e.to_string())? + "\n";
    if let Some(parent) = root.join(path).parent() {
        if !dry_run {
            fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
    }
    write(root, path, &text, dry_run)
}

/// Adds the server entry to the MCP config at `path`; the action's verb.
fn install_server(
    root: &Path,
    path: &str,
    manifest: &mut Manifest,
    dry_run: bool,
) -> Result<&'static str, Error> {
    let existing = read_mcp_config(root, path)?;
    let created_file = existing.is_none();
    let mut config = existing.unwrap_or_default();
    let ours = manifest.servers.iter().any(|s| s.path == path);
    let created_section = !config.contains_key("mcpServers");
    let servers = config
        .entry("mcpServers")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(format!(
            "{path}: `mcpServers` is not an object; not touching it"
        ));
    };
    match servers.get(MCP_SERVER_NAME) {
        Some(entry) if *entry == mcp_server_entry() => return Ok("unchanged"),
        Some(_) if ours => return Ok("skip (edited since install)"),
        Some(_) => return Ok("skip (a server entry of yours is there)"),
        None => {}
    }
    servers.insert(MCP_SERVER_NAME.into(), mcp_server_entry());
    write_mcp_config(root, path, &config, dry_run)?;
    manifest.servers.retain(|s| s.path != path);
    manifest.servers.push(ServerEntry {
        path: path.to_string(),
        created_file,
        created_section,
    });
    Ok(if created_file { "create" } else { "update" })
}

/// Takes the server entry out of the MCP config install wrote it into; the action's verb, or
/// nothing when there is nothing of ours left there.
fn uninstall_server(
    root: &Path,
    entry: &ServerEntry,
    dry_run: bool,
) -> Result<Option<&'static str>, Error> {
    let Some(mut config) = read_mcp_config(root, &entry.path)? else {
        return Ok(None);
    };
    let Some(servers) = config.get_mut("mcpServers").and_then(|s| s.as_object_mut()) else {
        return Ok(None);
    };
    match servers.get(MCP_SERVER_NAME) {
        Some(found) if *found == mcp_server_entry() => {}
        Some(_) => return Ok(Some("keep (edited since install)")),
        None => return Ok(None),
    }
    servers.remove(MCP_SERVER_NAME);
    if servers.is_empty() && entry.created_section {
        config.remove("mcpServers");
    }
    if config.is_empty() && entry.created_file {
        if !dry_run {
            let path = root.join(&entry.path);
            fs::remove_file(&path).map_err(|e| format!("cannot remove {}: {e}", entry.path))?;
            remove_empty_parents(root, &path);
        }
        return Ok(Some("remove"));
    }
    write_mcp_config(root, &entry.path, &config, dry_run)?;
    Ok(Some("update"))
}
