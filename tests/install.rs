//! `tldrgraph install` / `uninstall` round trips on a repository that already has an AGENTS.md.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use tg_integration::{copy_fixture, init_json, run};

/// Every file under `dir` (relative path → bytes).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in fs::read_dir(&current).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir").to_path_buf();
                files.insert(rel, fs::read(&path).expect("read"));
            }
        }
    }
    files
}

fn tldrgraph(dir: &Path, args: &[&str]) -> String {
    let output = run("tldrgraph", dir, args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

#[test]
fn install_is_idempotent_and_uninstall_restores_the_repository() {
    for user_text in [
        "# Agents\n\nRun `make test` before you commit.\n",
        "no newline at the end",
    ] {
        let repo = copy_fixture("python");
        let dir = repo.path();
        fs::write(dir.join("AGENTS.md"), user_text).expect("AGENTS.md");
        let original = snapshot(dir);

        let dry = tldrgraph(dir, &["install", "--dry-run"]);
        assert!(dry.contains("would update AGENTS.md"), "{dry}");
        assert!(
            dry.contains("would create .claude/commands/tldrgraph.md"),
            "{dry}"
        );
        assert_eq!(snapshot(dir), original, "--dry-run writes nothing");

        tldrgraph(dir, &["install"]);
        let agents = fs::read_to_string(dir.join("AGENTS.md")).expect("AGENTS.md");
        assert!(agents.starts_with(user_text.trim_end()), "{agents}");
        assert!(agents.contains("<!-- tldrgraph:begin"));
        assert!(agents.contains("tldrgraph init --json"));
        assert!(agents.ends_with("<!-- tldrgraph:end -->\n"));
        let gitignore = fs::read_to_string(dir.join(".gitignore")).expect(".gitignore");
        assert!(
            gitignore.contains("\n.tldrgraph/graph.json\n"),
            "{gitignore}"
        );
        for file in [
            ".claude/commands/tldrgraph.md",
            ".cursor/rules/tldrgraph.mdc",
        ] {
            let text = fs::read_to_string(dir.join(file)).expect(file);
            assert!(text.contains(".tldrgraph/AGENT_CONTRACT.md"), "{file}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.join("AGENTS.md"))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o644, "install keeps AGENTS.md readable");
        }

        let installed = snapshot(dir);
        let again = tldrgraph(dir, &["install"]);
        assert!(
            again.lines().all(|l| l.starts_with("unchanged ")),
            "{again}"
        );
        assert_eq!(snapshot(dir), installed, "a second install changes nothing");

        // The user edits around the block; the block is replaced in place, their text stays.
        let edited = agents.replace("# Agents", "# Agents (edited)");
        fs::write(dir.join("AGENTS.md"), &edited).expect("write");
        tldrgraph(dir, &["install"]);
        assert_eq!(
            fs::read_to_string(dir.join("AGENTS.md")).expect("read"),
            edited
        );
        fs::write(dir.join("AGENTS.md"), &agents).expect("write");

        let removed = tldrgraph(dir, &["uninstall"]);
        assert!(
            removed.contains("remove .claude/commands/tldrgraph.md"),
            "{removed}"
        );
        assert_eq!(
            snapshot(dir),
            original,
            "uninstall removes exactly what install wrote"
        );
    }
}

#[test]
fn install_never_overwrites_a_file_of_the_users_and_uninstall_keeps_edited_files() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    fs::create_dir_all(dir.join(".cursor/rules")).expect("mkdir");
    fs::write(dir.join(".cursor/rules/tldrgraph.mdc"), "mine\n").expect("write");
    let output = tldrgraph(dir, &["install"]);
    assert!(
        output.contains("skip (a file of yours is there) .cursor/rules/tldrgraph.mdc"),
        "{output}"
    );
    assert_eq!(
        fs::read_to_string(dir.join(".cursor/rules/tldrgraph.mdc")).expect("read"),
        "mine\n"
    );

    fs::write(
        dir.join(".claude/commands/tldrgraph.md"),
        "edited by the user\n",
    )
    .expect("write");
    let output = tldrgraph(dir, &["uninstall"]);
    assert!(
        output.contains("keep (edited since install) .claude/commands/tldrgraph.md"),
        "{output}"
    );
    assert!(dir.join(".claude/commands/tldrgraph.md").exists());
    assert!(dir.join(".cursor/rules/tldrgraph.mdc").exists());
    assert!(
        !dir.join("AGENTS.md").exists(),
        "created by install, removed by uninstall"
    );
    assert!(!dir.join(".gitignore").exists());
}

#[test]
fn init_writes_nothing_outside_tldrgraph() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    let before = snapshot(dir);
    assert_eq!(init_json(dir, &[]).1, 0);
    let after = snapshot(dir);
    let outside: Vec<&PathBuf> = after
        .keys()
        .filter(|p| !p.starts_with(".tldrgraph") && before.get(*p) != after.get(*p))
        .collect();
    assert!(outside.is_empty(), "init wrote {outside:?}");
}

#[test]
fn crlf_files_and_broken_markers_lose_nothing() {
    // A CRLF AGENTS.md stays CRLF and round-trips byte for byte.
    let repo = copy_fixture("python");
    let dir = repo.path();
    let crlf = "# Agents\r\n\r\nWindows line endings.\r\n";
    fs::write(dir.join("AGENTS.md"), crlf).expect("write");
    tldrgraph(dir, &["install"]);
    let installed = fs::read_to_string(dir.join("AGENTS.md")).expect("read");
    assert!(
        !installed.replace("\r\n", "").contains('\n'),
        "mixed line endings: {installed:?}"
    );
    assert!(tldrgraph(dir, &["install"])
        .lines()
        .all(|l| l.starts_with("unchanged ")));
    tldrgraph(dir, &["uninstall"]);
    assert_eq!(
        fs::read_to_string(dir.join("AGENTS.md")).expect("read"),
        crlf
    );

    // A block whose end marker was deleted: an error naming the line, and no text is lost.
    tldrgraph(dir, &["install"]);
    let text = fs::read_to_string(dir.join("AGENTS.md")).expect("read");
    let broken = text.replace("<!-- tldrgraph:end -->\r\n", "") + "User text after.\r\n";
    fs::write(dir.join("AGENTS.md"), &broken).expect("write");
    for command in ["install", "uninstall"] {
        let output = run("tldrgraph", dir, &[command]);
        assert!(!output.status.success(), "{command} must refuse");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("AGENTS.md:5: the tldrgraph block has no end marker"),
            "{stderr}"
        );
        assert_eq!(
            fs::read_to_string(dir.join("AGENTS.md")).expect("read"),
            broken
        );
    }
}

#[test]
fn install_keeps_a_managed_file_the_user_edited() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    tldrgraph(dir, &["install"]);
    let command = dir.join(".claude/commands/tldrgraph.md");
    let edited = fs::read_to_string(&command).expect("read") + "Also run the tests.\n";
    fs::write(&command, &edited).expect("write");
    let output = tldrgraph(dir, &["install"]);
    assert!(
        output.contains("skip (edited since install) .claude/commands/tldrgraph.md"),
        "{output}"
    );
    assert_eq!(fs::read_to_string(&command).expect("read"), edited);
}

#[test]
fn install_mcp_adds_the_server_beside_the_users_and_uninstall_takes_only_it_out() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    // Claude Code's config already lists a server of the user's; Cursor's does not exist.
    let users = "{\n  \"mcpServers\": {\n    \"db\": {\"command\": \"db-mcp\", \"args\": [\"--ro\"]}\n  },\n  \"other\": 1\n}\n";
    fs::write(dir.join(".mcp.json"), users).expect(".mcp.json");
    let original = snapshot(dir);

    let first = tldrgraph(dir, &["install", "--mcp"]);
    assert!(first.contains("update .mcp.json"), "{first}");
    assert!(first.contains("create .cursor/mcp.json"), "{first}");
    for path in [".mcp.json", ".cursor/mcp.json"] {
        let config: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join(path)).expect(path)).expect("json");
        assert_eq!(
            config["mcpServers"]["tldrgraph"],
            serde_json::json!({"command": "tldrgraph", "args": ["mcp"]}),
            "{path}"
        );
    }
    let claude: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join(".mcp.json")).expect("read"))
            .expect("json");
    assert_eq!(claude["mcpServers"]["db"]["args"][0], "--ro");
    assert_eq!(claude["other"], 1);

    let installed = snapshot(dir);
    let second = tldrgraph(dir, &["install", "--mcp"]);
    assert!(second.contains("unchanged .mcp.json"), "{second}");
    assert_eq!(snapshot(dir), installed, "a second install changes nothing");

    tldrgraph(dir, &["uninstall"]);
    let after = snapshot(dir);
    assert!(
        !dir.join(".cursor").exists(),
        "the directory install made is gone"
    );
    let claude: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join(".mcp.json")).expect("read"))
            .expect("json");
    let mut expected: serde_json::Value = serde_json::from_str(users).expect("json");
    assert_eq!(
        claude, expected,
        "the user's servers and keys are back as they were"
    );
    // Only the formatting of .mcp.json may differ from the original.
    let mut without: BTreeMap<_, _> = after.clone();
    without.remove(Path::new(".mcp.json"));
    let mut original_without = original.clone();
    original_without.remove(Path::new(".mcp.json"));
    assert_eq!(without, original_without);

    // A tldrgraph entry the user wrote is theirs: never replaced, never removed.
    expected["mcpServers"]["tldrgraph"] =
        serde_json::json!({"command": "/opt/tg/tldrgraph", "args": ["mcp", "--wait-ms", "100"]});
    fs::write(dir.join(".mcp.json"), expected.to_string()).expect("write");
    let skipped = tldrgraph(dir, &["install", "--mcp"]);
    assert!(
        skipped.contains("skip (a server entry of yours is there) .mcp.json"),
        "{skipped}"
    );
    tldrgraph(dir, &["uninstall"]);
    let kept: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join(".mcp.json")).expect("read"))
            .expect("json");
    assert_eq!(
        kept["mcpServers"]["tldrgraph"]["command"],
        "/opt/tg/tldrgraph"
    );
}

#[test]
fn a_broken_mcp_config_is_reported_with_its_line_and_left_alone() {
    let repo = copy_fixture("python");
    let dir = repo.path();
    let broken = "{\n  \"mcpServers\": {\n    \"db\": \n  }\n}\n";
    fs::write(dir.join(".mcp.json"), broken).expect("write");
    let output = run("tldrgraph", dir, &["install", "--mcp"]);
    assert_eq!(output.status.code(), Some(73));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(".mcp.json:4:"), "{stderr}");
    assert_eq!(
        fs::read_to_string(dir.join(".mcp.json")).expect("read"),
        broken
    );
}
