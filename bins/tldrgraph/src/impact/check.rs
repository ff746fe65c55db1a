//! `tldrgraph check`: the layering violations of a tree (edges that break `may_depend_on`),
//! or only those a change introduced, in the formats gates and code-scanning tools read.

use super::snapshot::Snapshot;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tg_shared::record::Edge;

/// The SARIF rule every finding is reported under.
const RULE: &str = "tldrgraph/layering";

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Violation {
    pub src: String,
    pub dst: String,
    /// `calls`, `imports`, `includes` or `inherits`.
    pub kind: String,
    pub file: String,
    pub line: u32,
    pub src_layer: String,
    pub dst_layer: String,
}

impl Violation {
    pub fn message(&self) -> String {
        format!(
            "layer `{}` may not depend on layer `{}`: {} {} {}",
            self.src_layer, self.dst_layer, self.src, self.kind, self.dst
        )
    }
}

/// The violating edges of `after`, minus those `before` already had (by source, target and
/// kind), sorted by file and line.
pub fn violations(after: &Snapshot, before: Option<&Snapshot>) -> Vec<Violation> {
    let key = |e: &Edge| (e.src.clone(), e.dst.clone(), e.kind);
    let old: BTreeSet<_> = before
        .map(|b| b.violations.iter().map(key).collect())
        .unwrap_or_default();
    let layer = |id: &str| {
        after
            .get(id)
            .and_then(|n| n.layer())
            .unwrap_or("-")
            .to_string()
    };
    let mut found: Vec<Violation> = after
        .violations
        .iter()
        .filter(|e| !old.contains(&key(e)))
        .map(|e| Violation {
            src: e.src.clone(),
            dst: e.dst.clone(),
            kind: e.kind.as_str().into(),
            file: after.get(&e.src).map_or_else(
                || e.src.split("::").next().unwrap_or("").to_string(),
                |n| n.file().to_string(),
            ),
            line: e.line,
            src_layer: layer(&e.src),
            dst_layer: layer(&e.dst),
        })
        .collect();
    found.sort_by(|a, b| (&a.file, a.line, &a.src, &a.dst).cmp(&(&b.file, b.line, &b.src, &b.dst)));
    found.dedup_by(|a, b| a.src == b.src && a.dst == b.dst && a.kind == b.kind);
    found
}

/// One line per violation, `file:line: message`, then a count.
pub fn text(found: &[Violation], scope: &str) -> String {
    let mut out = String::new();
    for v in found {
        out.push_str(&format!("{}:{}: {}\n", v.file, v.line, v.message()));
    }
    out.push_str(&format!(
        "{} {scope}\n",
        plural(found.len(), "layering violation")
    ));
    out
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// GitHub Actions workflow commands: each violation an `::error` annotation on its line.
pub fn github(found: &[Violation], scope: &str) -> String {
    let mut out = String::new();
    for v in found {
        out.push_str(&format!(
            "::error file={},line={},title=Layering violation::{}\n",
            escape_property(&v.file),
            v.line,
            escape_data(&v.message())
        ));
    }
    out.push_str(&format!(
        "{} {scope}\n",
        plural(found.len(), "layering violation")
    ));
    out
}

/// The escapes GitHub's workflow commands need in a message.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// ... and in a property value.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A SARIF 2.1.0 log with one run of tldrgraph, one result per violation.
pub fn sarif(found: &[Violation]) -> Value {
    let results: Vec<Value> = found
        .iter()
        .map(|v| {
            json!({
                "ruleId": RULE,
                "level": "error",
                "message": {"text": v.message()},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": v.file, "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": v.line.max(1)},
                    },
                    "logicalLocations": [{"fullyQualifiedName": v.src}],
                }],
                "partialFingerprints": {
                    "tldrgraphEdge/v1": tg_shared::hash::content_hash(format!("{}\n{}\n{}", v.src, v.dst, v.kind).as_bytes()),
                },
                "properties": {"sourceLayer": v.src_layer, "targetLayer": v.dst_layer, "kind": v.kind, "target": v.dst},
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "tldrgraph",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": [{
                    "id": RULE,
                    "name": "LayeringViolation",
                    "shortDescription": {"text": "A dependency the layers config forbids"},
                    "fullDescription": {"text": "An edge (call, import, include or inheritance) from a layer to a layer its `may_depend_on` in .tldrgraph/layers.config.yaml does not list."},
                    "defaultConfiguration": {"level": "error"},
                }],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository root"}}},
            "results": results,
        }],
    })
}
