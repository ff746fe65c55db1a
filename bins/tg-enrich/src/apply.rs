//! `tg-enrich --apply FILE`: the agent's answer to a `needs_enrichment` batch, checked whole
//! against the last build's graph, then stored in `.tldrgraph/intents.ndjson` in one atomic
//! write. One bad entry rejects the file, with every problem listed; nothing is half-applied.
//!
//! Accepted shapes: NDJSON (one object per line), a JSON array, `{"intents": [...]}`, or a YAML
//! list (by the `.yaml`/`.yml` extension, or when the text is not JSON). Each entry has `id` and
//! `intent`, and optionally `layer` (overrides the classifier for that symbol), `inputs` and
//! `outputs` (a string or a list of strings).

use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Read;
use std::path::Path;
use tg_shared::artifacts::{self, graph};
use tg_shared::exit;
use tg_shared::intents::{IntentStore, StoredIntent, SOURCE_AGENT};
use tg_shared::record::Record;
use tg_shared::stage::{Failure, Output};
use tg_shared::store::Store;

/// An intent is one line of prose, not an essay.
pub const MAX_INTENT_CHARS: usize = 1000;

/// One entry of the answer and where it was (`line 3`, `entry 2`).
#[derive(Debug, Clone)]
pub struct Entry {
    pub at: String,
    pub value: Value,
}

/// Splits an answer file into entries; the error names the file and the line.
pub fn parse_entries(text: &str, name: &str, yaml: bool) -> Result<Vec<Entry>, Failure> {
    let bad = |message: String| {
        Failure::new(exit::DATA, format!("{name}: {message}"))
            .with_hint("give NDJSON, a JSON array or a YAML list of {\"id\": ..., \"intent\": ...}")
    };
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    let numbered = |values: Vec<Value>| {
        values
            .into_iter()
            .enumerate()
            .map(|(i, value)| Entry {
                at: format!("entry {}", i + 1),
                value,
            })
            .collect()
    };
    if trimmed.is_empty() {
        return Err(bad("empty: no intents to apply".into()));
    }
    if !yaml && trimmed.starts_with('[') {
        let values: Vec<Value> =
            serde_json::from_str(trimmed).map_err(|e| bad(format!("line {}: {e}", e.line())))?;
        return Ok(numbered(values));
    }
    if !yaml && trimmed.starts_with('{') {
        // A whole document first (`{"intents": [...]}` or one pretty-printed object)...
        if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
            return Ok(match value {
                Value::Object(mut map) if map.get("intents").is_some_and(Value::is_array) => {
                    match map.remove("intents") {
                        Some(Value::Array(values)) => numbered(values),
                        _ => Vec::new(),
                    }
                }
                single => vec![Entry {
                    at: "line 1".into(),
                    value: single,
                }],
            });
        }
        // ...else NDJSON, line by line.
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value: Value =
                serde_json::from_str(line).map_err(|e| bad(format!("line {}: {e}", index + 1)))?;
            entries.push(Entry {
                at: format!("line {}", index + 1),
                value,
            });
        }
        return Ok(entries);
    }
    let values: Vec<Value> = tg_shared::yaml::from_str(text).map_err(|e| {
        bad(format!(
            "line {}: {} (not JSON, and not a YAML list)",
            e.line.unwrap_or(1),
            e.message
        ))
    })?;
    Ok(numbered(values))
}

/// A string or a list of strings, as `inputs`/`outputs` may be.
fn is_text_or_texts(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Array(items) => items.iter().all(Value::is_string),
        _ => false,
    }
}

/// Which optional keys an answer entry gave (null included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Given {
    pub layer: bool,
    pub inputs: bool,
    pub outputs: bool,
}

/// Checks every entry; the intents to store, or every problem found.
pub fn validate(
    entries: &[Entry],
    nodes: &HashMap<String, String>,
    layers: &BTreeSet<String>,
) -> Result<Vec<(StoredIntent, Given)>, Vec<String>> {
    let mut problems = Vec::new();
    let mut first_at: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    for entry in entries {
        let at = &entry.at;
        let Some(map) = entry.value.as_object() else {
            problems.push(format!("{at}: not an object with \"id\" and \"intent\""));
            continue;
        };
        let Some(id) = map.get("id").and_then(Value::as_str) else {
            problems.push(format!("{at}: no \"id\" string"));
            continue;
        };
        let mut ok = true;
        let mut problem = |text: String| {
            // Escaped: an id is the agent's input, and may carry control characters.
            problems.push(format!("{at}: `{}`: {text}", id.escape_debug()));
            ok = false;
        };
        if let Some(first) = first_at.get(id) {
            problem(format!("duplicate id (first at {first})"));
        } else {
            first_at.insert(id.to_string(), at.clone());
        }
        let hash = nodes.get(id);
        if hash.is_none() {
            let hint = match nearest_id(id, nodes) {
                Some(near) => format!("; did you mean `{}`?", near.escape_debug()),
                None => String::new(),
            };
            problem(format!(
                "unknown id: no such symbol in the last build{hint}"
            ));
        }
        let intent = map.get("intent").and_then(Value::as_str).unwrap_or("");
        if let Some(text) = intent_problem(map, intent) {
            problem(text);
        }
        if let Some(text) = layer_problem(map, layers) {
            problem(text);
        }
        for key in ["inputs", "outputs"] {
            if map
                .get(key)
                .is_some_and(|v| !v.is_null() && !is_text_or_texts(v))
            {
                problem(format!("\"{key}\" must be a string or a list of strings"));
            }
        }
        if ok {
            out.push(stored(id, intent, hash.cloned().unwrap_or_default(), map));
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// What is wrong with an entry's `intent`, if anything: it must be one line of plain text.
fn intent_problem(map: &serde_json::Map<String, Value>, intent: &str) -> Option<String> {
    let paragraphs = intent
        .split('\n')
        .collect::<Vec<_>>()
        .split(|line| line.trim().is_empty())
        .filter(|p| !p.is_empty())
        .count();
    if !map.get("intent").is_some_and(Value::is_string) && map.contains_key("intent") {
        Some("\"intent\" is not a string".into())
    } else if intent.trim().is_empty() {
        Some("empty intent".into())
    } else if intent
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        Some("the intent contains control characters; give plain text".into())
    } else if paragraphs > 1 {
        Some("the intent has several paragraphs; give one line".into())
    } else if intent.chars().count() > MAX_INTENT_CHARS {
        Some(format!(
            "the intent is longer than {MAX_INTENT_CHARS} characters; give one line"
        ))
    } else {
        None
    }
}

/// What is wrong with an entry's optional `layer`: it must name a layer of the config.
fn layer_problem(
    map: &serde_json::Map<String, Value>,
    layers: &BTreeSet<String>,
) -> Option<String> {
    match map.get("layer") {
        None | Some(Value::Null) => None,
        Some(Value::String(layer)) if layers.contains(layer) => None,
        Some(Value::String(layer)) => {
            let known: Vec<&str> = layers.iter().map(String::as_str).collect();
            Some(format!(
                "unknown layer `{layer}` (layers: {})",
                known.join(", ")
            ))
        }
        Some(_) => Some("\"layer\" is not a string".into()),
    }
}

/// A checked entry as it is stored, and which optional keys it gave.
fn stored(
    id: &str,
    intent: &str,
    hash: String,
    map: &serde_json::Map<String, Value>,
) -> (StoredIntent, Given) {
    let field = |key: &str| map.get(key).filter(|v| !v.is_null()).cloned();
    let given = Given {
        layer: map.contains_key("layer"),
        inputs: map.contains_key("inputs"),
        outputs: map.contains_key("outputs"),
    };
    let intent = StoredIntent {
        id: id.to_string(),
        intent: intent.split_whitespace().collect::<Vec<_>>().join(" "),
        hash,
        source: SOURCE_AGENT.into(),
        model: None,
        layer: map.get("layer").and_then(Value::as_str).map(str::to_string),
        inputs: field("inputs"),
        outputs: field("outputs"),
    };
    (intent, given)
}

fn read_answer(file: &Path) -> Result<(String, String), Failure> {
    if file.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::new(exit::IO, format!("cannot read stdin: {e}")))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| Failure::new(exit::DATA, format!("stdin: not UTF-8 ({e})")))?;
        return Ok(("stdin".into(), text));
    }
    let name = file.display().to_string();
    let bytes = std::fs::read(file)
        .map_err(|e| Failure::new(exit::NO_INPUT, format!("cannot read {name}: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| Failure::new(exit::DATA, format!("{name}: not UTF-8 ({e})")))?;
    Ok((name, text))
}

/// The last build's hash of each symbol the entries name, and its layers' ids, read in one pass
/// over the graph. When an entry names a symbol the build does not have, every symbol's hash,
/// in a second pass, so that the error can suggest the nearest id (the graph is never held).
fn load_graph(
    store: &Store,
    entries: &[Entry],
) -> Result<(HashMap<String, String>, BTreeSet<String>), Failure> {
    let wanted: HashSet<&str> = entries
        .iter()
        .filter_map(|entry| entry.value.get("id").and_then(Value::as_str))
        .collect();
    let mut nodes = HashMap::new();
    let mut layers = BTreeSet::new();
    read_graph(store, |record| match record {
        Record::Node(node) if wanted.contains(node.id.as_str()) => {
            nodes.insert(node.id, node.hash);
        }
        Record::Layer(layer) => {
            layers.insert(layer.id);
        }
        _ => {}
    })?;
    if nodes.len() < wanted.len() {
        read_graph(store, |record| {
            if let Record::Node(node) = record {
                nodes.insert(node.id, node.hash);
            }
        })?;
    }
    Ok((nodes, layers))
}

fn read_graph(store: &Store, mut visit: impl FnMut(Record)) -> Result<(), Failure> {
    graph::for_each_record(store, |record| {
        visit(record);
        Ok(())
    })
    .map_err(|failure| match failure.code {
        exit::NO_INPUT => failure
            .with_hint("run `tldrgraph init --json` first: intents are checked against its graph"),
        _ => failure,
    })
}

/// Applies `file`; prints `{"applied": N, "changed": N, "intents": N}` on stdout.
pub fn run(store: &Store, file: &Path, quiet: bool) -> Result<(), Failure> {
    let (name, text) = read_answer(file)?;
    let yaml = matches!(
        file.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    );
    let entries = parse_entries(&text, &name, yaml)?;
    let (nodes, layers) = load_graph(store, &entries)?;
    let answers = validate(&entries, &nodes, &layers).map_err(|problems| {
        Failure::new(
            exit::DATA,
            format!(
                "{name}: {} problem(s), nothing applied: {}",
                problems.len(),
                problems.join("; ")
            ),
        )
        .with_hint("fix the entries named and apply the whole file again")
    })?;
    let path = store.path(artifacts::INTENTS);
    let _lock = store
        .lock()
        .map_err(|e| Failure::cant_write(&store.lock_path(), &e))?;
    // Read under the lock: another writer may have added intents since.
    let mut intents =
        IntentStore::load(&path).map_err(|message| Failure::new(exit::DATA, message))?;
    let mut changed = 0u64;
    let applied = answers.len() as u64;
    for (mut answer, given) in answers {
        // A key the answer leaves out keeps what was stored (an explicit null clears it).
        if let Some(previous) = intents.get(&answer.id) {
            if !given.layer {
                answer.layer = previous.layer.clone();
            }
            if !given.inputs {
                answer.inputs = previous.inputs.clone();
            }
            if !given.outputs {
                answer.outputs = previous.outputs.clone();
            }
        }
        if intents.get(&answer.id) != Some(&answer) {
            changed += 1;
        }
        intents.insert(answer);
    }
    intents
        .save(&path)
        .map_err(|e| Failure::cant_write(&path, &e))?;
    drop(_lock);
    let mut summary = Map::new();
    summary.insert("applied".into(), json!(applied));
    summary.insert("changed".into(), json!(changed));
    summary.insert("intents".into(), json!(intents.len()));
    let mut out = Output::new(None);
    out.line(&Value::Object(summary).to_string())?;
    out.finish()?;
    if !quiet {
        eprintln!(
            "tg-enrich: applied {applied} intents from {name} ({changed} new or changed); run `tldrgraph init --json` again"
        );
    }
    Ok(())
}

/// The known id nearest to a mistyped one: among the ids of the same file (`path::`), else
/// among those ending in the same name, so that edit distances are computed for a few ids,
/// not for every symbol of a large graph.
fn nearest_id(id: &str, nodes: &HashMap<String, String>) -> Option<String> {
    let file = id.split("::").next().unwrap_or(id);
    let same_file: Vec<&str> = nodes
        .keys()
        .map(String::as_str)
        .filter(|known| known.split("::").next() == Some(file))
        .collect();
    let mut candidates = same_file;
    if candidates.is_empty() {
        let name = id.rsplit(['.', ':']).next().unwrap_or(id);
        candidates = nodes
            .keys()
            .map(String::as_str)
            .filter(|known| known.rsplit(['.', ':']).next() == Some(name))
            .collect();
    }
    candidates.sort_unstable();
    tg_shared::suggest::nearest(id, &candidates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes() -> HashMap<String, String> {
        [("a.py::f", "hf"), ("a.py::g", "hg")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    fn layers() -> BTreeSet<String> {
        ["core".to_string()].into_iter().collect()
    }

    #[test]
    fn every_shape_parses_to_the_same_entries() {
        let ndjson =
            "{\"id\":\"a.py::f\",\"intent\":\"F.\"}\n\n{\"id\":\"a.py::g\",\"intent\":\"G.\"}\n";
        let array = r#"[{"id":"a.py::f","intent":"F."},{"id":"a.py::g","intent":"G."}]"#;
        let wrapped =
            r#"{"intents":[{"id":"a.py::f","intent":"F."},{"id":"a.py::g","intent":"G."}]}"#;
        let yaml = "- id: a.py::f\n  intent: F.\n- id: a.py::g\n  intent: G.\n";
        for (text, is_yaml) in [
            (ndjson, false),
            (array, false),
            (wrapped, false),
            (yaml, true),
        ] {
            let entries = parse_entries(text, "t", is_yaml).unwrap();
            let stored = validate(&entries, &nodes(), &layers()).unwrap();
            let got: Vec<(&str, &str, &str)> = stored
                .iter()
                .map(|(s, _)| (s.id.as_str(), s.intent.as_str(), s.hash.as_str()))
                .collect();
            assert_eq!(
                got,
                [("a.py::f", "F.", "hf"), ("a.py::g", "G.", "hg")],
                "{text}"
            );
        }
        assert_eq!(
            parse_entries("[\n{\"id\":1},\n", "t", false)
                .unwrap_err()
                .code,
            65
        );
        let err = parse_entries("{\"id\":\"x\"}\n{oops\n", "ans.ndjson", false).unwrap_err();
        assert!(
            err.message.starts_with("ans.ndjson: line 2:"),
            "{}",
            err.message
        );
    }

    #[test]
    fn an_unknown_id_suggests_the_nearest_known_one() {
        let text = r#"[{"id":"a.py::ff","intent":"F."},{"id":"b.py::g","intent":"G."}]"#;
        let entries = parse_entries(text, "t", false).unwrap();
        let all = validate(&entries, &nodes(), &layers())
            .unwrap_err()
            .join("\n");
        // A typo within the file, and the right name in the wrong file.
        assert!(
            all.contains(
                "`a.py::ff`: unknown id: no such symbol in the last build; did you mean `a.py::f`?"
            ),
            "{all}"
        );
        assert!(
            all.contains(
                "`b.py::g`: unknown id: no such symbol in the last build; did you mean `a.py::g`?"
            ),
            "{all}"
        );
    }

    #[test]
    fn every_problem_is_listed_and_nothing_passes() {
        let text = r#"[
            {"id":"a.py::f","intent":"F."},
            {"id":"a.py::nope","intent":"N."},
            {"id":"a.py::f","intent":"again"},
            {"id":"a.py::g","intent":"  "},
            {"id":"a.py::g","intent":"One.\n\nTwo."},
            {"id":"a.py::g","intent":"G.","layer":"web","inputs":3}
        ]"#;
        let entries = parse_entries(text, "t", false).unwrap();
        let problems = validate(&entries, &nodes(), &layers()).unwrap_err();
        let all = problems.join("\n");
        for expected in [
            "entry 2: `a.py::nope`: unknown id",
            "entry 3: `a.py::f`: duplicate id (first at entry 1)",
            "entry 4: `a.py::g`: empty intent",
            "entry 5: `a.py::g`: duplicate id (first at entry 4)",
            "entry 5: `a.py::g`: the intent has several paragraphs",
            "entry 6: `a.py::g`: unknown layer `web` (layers: core)",
            "entry 6: `a.py::g`: \"inputs\" must be a string or a list of strings",
        ] {
            assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
        }
    }

    #[test]
    fn an_intent_over_two_lines_is_one_paragraph_made_one_line() {
        let entries = parse_entries(
            r#"[{"id":"a.py::f","intent":"Loads\n  the graph.","layer":"core","outputs":["Graph"]}]"#,
            "t",
            false,
        )
        .unwrap();
        let stored = validate(&entries, &nodes(), &layers()).unwrap();
        let (stored, given) = &stored[0];
        assert_eq!(stored.intent, "Loads the graph.");
        assert_eq!(stored.layer.as_deref(), Some("core"));
        assert_eq!(stored.outputs, Some(json!(["Graph"])));
        assert_eq!(
            (given.layer, given.inputs, given.outputs),
            (true, false, true)
        );
    }
}
