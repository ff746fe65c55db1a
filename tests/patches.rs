//! Stages that apply patches (`tg-extract --patch`) to the state of the last whole stream they
//! read: the patch they write, applied to their previous output by an applier written apart
//! from them ([`tg_integration::patch::apply_patch`]), gives the bytes a whole run of the edited
//! repository gives, and their artifacts are that run's; a patch of another stream, or after
//! the config changed, is refused with exit 76 and nothing written.

use std::fs;
use std::path::Path;
use std::process::Output;
use tg_integration::patch::apply_patch;
use tg_integration::{apply_intents, init_json, layered_fixture, pipe_into, run};

/// The stages that apply patches, in pipeline order.
const PATCHING_STAGES: [&str; 3] = ["tg-classify", "tg-plan", "tg-enrich"];

/// The artifacts those stages write besides their streams.
const ARTIFACTS: [&str; 4] = [
    ".tldrgraph/layers.yaml",
    ".tldrgraph/symbols.md",
    ".tldrgraph/plan.json",
    ".tldrgraph/intents.ndjson",
];

/// What the agent and the user write in the store, which a whole run reads too.
const INPUTS: [&str; 3] = ["layers.config.yaml", "intents.ndjson", "approval.json"];

fn succeeded(output: Output, what: &str) -> Vec<u8> {
    assert!(
        output.status.success(),
        "{what}: exit {:?}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

fn header_of(stream: &[u8]) -> serde_json::Value {
    let first = stream.split(|&b| b == b'\n').next().unwrap_or(b"");
    serde_json::from_slice(first).expect("a header")
}

fn edit(root: &Path, path: &str, from: &str, to: &str) {
    let text = fs::read_to_string(root.join(path)).expect("read");
    assert!(text.contains(from), "{path} holds {from:?}");
    fs::write(root.join(path), text.replacen(from, to, 1)).expect("write");
}

/// The artifacts present (the stages that ran wrote theirs), by name.
fn artifacts(root: &Path) -> Vec<(&'static str, String)> {
    (ARTIFACTS.iter())
        .filter_map(|name| Some((*name, fs::read_to_string(root.join(name)).ok()?)))
        .collect()
}

/// Each patching stage's output, and the artifacts, of a whole run of `root`'s sources, made
/// in a copy with a store of its own (the repository's state is not touched).
fn whole_run(root: &Path) -> (Vec<Vec<u8>>, Vec<(&'static str, String)>) {
    let copy = tempfile::tempdir().expect("tempdir");
    copy_sources(root, copy.path());
    let stream = succeeded(run("tg-extract", copy.path(), &["."]), "whole tg-extract");
    let outputs = through_stages(copy.path(), stream, "whole");
    (outputs, artifacts(copy.path()))
}

/// `stream` through each patching stage in `root`: each one's output.
fn through_stages(root: &Path, mut stream: Vec<u8>, what: &str) -> Vec<Vec<u8>> {
    let mut outputs = Vec::new();
    for stage in PATCHING_STAGES {
        stream = succeeded(pipe_into(stage, root, &stream), &format!("{what}: {stage}"));
        outputs.push(stream.clone());
    }
    outputs
}

/// `from`'s files, and of its store only what the agent and the user wrote ([`INPUTS`]).
fn copy_sources(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).expect("read") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_name() == ".tldrgraph" {
            fs::create_dir_all(&target).expect("mkdir");
            for name in INPUTS {
                if entry.path().join(name).is_file() {
                    fs::copy(entry.path().join(name), target.join(name)).expect("copy");
                }
            }
        } else if entry.file_type().expect("type").is_dir() {
            fs::create_dir_all(&target).expect("mkdir");
            copy_sources(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Runs `tg-extract --patch` in `root`.
fn extract_patch(root: &Path) -> Vec<u8> {
    succeeded(
        run("tg-extract", root, &["--patch", "."]),
        "tg-extract --patch",
    )
}

/// Runs `tg-extract --patch | tg-classify` in `root`: (the extraction's output, tg-classify's).
fn patch_through_classify(root: &Path) -> (Vec<u8>, Output) {
    let patch = extract_patch(root);
    let classified = pipe_into("tg-classify", root, &patch);
    (patch, classified)
}

/// Body edits, an appended function and its removal, each applied to the state the run
/// before left (a whole run first, then patches in a row, an interface edit's whole stream in
/// between): each patching stage's patch, applied to its previous output, gives a whole run's
/// bytes, and the artifacts are a whole run's.
#[test]
fn each_stage_s_patch_applied_to_its_previous_output_gives_a_whole_run_s_bytes() {
    let repo = layered_fixture("python");
    let root = repo.path();
    // Intents an agent wrote, one of them for a function an edit below changes (it goes stale).
    let (payload, _) = init_json(root, &[]);
    assert_eq!(payload["status"], "needs_confirmation", "{payload}");
    let described = ["pkg/api.py::request", "pkg/models.py::Model.validate"].map(String::from);
    apply_intents(root, &described);
    let stream = succeeded(run("tg-extract", root, &["."]), "tg-extract");
    assert!(header_of(&stream)["fingerprint"].is_string());
    let mut outputs = through_stages(root, stream, "first");
    for state in ["classify.state", "plan.state", "enrich.state"] {
        assert!(root.join(".tldrgraph/cache").join(state).is_file());
    }
    // A call within a file, a function appended and taken away again, an import (the whole
    // stream), then a body edit after it.
    let appended = "\n\ndef patched_late():\n    return 1\n";
    let append = |root: &Path| {
        let before = fs::read_to_string(root.join("pkg/util.py")).expect("read");
        fs::write(root.join("pkg/util.py"), format!("{before}{appended}")).expect("write");
    };
    type Step<'a> = (&'a str, Box<dyn Fn(&Path) + 'a>, bool);
    let steps: Vec<Step> = vec![
        (
            "a call added",
            Box::new(|root| edit(root, "pkg/api.py", "    h()\n", "    h()\n    load()\n")),
            true,
        ),
        ("a function appended", Box::new(append), true),
        (
            "the call removed",
            Box::new(|root| edit(root, "pkg/api.py", "    load()\n", "")),
            true,
        ),
        (
            "the function removed",
            Box::new(|root| edit(root, "pkg/util.py", appended, "")),
            true,
        ),
        (
            "an import added",
            Box::new(|root| {
                edit(
                    root,
                    "pkg/models.py",
                    "class Base:\n",
                    "import os\n\n\nclass Base:\n",
                )
            }),
            false,
        ),
        (
            "a call after it",
            Box::new(|root| {
                let call = "        self.check()\n        return self.save()\n";
                edit(root, "pkg/models.py", "        return self.save()\n", call)
            }),
            true,
        ),
    ];
    for (step, make_edit, patched) in steps {
        make_edit(root);
        let extracted = extract_patch(root);
        let is_patch = header_of(&extracted).get("patch").is_some();
        assert_eq!(is_patch, patched, "step {step}: a patch");
        let written = through_stages(root, extracted, step);
        let (whole, whole_artifacts) = whole_run(root);
        for (at, stage) in PATCHING_STAGES.iter().enumerate() {
            outputs[at] = match is_patch {
                true => {
                    assert!(header_of(&written[at]).get("patch").is_some(), "{stage}");
                    apply_patch(&outputs[at], &written[at])
                }
                false => written[at].clone(),
            };
            assert_eq!(
                String::from_utf8_lossy(&outputs[at]),
                String::from_utf8_lossy(&whole[at]),
                "step {step}: {stage}"
            );
        }
        assert_eq!(artifacts(root), whole_artifacts, "step {step}: artifacts");
        assert_eq!(whole_artifacts.len(), ARTIFACTS.len());
    }
    let text = String::from_utf8_lossy(&outputs[2]);
    assert!(text.contains(&tg_integration::test_intent("pkg/api.py::request")));
    assert!(
        text.contains("\"violation\":true"),
        "the fixture's config is broken somewhere, so the marks are exercised"
    );
}

/// A patch whose base is not the last stream classified (the same patch given twice), or one
/// that comes after what the config says of layers changed, is refused: exit 76, nothing on
/// stdout, the artifacts as they were. A comment or the `plan:` section changes no layer: the
/// patch then applies.
#[test]
fn a_patch_of_another_stream_or_config_is_refused_and_nothing_is_written() {
    let repo = layered_fixture("python");
    let root = repo.path();
    let stream = succeeded(run("tg-extract", root, &["."]), "tg-extract");
    succeeded(pipe_into("tg-classify", root, &stream), "tg-classify");
    edit(root, "pkg/api.py", "    h()\n", "    h()\n    load()\n");
    let (patch, classified) = patch_through_classify(root);
    succeeded(classified, "the first patch");
    let before = artifacts(root);
    let again = pipe_into("tg-classify", root, &patch);
    assert_eq!(again.status.code(), Some(76), "the same patch twice");
    assert!(again.stdout.is_empty());
    assert!(String::from_utf8_lossy(&again.stderr).contains("the patch's base"));
    assert_eq!(artifacts(root), before);

    edit(root, "pkg/api.py", "    load()\n", "");
    let config = root.join(".tldrgraph/layers.config.yaml");
    let text = fs::read_to_string(&config).expect("config");
    let budget = text.replace("max_symbols: 5", "max_symbols: 6");
    assert_ne!(budget, text);
    fs::write(&config, format!("{budget}# edited\n")).expect("config");
    let (_, classified) = patch_through_classify(root);
    succeeded(classified, "after a comment and the plan's budget");

    edit(root, "pkg/api.py", "    h()\n", "    h()\n    load()\n");
    let before = artifacts(root);
    let allowed = budget.replace("may_depend_on: [api]", "may_depend_on: [api, models]");
    assert_ne!(allowed, budget);
    fs::write(&config, allowed).expect("config");
    let (_, classified) = patch_through_classify(root);
    assert_eq!(classified.status.code(), Some(76), "after a config edit");
    assert!(classified.stdout.is_empty());
    assert!(String::from_utf8_lossy(&classified.stderr).contains("layers config"));
    assert_eq!(artifacts(root), before);
}

/// tg-enrich applies a patch only where a run writes no batch: approved candidates waiting
/// for an intent (their batch names neighbours its state does not keep) mean the whole
/// stream, and so does a patch after the intents changed.
#[test]
fn tg_enrich_refuses_a_patch_while_approved_candidates_wait_or_after_intents_changed() {
    let repo = layered_fixture("python");
    let root = repo.path();
    let (payload, _) = init_json(root, &["--yes"]);
    assert_eq!(payload["status"], "needs_enrichment", "{payload}");
    let stream = succeeded(run("tg-extract", root, &["."]), "tg-extract");
    through_stages(root, stream, "whole");
    edit(root, "pkg/api.py", "    h()\n", "    h()\n    load()\n");
    let mut stream = extract_patch(root);
    for stage in ["tg-classify", "tg-plan"] {
        stream = succeeded(pipe_into(stage, root, &stream), stage);
    }
    let refused = pipe_into("tg-enrich", root, &stream);
    assert_eq!(refused.status.code(), Some(76));
    assert!(refused.stdout.is_empty());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("wait for an intent"), "{message}");

    // The batch answered: the intents changed since the state's stream.
    let ids: Vec<String> = (payload["batch"].as_array().expect("a batch").iter())
        .map(|item| item["id"].as_str().expect("an id").to_string())
        .collect();
    apply_intents(root, &ids);
    let refused = pipe_into("tg-enrich", root, &stream);
    assert_eq!(refused.status.code(), Some(76));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("intents"), "{message}");
}

/// A stage whose records depend on its own settings names its output as another stream: after
/// the config changed and only tg-classify saw the new one (`tldrgraph check` runs `tg-extract
/// | tg-classify`), tg-plan refuses a patch of what tg-classify now writes, instead of applying
/// it to a state of nodes in their old layers.
#[test]
fn a_stage_after_one_whose_settings_changed_refuses_the_patch() {
    let repo = layered_fixture("python");
    let root = repo.path();
    let stream = succeeded(run("tg-extract", root, &["."]), "tg-extract");
    through_stages(root, stream.clone(), "whole");
    let config = root.join(".tldrgraph/layers.config.yaml");
    let text = fs::read_to_string(&config).expect("config");
    let moved = text.replace(
        "paths: [\"pkg/models.py\"]",
        "paths: [\"pkg/models.py\", \"pkg/util.py\"]",
    );
    assert_ne!(moved, text);
    fs::write(&config, moved).expect("config");
    succeeded(
        pipe_into("tg-classify", root, &stream),
        "tg-classify, new config",
    );
    edit(root, "pkg/api.py", "    h()\n", "    h()\n    load()\n");
    let (_, classified) = patch_through_classify(root);
    let classified = succeeded(classified, "tg-classify on the patch");
    let refused = pipe_into("tg-plan", root, &classified);
    assert_eq!(refused.status.code(), Some(76));
    assert!(refused.stdout.is_empty());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("the patch's base"), "{message}");
}

/// What tg-extract never writes is refused or not kept: a patch that drops an edge whose
/// source is in no file it replaces (tg-plan exits 76), and a stream with an edge to a node
/// it does not hold (no state is kept: the edge would stay unmarked when its node arrives).
#[test]
fn edges_outside_a_patch_s_files_or_to_no_node_are_not_patched() {
    let repo = layered_fixture("python");
    let root = repo.path();
    let stream = succeeded(run("tg-extract", root, &["."]), "tg-extract");
    through_stages(root, stream.clone(), "whole");
    let text = String::from_utf8(stream.clone()).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    let edge = (lines.iter())
        .find(|line| line.starts_with("{\"type\":\"edge\"") && line.contains("\"calls\""))
        .expect("a call edge");
    let tail: Vec<&str> = (lines.iter())
        .skip_while(|line| !line.starts_with("{\"type\":\"edge\""))
        .skip_while(|line| line.starts_with("{\"type\":\"edge\""))
        .copied()
        .collect();
    let fingerprint = header_of(&stream)["fingerprint"].clone();
    let header = serde_json::json!({"type": "header", "schema": "1.0",
        "producer": header_of(&stream)["producer"], "root": ".",
        "patch": {"base": fingerprint, "result": "made-by-hand"}});
    let patch = format!(
        "{header}\n{{\"type\":\"patch\",\"section\":\"removed\"}}\n{edge}\n\
         {{\"type\":\"patch\",\"section\":\"added\"}}\n{{\"type\":\"patch\",\"section\":\"tail\"}}\n{}\n",
        tail.join("\n")
    );
    let classified = succeeded(
        pipe_into("tg-classify", root, patch.as_bytes()),
        "tg-classify",
    );
    let refused = pipe_into("tg-plan", root, &classified);
    assert_eq!(refused.status.code(), Some(76));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("not a node of a file it replaces"),
        "{message}"
    );

    let dangling = text.replacen(
        edge,
        &format!(
            "{edge}\n{}",
            edge.replacen("\"dst\":\"", "\"dst\":\"pkg/nowhere.py::", 1)
        ),
        1,
    );
    assert_ne!(dangling, text);
    through_stages(root, dangling.into_bytes(), "dangling");
    for state in ["classify.state", "plan.state"] {
        assert!(
            !root.join(".tldrgraph/cache").join(state).exists(),
            "{state}"
        );
    }
}
