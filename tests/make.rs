//! pipelines/tldrgraph.mk and pipelines/init.sh, driven as a user drives them: a Makefile that
//! includes the fragment, in a copy of a fixture repository. The stages are the real binaries
//! behind thin wrappers that count each run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tg_integration::{copy_fixture, init_json, stage};

const STAGES: [&str; 7] = [
    "tg-extract",
    "tg-classify",
    "tg-plan",
    "tg-enrich",
    "tg-embed",
    "tg-status",
    "tldrgraph",
];

struct Project {
    repo: tempfile::TempDir,
    bin: tempfile::TempDir,
}

impl Project {
    /// A copy of tests/fixtures/python with a Makefile that includes the fragment, and a
    /// directory of counting wrappers around the built stages.
    fn new() -> Self {
        let repo = copy_fixture("python");
        let bin = tempfile::tempdir().expect("tempdir");
        for name in STAGES {
            let script = format!(
                "#!/bin/sh\necho {name} >> '{log}'\nif [ \"$KILL_STAGE\" = {name} ]; then kill -9 $$; fi\nexec '{real}' \"$@\"\n",
                log = bin.path().join("runs.log").display(),
                real = stage(name).display()
            );
            let path = bin.path().join(name);
            fs::write(&path, script).expect("wrapper");
            let mut perms = fs::metadata(&path).expect("meta").permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
            fs::set_permissions(&path, perms).expect("chmod");
        }
        let fragment = fragment();
        fs::write(
            repo.path().join("Makefile"),
            format!(
                "TLDRGRAPH_BIN := {}/\ninclude {}\n",
                bin.path().display(),
                fragment.display()
            ),
        )
        .expect("Makefile");
        Project { repo, bin }
    }

    fn dir(&self) -> &Path {
        self.repo.path()
    }

    /// Runs make with `args`, returns its output and the stages that ran (in order).
    fn make(&self, args: &[&str], kill: Option<&str>) -> (Output, Vec<String>) {
        let log = self.bin.path().join("runs.log");
        let _ = fs::remove_file(&log);
        let output = Command::new("make")
            .args(args)
            .current_dir(self.dir())
            .env("KILL_STAGE", kill.unwrap_or(""))
            .output()
            .expect("make");
        let runs = fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        (output, runs)
    }

    fn build(&self) -> Vec<String> {
        let (output, runs) = self.make(&["tldrgraph"], None);
        assert!(
            output.status.success(),
            "make failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        runs
    }

    fn state(&self) -> serde_json::Value {
        let text = fs::read_to_string(self.dir().join(".tldrgraph/make/status.json"))
            .expect("status.json");
        serde_json::from_str(&text).expect("json")
    }
}

fn fragment() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pipelines/tldrgraph.mk")
}

fn append(path: &Path, text: &str) {
    let mut content = fs::read_to_string(path).expect("read");
    content.push_str(text);
    fs::write(path, content).expect("write");
}

/// Sets the mtime of `path` to now without changing its content.
fn touch(path: &Path) {
    let status = Command::new("touch").arg(path).status().expect("touch");
    assert!(status.success());
}

#[test]
fn make_rebuilds_exactly_what_is_stale() {
    let project = Project::new();
    let dir = project.dir();
    assert_eq!(
        project.build(),
        [
            "tg-extract",
            "tg-classify",
            "tg-plan",
            "tg-enrich",
            "tg-embed",
            "tg-status",
            "tldrgraph"
        ]
    );
    assert_eq!(project.state()["status"], "needs_layers");

    // A no-op build runs no stage, and `make -n` says none would run.
    assert!(project.build().is_empty());
    let (dry, runs) = project.make(&["-n", "tldrgraph"], None);
    assert!(runs.is_empty());
    let dry = String::from_utf8_lossy(&dry.stdout);
    for name in STAGES {
        let call = format!("/{name} ");
        assert!(!dry.contains(&call), "make -n would run {name}:\n{dry}");
    }

    // Only the mtime of a source changes: extraction runs and its stream is the same, so
    // nothing after it runs.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    touch(&dir.join("pkg/api.py"));
    assert_eq!(project.build(), ["tg-extract"]);

    // One file's content changes: one file parsed, and the later stages run.
    append(
        &dir.join("pkg/util.py"),
        "\n\ndef added():\n    return helper()\n",
    );
    let (output, runs) = project.make(&["tldrgraph"], None);
    assert!(output.status.success());
    assert_eq!(
        runs,
        [
            "tg-extract",
            "tg-classify",
            "tg-plan",
            "tg-enrich",
            "tg-embed",
            "tg-status"
        ]
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("(1 parsed, 5 cached"), "{stderr}");

    // The layers config changes: classification and what follows, not extraction.
    fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/layers/python.layers.config.yaml"),
        dir.join(".tldrgraph/layers.config.yaml"),
    )
    .expect("config");
    let (output, runs) = project.make(&["-j4", "tldrgraph"], None);
    assert!(output.status.success());
    assert_eq!(
        runs,
        [
            "tg-classify",
            "tg-plan",
            "tg-enrich",
            "tg-embed",
            "tg-status"
        ]
    );
    // Layers exist, so the plan asks for approval (make never approves on the user's behalf).
    assert_eq!(project.state()["status"], "needs_confirmation");
    assert!(project.state()["candidates_count"].as_u64() > Some(0));

    // A new file and a deleted file re-run extraction.
    fs::write(dir.join("pkg/extra.py"), "def extra():\n    pass\n").expect("write");
    assert_eq!(
        project.build(),
        [
            "tg-extract",
            "tg-classify",
            "tg-plan",
            "tg-enrich",
            "tg-embed",
            "tg-status"
        ]
    );
    // 32 nodes, the function added to util.py, and extra.py's module and function.
    assert_eq!(project.state()["total_nodes"], 35);
    fs::remove_file(dir.join("pkg/extra.py")).expect("rm");
    assert_eq!(
        project.build(),
        [
            "tg-extract",
            "tg-classify",
            "tg-plan",
            "tg-enrich",
            "tg-embed",
            "tg-status"
        ]
    );
    assert_eq!(project.state()["total_nodes"], 33);
    assert!(project.build().is_empty());
}

#[test]
fn a_stage_killed_mid_way_leaves_nothing_that_looks_up_to_date() {
    let project = Project::new();
    let dir = project.dir();
    project.build();
    let graph_before = fs::read(dir.join(".tldrgraph/graph.json")).expect("graph");
    append(&dir.join("pkg/util.py"), "\n\ndef added():\n    return 1\n");

    let (output, runs) = project.make(&["tldrgraph"], Some("tg-classify"));
    assert!(!output.status.success(), "make must fail when a stage dies");
    assert_eq!(runs, ["tg-extract", "tg-classify"]);
    // The old stamp is older than the new stream, so it does not look up to date.
    let mtime = |name: &str| {
        fs::metadata(dir.join(".tldrgraph/make").join(name))
            .and_then(|m| m.modified())
            .expect("mtime")
    };
    assert!(mtime("classify.stamp") < mtime("extract.ndjson"));
    assert_eq!(
        fs::read(dir.join(".tldrgraph/graph.json")).expect("graph"),
        graph_before,
        "nothing after the dead stage was committed"
    );

    // The next build picks up where the dead one stopped.
    assert_eq!(
        project.build(),
        [
            "tg-classify",
            "tg-plan",
            "tg-enrich",
            "tg-embed",
            "tg-status"
        ]
    );
    assert_eq!(project.state()["extracted_symbols_count"], 27);
    assert!(project.build().is_empty());
}

#[test]
fn make_init_sh_and_tldrgraph_init_reach_the_same_state_and_artifacts() {
    let artifacts = [
        "graph.json",
        "state.json",
        "layers.yaml",
        "symbols.md",
        "AGENT_CONTRACT.md",
    ];
    let read_all = |dir: &Path| -> Vec<Vec<u8>> {
        artifacts
            .iter()
            .map(|name| fs::read(dir.join(".tldrgraph").join(name)).expect(name))
            .collect()
    };

    let by_init = copy_fixture("python");
    let (payload, code) = init_json(by_init.path(), &[]);
    assert_eq!(code, 0);

    let by_script = copy_fixture("python");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pipelines/init.sh");
    let bin_dir = stage("tldrgraph")
        .parent()
        .expect("target dir")
        .display()
        .to_string();
    let output = Command::new("bash")
        .arg(&script)
        .arg(by_script.path())
        .env("TLDRGRAPH_BIN", format!("{bin_dir}/"))
        .output()
        .expect("init.sh");
    assert!(output.status.success());
    let from_script: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(from_script, payload);
    assert!(read_all(by_script.path()) == read_all(by_init.path()));

    let by_make = Project::new();
    by_make.build();
    assert_eq!(by_make.state(), payload);
    assert!(read_all(by_make.dir()) == read_all(by_init.path()));
}

#[test]
fn make_recovers_a_deleted_stream_and_tracks_the_config_and_leaves_the_default_goal() {
    let project = Project::new();
    let dir = project.dir();
    append(
        &dir.join("Makefile"),
        "all:\n\t@echo the default goal of the user\n",
    );
    let (output, runs) = project.make(&[], None);
    assert!(output.status.success());
    assert!(
        runs.is_empty(),
        "plain `make` runs the user's goal, not tldrgraph"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("the default goal of the user"));

    project.build();
    // A stream deleted behind the stamps' back is rebuilt, not reported as missing.
    fs::remove_file(dir.join(".tldrgraph/make/extract.ndjson")).expect("rm");
    assert_eq!(project.build(), ["tg-extract", "tg-classify"]);

    // A config edit that leaves the classified stream the same still refreshes the state, so
    // `tldrgraph status` agrees with make that everything is current.
    let config = dir.join(".tldrgraph/layers.config.yaml");
    fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/layers/python.layers.config.yaml"),
        &config,
    )
    .expect("config");
    assert_eq!(
        project.build(),
        [
            "tg-classify",
            "tg-plan",
            "tg-enrich",
            "tg-embed",
            "tg-status"
        ]
    );
    append(&config, "# a comment only\n");
    // The planned stream came out the same: tg-enrich has nothing new to read.
    assert_eq!(project.build(), ["tg-classify", "tg-plan", "tg-status"]);
    let status = Command::new(stage("tldrgraph"))
        .args(["status", "--exit-code"])
        .current_dir(dir)
        .output()
        .expect("status");
    assert_eq!(
        status.status.code(),
        Some(11),
        "fresh after make (needs_confirmation, not stale)"
    );

    // Removing the config goes back to one bucket.
    fs::remove_file(&config).expect("rm");
    assert_eq!(
        project.build(),
        [
            "tg-classify",
            "tg-plan",
            "tg-enrich",
            "tg-embed",
            "tg-status"
        ]
    );
    assert_eq!(project.state()["status"], "needs_layers");
}

#[test]
fn make_applies_a_dropped_answer_and_then_has_nothing_left_to_do() {
    let project = Project::new();
    let dir = project.dir();
    fs::create_dir_all(dir.join(".tldrgraph")).expect("mkdir");
    fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/layers/python.layers.config.yaml"),
        dir.join(".tldrgraph/layers.config.yaml"),
    )
    .expect("config");
    // The approval comes from `tldrgraph init --yes`, the user's word; make never approves.
    let (asked, _) = init_json(dir, &["--yes"]);
    assert_eq!(asked["status"], "needs_enrichment");
    project.build();
    let ids: Vec<String> = asked["batch"]
        .as_array()
        .expect("batch")
        .iter()
        .map(|i| i["id"].as_str().expect("id").to_string())
        .collect();
    let answer = ids
        .iter()
        .map(|id| format!("{{\"id\":\"{id}\",\"intent\":\"Does {id}.\"}}\n"))
        .collect::<String>();
    fs::write(dir.join(".tldrgraph/enrichment_response.ndjson"), answer).expect("write");
    project.build();
    assert!(dir
        .join(".tldrgraph/enrichment_response.applied.ndjson")
        .exists());
    // The stored intents feed classify and plan: one more build settles, then nothing runs.
    project.build();
    assert_eq!(project.state()["status"], "done");
    assert_eq!(project.build(), Vec::<String>::new());
}
