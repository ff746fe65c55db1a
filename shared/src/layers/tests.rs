use super::*;
use crate::record::NodeKind;

fn parse_text(text: &str) -> Result<LayerConfig, ConfigError> {
    parse(Path::new(".tldrgraph/layers.config.yaml"), text)
}

fn node<'a>(id: &'a str, kind: NodeKind, name: &'a str) -> NodeView<'a> {
    let file = id.split("::").next().unwrap_or(id);
    NodeView {
        id,
        kind,
        name,
        file,
    }
}

fn layer_of(config: &LayerConfig, view: &NodeView) -> String {
    config.layers[config.classify(view)].id.clone()
}

const NATIVE: &str = r#"version: 1
default_layer: shared
layers:
  - id: shared
    name: Shared
    order: 99
  - id: api
    name: HTTP API
    order: 1
    paths: ["src/app/api/**", "!**/tests/**"]
    may_depend_on: [core]
  - id: handlers
    name: Handlers
    order: 2
    symbols: ["*Handler"]
    kinds: [class]
  - id: core
    name: Core
    order: 3
    paths: src/core
"#;

#[test]
fn native_config_classifies_by_order_with_excludes_symbols_and_kinds() {
    let config = parse_text(NATIVE).unwrap();
    assert_eq!(config.format, Format::Native);
    let ids: Vec<&str> = config.layers.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, ["api", "handlers", "core", "shared"]);
    let f = NodeKind::Function;
    assert_eq!(
        layer_of(&config, &node("src/app/api/v1/users.py::get", f, "get")),
        "api"
    );
    assert_eq!(
        layer_of(&config, &node("src/app/api/tests/t.py::test", f, "test")),
        "shared"
    );
    assert_eq!(
        layer_of(
            &config,
            &node("src/x.py::UserHandler", NodeKind::Class, "UserHandler")
        ),
        "handlers"
    );
    // kinds must hold too: a function named *Handler is not a handler class.
    assert_eq!(
        layer_of(&config, &node("src/x.py::makeHandler", f, "makeHandler")),
        "shared"
    );
    // A plain directory path matches what is below it, and only at that path.
    assert_eq!(layer_of(&config, &node("src/core/a.py::f", f, "f")), "core");
    assert_eq!(
        layer_of(&config, &node("lib/src/core/a.py::f", f, "f")),
        "shared"
    );
    // Qualified names are matched by `symbols` too.
    let method = node("src/m.py::UserHandler.get", NodeKind::Method, "get");
    assert_eq!(layer_of(&config, &method), "shared");
    let api = &config.layers[config.index_of("api").unwrap()];
    assert!(api.forbids("shared"));
    assert!(!api.forbids("core"));
    assert!(!api.forbids("api"));
    assert!(!config.layers[config.index_of("core").unwrap()].forbids("api"));
}

fn error_of(text: &str) -> ConfigError {
    parse_text(text).unwrap_err()
}

#[test]
fn unknown_key_names_its_position_and_the_nearest_key() {
    let err = error_of(&NATIVE.replace("    paths: src/core", "    pathz: src/core"));
    assert_eq!(err.message, "unknown key `pathz`; did you mean `paths`?");
    assert_eq!((err.line, err.column), (20, 5), "{err}");
    assert!(err.hint.contains("may_depend_on"), "{}", err.hint);
    assert!(err
        .to_string()
        .starts_with(".tldrgraph/layers.config.yaml:20:5: unknown key"));
}

#[test]
fn missing_layer_references_are_located_and_suggested() {
    let err = error_of(&NATIVE.replace("[core]", "[cor]"));
    assert_eq!(
        err.message,
        "`may_depend_on` names layer `cor`, which is not defined"
    );
    assert_eq!((err.line, err.column), (11, 21));
    assert!(err.hint.starts_with("did you mean `core`?"), "{}", err.hint);
    let err = error_of(&NATIVE.replace("default_layer: shared", "default_layer: common"));
    assert_eq!((err.line, err.column), (2, 16));
    assert!(err.message.contains("`common`"), "{}", err.message);
}

#[test]
fn duplicates_bad_globs_kinds_and_syntax_are_errors_with_positions() {
    let err = error_of(&NATIVE.replace("id: core", "id: api"));
    assert_eq!(err.message, "layer id `api` is used twice");
    assert_eq!(err.line, 17);
    let err = error_of(&NATIVE.replace("order: 3", "order: 2"));
    assert!(
        err.message.starts_with("order 2 is used by two layers"),
        "{}",
        err.message
    );
    assert_eq!(err.line, 19);
    let err = error_of(&NATIVE.replace("\"src/app/api/**\"", "\"src/[app\""));
    assert!(
        err.message.starts_with("invalid glob \"src/[app\""),
        "{}",
        err.message
    );
    assert_eq!(err.line, 10);
    let err = error_of(&NATIVE.replace("kinds: [class]", "kinds: [clas]"));
    assert_eq!(err.message, "`clas` is not a node kind");
    assert!(err.hint.starts_with("did you mean `class`?"));
    assert_eq!((err.line, err.column), (16, 13));
    let err = error_of("version: 1\nlayers: [\n");
    assert!(err.line >= 2, "{err}");
    let err = error_of(&NATIVE.replace("version: 1\n", ""));
    assert!(
        err.message.contains("missing field `version`"),
        "{}",
        err.message
    );
    assert!(err.hint.contains("version: 1"), "{}", err.hint);
    let err = error_of(&NATIVE.replace("order: 99", "order: last"));
    assert_eq!(err.line, 6, "{err}");
    let err = error_of(&NATIVE.replace("version: 1", "version: 2"));
    assert_eq!(
        (err.line, err.column, err.message.as_str()),
        (1, 10, "unsupported config version 2")
    );
}

const ORIGINAL: &str = r#"{"utility_id": "shared", "layers": [
  {"id": "l1", "name": "Layer 1: src", "order": 1, "description": "code under src/",
   "rules": [{"path_regex": "^SRC/", "exclude_file": ["_test"]}, {"label_ends_with": ["Handler"]}]},
  {"id": "l2", "name": "Layer 2: methods", "order": 2, "rules": [{"label_contains": [".get"], "type_in": "method"}]},
  {"id": "shared", "name": "Shared", "order": 3, "description": "everything else", "rules": []}]}"#;

#[test]
fn original_format_is_read_with_its_semantics() {
    let config = parse_text(ORIGINAL).unwrap();
    assert_eq!(config.format, Format::Original);
    let f = NodeKind::Function;
    assert_eq!(layer_of(&config, &node("src/a.py::f", f, "f")), "l1");
    assert_eq!(
        layer_of(&config, &node("src/a_test.py::f", f, "f")),
        "shared"
    );
    // Rules in a layer are OR-ed: the second rule catches this one outside src/.
    assert_eq!(
        layer_of(
            &config,
            &node("lib/h.py::UserHandler", NodeKind::Class, "UserHandler")
        ),
        "l1"
    );
    // Positive keys inside a rule are OR-ed: either the label or the kind.
    assert_eq!(
        layer_of(&config, &node("lib/h.py::A.post", NodeKind::Method, "post")),
        "l2"
    );
    assert_eq!(
        layer_of(&config, &node("lib/h.py::get", f, "get")),
        "shared"
    );
    assert_eq!(
        original::label(&node("a.py::A.get", NodeKind::Method, "get")),
        ".get()"
    );
}

#[test]
fn original_format_errors_are_clear() {
    let err = error_of(&ORIGINAL.replace("label_ends_with", "label_suffix"));
    assert!(
        err.message.starts_with("unknown key `label_suffix`"),
        "{}",
        err.message
    );
    assert!(err.hint.contains("label_ends_with"), "{}", err.hint);
    let err = error_of(&ORIGINAL.replace("^SRC/", "^(src"));
    assert!(
        err.message
            .starts_with("invalid regex \"^(src\" in `path_regex`"),
        "{}",
        err.message
    );
    assert_eq!(err.line, 3);
    let err = error_of(&ORIGINAL.replace("\"utility_id\": \"shared\"", "\"utility_id\": \"misc\""));
    assert!(
        err.message.contains("`utility_id` names layer `misc`"),
        "{}",
        err.message
    );
    assert_eq!(err.line, 1);
}

#[test]
fn nearest_only_suggests_plausible_typos() {
    let keys: Vec<String> = ["paths", "symbols", "kinds"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(nearest("symbol", &keys).as_deref(), Some("symbols"));
    assert_eq!(nearest("colour", &keys), None);
}

#[test]
fn a_layer_may_declare_a_role_and_the_config_may_exclude_paths() {
    let text = "version: 1\ndefault_layer: shared\nexclude: [\"vendor/**\", \"*.min.py\"]\nlayers:\n  - id: tests\n    name: Tests\n    order: 1\n    paths: [\"qa/**\"]\n    role: test\n  - id: shared\n    name: Shared\n    order: 99\n";
    let config = parse_text(text).expect("valid");
    assert_eq!(config.exclude, vec!["vendor/**", "*.min.py"]);
    assert_eq!(config.layers[0].role, Some(Role::Test));
    assert_eq!(config.layers[1].role, None);

    let typo = parse_text(&text.replace("role: test", "role: tests")).expect_err("invalid");
    assert_eq!(
        (typo.line, typo.message.as_str()),
        (9, "`tests` is not a role")
    );
    assert!(
        typo.hint.starts_with("did you mean `test`?"),
        "{}",
        typo.hint
    );

    let glob = parse_text(&text.replace("\"vendor/**\"", "\"vendor/[\"")).expect_err("invalid");
    assert_eq!(glob.line, 3, "{glob}");
    assert!(glob.message.contains("exclude"), "{glob}");
}
