#!/usr/bin/env node
// Ground truth for TypeScript/JavaScript declarations and calls, from the TypeScript compiler API.
//
//   usage: node bench/accuracy/ts_oracle.mjs CORPUS_ROOT > truth.json
//   env:   TG_TS_PREFIX  where deps_ts.sh installed typescript (default ~/.cache/tldrgraph-accuracy/ts)
//
// One Program over every .ts/.tsx/.mts/.cts/.js/.jsx/.mjs/.cjs file under the root (.d.ts included;
// node_modules and dot-directories skipped; symlinks not followed), with allowJs, checkJs off,
// jsx preserve, noEmit, skipLibCheck, moduleResolution bundler, no @types. The corpus' tsconfig.json
// (root only, `extends` followed to local files) gives baseUrl/paths; workspace packages (root
// package.json `workspaces`, or pnpm-workspace.yaml) are mapped by name to their source entry through
// `paths`, so cross-package imports land on sources, not on a removed build/.
//
// Output (stdout, one JSON document): {root, typescript, files, declarations, calls, unjudged,
// summary}. `unjudged` lists the call sites the checker resolves to nothing, to several declarations,
// or to an uncounted one (an interface member, a parameter, an anonymous function): {file, line,
// caller, name, via, reason}; ts_calls.py uses them to tell edges it cannot judge.
// A call's line is the line of the callee's last name (`a.b\n  .c()`: the line of `c`).
// The counted declarations, their kinds, qualnames, `#k` repeats and line ranges follow the stream
// spec of the TypeScript extractor; the rules are in the comments of `collect` below. A call is a
// CallExpression, NewExpression or Decorator whose target the checker resolves to a counted
// declaration of the corpus (getResolvedSignature(node).declaration; else the symbol at the callee,
// aliases resolved; overload signatures mapped to the implementation; `new C()` and `super()` to the
// class). Diagnostics and a summary go to stderr. Exit 0, or 2 when typescript is missing or the root
// cannot be read.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const SOURCE_EXT = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
const CALLER_KINDS = new Set(["function", "method", "class"]);

function loadTypescript() {
  const prefix = process.env.TG_TS_PREFIX ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "tldrgraph-accuracy", "ts");
  try {
    return createRequire(path.join(prefix, "package.json"))("typescript");
  } catch {
    console.error(`ts_oracle: no typescript under ${prefix} (run bash bench/accuracy/deps_ts.sh)`);
    process.exit(2);
  }
}

// ------------------------------------------------------------------------------------------------
// Corpus files and compiler options
// ------------------------------------------------------------------------------------------------

function walk(root) {
  const out = [];
  const rec = (dir) => {
    let entries;
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.isDirectory()) {
        if (e.name === "node_modules" || e.name.startsWith(".")) continue;
        rec(path.join(dir, e.name));
      } else if (e.isFile() && SOURCE_EXT.some((x) => e.name.endsWith(x))) {
        out.push(path.relative(root, path.join(dir, e.name)).split(path.sep).join("/"));
      }
    }
  };
  rec(root);
  return out.sort();
}

function langOf(rel) {
  return /\.(ts|tsx|mts|cts)$/.test(rel) ? "typescript" : "javascript";
}

function readJson(file) {
  try { return JSON.parse(fs.readFileSync(file, "utf8")); } catch { return null; }
}

// baseUrl and paths of ROOT/tsconfig.json, following `extends` to local files; paths made absolute.
function tsconfigPaths(ts, root, notes) {
  let file = path.join(root, "tsconfig.json");
  let baseUrl, paths, pathsDir;
  for (let hops = 0; hops < 10 && fs.existsSync(file); hops++) {
    const { config, error } = ts.readConfigFile(file, ts.sys.readFile);
    if (error || !config) { notes.push(`cannot read ${path.relative(root, file)}`); break; }
    const co = config.compilerOptions || {};
    const dir = path.dirname(file);
    if (baseUrl === undefined && typeof co.baseUrl === "string") baseUrl = path.resolve(dir, co.baseUrl);
    if (paths === undefined && co.paths && typeof co.paths === "object") { paths = co.paths; pathsDir = dir; }
    const ext = Array.isArray(config.extends) ? config.extends[0] : config.extends;
    if (typeof ext !== "string" || !ext.startsWith(".")) break;
    file = path.resolve(dir, ext.endsWith(".json") ? ext : ext + ".json");
  }
  const out = {};
  if (paths) {
    const base = baseUrl || pathsDir;
    for (const [k, vs] of Object.entries(paths)) {
      if (Array.isArray(vs)) out[k] = vs.map((v) => path.resolve(base, v));
    }
  }
  return { baseUrl, paths: out };
}

function workspaceDirs(root) {
  const pkg = readJson(path.join(root, "package.json")) || {};
  let pats = Array.isArray(pkg.workspaces) ? pkg.workspaces
    : pkg.workspaces && Array.isArray(pkg.workspaces.packages) ? pkg.workspaces.packages : [];
  const pnpm = path.join(root, "pnpm-workspace.yaml");
  if (!pats.length && fs.existsSync(pnpm)) {
    pats = fs.readFileSync(pnpm, "utf8").split("\n")
      .map((l) => l.match(/^\s*-\s*['"]?([^'"#]+?)['"]?\s*$/)).filter(Boolean).map((m) => m[1]);
  }
  const dirs = [];
  for (const p of pats) {
    if (p.startsWith("!")) continue;
    if (p.endsWith("/*") || p.endsWith("/**")) {
      const base = path.join(root, p.replace(/\/\*\*?$/, ""));
      let entries = [];
      try { entries = fs.readdirSync(base, { withFileTypes: true }); } catch { /* none */ }
      for (const e of entries) if (e.isDirectory()) dirs.push(path.join(base, e.name));
    } else {
      dirs.push(path.join(root, p));
    }
  }
  return dirs.filter((d) => fs.existsSync(path.join(d, "package.json"))).sort();
}

// Source entry of a workspace package: package.json `source`, else src/index.*, else index.*.
function sourceEntry(dir) {
  const pkg = readJson(path.join(dir, "package.json")) || {};
  const cands = [];
  if (typeof pkg.source === "string") cands.push(pkg.source);
  for (const base of ["src/index", "index", "lib/index"]) {
    for (const x of [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"]) cands.push(base + x);
  }
  for (const c of cands) {
    const f = path.join(dir, c);
    if (fs.existsSync(f)) return f;
  }
  return null;
}

function compilerOptions(ts, root, notes) {
  const { baseUrl, paths } = tsconfigPaths(ts, root, notes);
  const workspaces = [];
  for (const dir of workspaceDirs(root)) {
    const name = (readJson(path.join(dir, "package.json")) || {}).name;
    const entry = sourceEntry(dir);
    const rel = path.relative(root, dir).split(path.sep).join("/");
    if (!name) continue;
    if (!entry) { notes.push(`workspace ${rel} (${name}): no source entry found`); continue; }
    workspaces.push({ name, dir: rel, entry: path.relative(root, entry).split(path.sep).join("/") });
    if (!(name in paths)) paths[name] = [entry];
    const srcDir = fs.existsSync(path.join(dir, "src")) ? path.join(dir, "src") : dir;
    if (!(name + "/*" in paths)) paths[name + "/*"] = [path.join(srcDir, "*"), path.join(dir, "*")];
  }
  const options = {
    allowJs: true, checkJs: false, jsx: ts.JsxEmit.Preserve, noEmit: true, skipLibCheck: true,
    module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ESNext, resolveJsonModule: true, allowImportingTsExtensions: true,
    allowArbitraryExtensions: true, esModuleInterop: true, experimentalDecorators: false,
    types: [], maxNodeModuleJsDepth: 0,
  };
  if (baseUrl) options.baseUrl = baseUrl;
  if (Object.keys(paths).length) options.paths = paths;
  return { options, workspaces, baseUrl, paths };
}

// ------------------------------------------------------------------------------------------------
// Declarations
// ------------------------------------------------------------------------------------------------

function main() {
  const ts = loadTypescript();
  const rootArg = process.argv[2];
  if (!rootArg || process.argv.length > 3) {
    console.error("usage: node ts_oracle.mjs CORPUS_ROOT > truth.json");
    process.exit(2);
  }
  const root = path.resolve(rootArg);
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) {
    console.error(`ts_oracle: ${rootArg} is not a directory`);
    process.exit(2);
  }
  const t0 = Date.now();
  const notes = [];
  const rels = walk(root);
  const { options, workspaces } = compilerOptions(ts, root, notes);
  const abs = rels.map((r) => path.join(root, r));
  const program = ts.createProgram({ rootNames: abs, options });
  const checker = program.getTypeChecker();
  const tProgram = Date.now();

  const relOf = new Map();          // SourceFile -> rel path, for corpus files only
  const missing = [];
  for (let i = 0; i < rels.length; i++) {
    const sf = program.getSourceFile(abs[i]);
    if (sf) relOf.set(sf, rels[i]); else missing.push(rels[i]);
  }
  const outside = program.getSourceFiles().filter((sf) => !relOf.has(sf));

  const line = (sf, pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const K = ts.SyntaxKind;
  const strip = (e) => {
    while (e && (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) ||
                 ts.isSatisfiesExpression(e) || ts.isNonNullExpression(e))) e = e.expression;
    return e;
  };
  const isFn = (e) => !!e && (ts.isArrowFunction(e) || ts.isFunctionExpression(e));
  const hasMod = (n, kind) => !!(ts.canHaveModifiers(n) && ts.getModifiers(n)?.some((m) => m.kind === kind));
  const tokenOf = (n, sf, kind) => n.getChildren(sf).find((c) => c.kind === kind);
  const oddNames = [];
  const nameText = (nameNode, sf) => {
    if (ts.isIdentifier(nameNode) || ts.isPrivateIdentifier(nameNode)) return nameNode.text;
    if (ts.isStringLiteral(nameNode) || ts.isNumericLiteral(nameNode) ||
        ts.isNoSubstitutionTemplateLiteral(nameNode)) {
      oddNames.push(`${relOf.get(sf)}:${line(sf, nameNode.getStart(sf))} ${nameNode.getText(sf)}`);
      return nameNode.text;
    }
    oddNames.push(`${relOf.get(sf)}:${line(sf, nameNode.getStart(sf))} ${nameNode.getText(sf)}`);
    return nameNode.getText(sf);   // computed: `[Symbol.iterator]`, brackets kept
  };

  const declarations = [];
  const declOf = new Map();         // AST node -> declaration record (several nodes per record)
  const sites = [];                 // {node, sf, caller}
  const uncountedClassExpr = [];
  const stats = { string_modules: 0, global_augmentations: 0, bodiless_members: 0 };

  // Rules (the extractor's spec):
  //  function  FunctionDeclaration with a body (anonymous `export default function` = `default`);
  //            a VariableDeclaration with an Identifier name whose initializer, after stripping
  //            ( ), `as`, `satisfies` and `!`, is an ArrowFunction or FunctionExpression; in an
  //            exported module-level `const x = {...}` (same stripping), a MethodDeclaration with a
  //            body or a PropertyAssignment whose value is an arrow/function expression (`x.m`).
  //  class     ClassDeclaration (unnamed = `default`); a ClassExpression initializing a `const`.
  //  method    members of a counted class: MethodDeclaration, GetAccessor, SetAccessor, Constructor
  //            (`constructor`) with a body or `abstract`; PropertyDeclaration whose initializer is
  //            an arrow/function expression. Members of an uncounted class expression are not counted.
  //  trait     InterfaceDeclaration (members not counted); typedef TypeAliasDeclaration;
  //  enum      EnumDeclaration; mod ModuleDeclaration with an Identifier name (`a.b`: `a` and `a.b`),
  //            except `declare global`; a string-named `declare module "x"` is not counted and is
  //            transparent (its contents count at the enclosing level).
  //  qualname  enclosing counted declarations' names joined by `.` (plus the `x` of an exported
  //            object literal); `#k` on the k-th repeat of a qualname in a file, in source order;
  //            children are named from the base qualname (`f.inner`, never `f#2.inner`).
  //  lines     line_start = getStart (decorators, `export`, modifiers; not leading comments);
  //            line_end = end; const function/class: the VariableStatement when it declares one
  //            variable, else the VariableDeclaration. name_line = the name, or the `function` /
  //            `class` / `constructor` keyword when there is none.
  function collect(sf, rel) {
    const seen = new Map();
    const add = (anchors, name, kind, rangeNode, nameNode, ctx) => {
      const q = ctx.prefix ? `${ctx.prefix}.${name}` : name;
      const k = (seen.get(q) || 0) + 1;
      seen.set(q, k);
      const d = {
        file: rel, name, qualname: k > 1 ? `${q}#${k}` : q, kind,
        line_start: line(sf, rangeNode.getStart(sf)), line_end: line(sf, rangeNode.end),
        name_line: line(sf, nameNode.getStart(sf)),
      };
      Object.defineProperty(d, "base", { value: q, enumerable: false });
      for (const a of anchors) declOf.set(a, d);
      declarations.push(d);
      return d;
    };
    const inner = (d, ctx) => ({ prefix: d.base, caller: CALLER_KINDS.has(d.kind) ? d : ctx.caller });
    const kids = (n, ctx) => ts.forEachChild(n, (c) => visit(c, ctx));
    const varRange = (v) => {
      const list = v.parent;
      return ts.isVariableDeclarationList(list) && ts.isVariableStatement(list.parent) &&
        list.declarations.length === 1 ? list.parent : v;
    };
    const isConst = (v) => ts.isVariableDeclarationList(v.parent) && (v.parent.flags & ts.NodeFlags.Const) !== 0;

    function classBody(cls, d, ctx) {
      const cctx = inner(d, ctx);
      ts.forEachChild(cls, (c) => {
        if (ts.isClassElement(c)) member(c, cctx); else visit(c, cctx);
      });
    }

    function member(m, cctx) {
      if (ts.isMethodDeclaration(m) || ts.isGetAccessorDeclaration(m) || ts.isSetAccessorDeclaration(m) ||
          ts.isConstructorDeclaration(m)) {
        if (!m.body && !hasMod(m, K.AbstractKeyword)) { stats.bodiless_members++; return; }
        const ctor = ts.isConstructorDeclaration(m);
        const nameNode = ctor ? (tokenOf(m, sf, K.ConstructorKeyword) || m) : m.name;
        const name = ctor ? "constructor" : nameText(m.name, sf);
        const d = add([m], name, "method", m, nameNode, cctx);
        kids(m, inner(d, cctx));
        return;
      }
      if (ts.isPropertyDeclaration(m) && isFn(strip(m.initializer))) {
        const fn = strip(m.initializer);
        const d = add([m, fn], nameText(m.name, sf), "method", m, m.name, cctx);
        kids(m, inner(d, cctx));
        return;
      }
      visit(m, cctx);
    }

    function objectLiteral(v, obj, ctx) {
      // exported module-level const x = { m() {}, n: () => {} }: functions `x.m`, `x.n`
      const octx = { prefix: ctx.prefix ? `${ctx.prefix}.${v.name.text}` : v.name.text, caller: ctx.caller };
      const down = (e) => {
        if (e !== obj) {          // ( ), `as`, `satisfies`, `!` around the literal
          ts.forEachChild(e, (x) => (x === e.expression ? down(x) : visit(x, ctx)));
          return;
        }
        for (const p of obj.properties) {
          if (ts.isMethodDeclaration(p) && p.body) {
            const d = add([p], nameText(p.name, sf), "function", p, p.name, octx);
            kids(p, inner(d, octx));
          } else if (ts.isPropertyAssignment(p) && isFn(strip(p.initializer))) {
            const fn = strip(p.initializer);
            const d = add([p, fn], nameText(p.name, sf), "function", p, p.name, octx);
            kids(p, inner(d, octx));
          } else {
            visit(p, ctx);
          }
        }
      };
      ts.forEachChild(v, (c) => (c === v.initializer ? down(c) : visit(c, ctx)));
    }

    function visit(n, ctx) {
      switch (n.kind) {
        case K.FunctionDeclaration: {
          if (!n.body) return;                         // overload signature, `declare function`
          const d = add([n], n.name ? n.name.text : "default", "function", n,
                        n.name || tokenOf(n, sf, K.FunctionKeyword) || n, ctx);
          kids(n, inner(d, ctx));
          return;
        }
        case K.VariableDeclaration: {
          if (ts.isIdentifier(n.name) && n.initializer) {
            const init = strip(n.initializer);
            if (isFn(init)) {
              const d = add([n, init], n.name.text, "function", varRange(n), n.name, ctx);
              kids(n, inner(d, ctx));
              return;
            }
            if (init && ts.isClassExpression(init) && isConst(n)) {
              const d = add([n, init], n.name.text, "class", varRange(n), n.name, ctx);
              const down = (e) => (e === init ? classBody(init, d, ctx)
                : ts.forEachChild(e, (x) => (x === e.expression ? down(x) : visit(x, ctx))));
              ts.forEachChild(n, (c) => (c === n.initializer ? down(c) : visit(c, ctx)));
              return;
            }
            const st = n.parent?.parent;
            if (init && ts.isObjectLiteralExpression(init) && isConst(n) && st && ts.isVariableStatement(st) &&
                ts.isSourceFile(st.parent) && hasMod(st, K.ExportKeyword)) {
              objectLiteral(n, init, ctx);
              return;
            }
          }
          break;
        }
        case K.ClassDeclaration: {
          const d = add([n], n.name ? n.name.text : "default", "class", n,
                        n.name || tokenOf(n, sf, K.ClassKeyword) || n, ctx);
          classBody(n, d, ctx);
          return;
        }
        case K.ClassExpression:
          uncountedClassExpr.push(`${rel}:${line(sf, n.getStart(sf))}`);
          break;
        case K.InterfaceDeclaration:
          add([n], n.name.text, "trait", n, n.name, ctx);
          return;
        case K.TypeAliasDeclaration:
          add([n], n.name.text, "typedef", n, n.name, ctx);
          return;
        case K.EnumDeclaration: {
          const d = add([n], n.name.text, "enum", n, n.name, ctx);
          kids(n, inner(d, ctx));
          return;
        }
        case K.ModuleDeclaration: {
          if (ts.isIdentifier(n.name) && !(n.flags & ts.NodeFlags.GlobalAugmentation)) {
            const d = add([n], n.name.text, "mod", n, n.name, ctx);
            kids(n, inner(d, ctx));
            return;
          }
          if (n.flags & ts.NodeFlags.GlobalAugmentation) stats.global_augmentations++;
          else stats.string_modules++;
          break;
        }
        case K.CallExpression:
        case K.NewExpression:
        case K.Decorator:
          sites.push({ node: n, sf, rel, caller: ctx.caller });
          break;
      }
      kids(n, ctx);
    }
    visit(sf, { prefix: "", caller: null });
  }

  for (const [sf, rel] of relOf) collect(sf, rel);

  // ----------------------------------------------------------------------------------------------
  // Calls
  // ----------------------------------------------------------------------------------------------

  // A declaration node -> the counted declaration it stands for (overloads -> implementation,
  // `new`: constructor -> class), or null.
  const implOf = (n) => {
    if (declOf.has(n)) return declOf.get(n);
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && !n.body && n.name) {
      const sym = checker.getSymbolAtLocation(n.name);
      for (const d of sym?.declarations || []) if (declOf.has(d)) return declOf.get(d);
    }
    if (ts.isConstructorDeclaration(n) && !n.body) {
      const impl = n.parent.members.find((m) => ts.isConstructorDeclaration(m) && m.body);
      if (impl && declOf.has(impl)) return declOf.get(impl);
    }
    return null;
  };
  const classOf = (n) => {     // for new/super: the class a declaration builds
    if (ts.isConstructorDeclaration(n)) n = n.parent;
    if (ts.isClassDeclaration(n) || ts.isClassExpression(n) || ts.isVariableDeclaration(n)) return declOf.get(n) || null;
    return null;
  };
  const calleeExpr = (e) => {
    e = strip(e);
    if (ts.isPropertyAccessExpression(e)) return e.name;
    return e;
  };
  const symbolDecls = (e) => {
    let sym = checker.getSymbolAtLocation(e);
    if (sym && (sym.flags & ts.SymbolFlags.Alias)) {
      try { sym = checker.getAliasedSymbol(sym); } catch { /* unknown alias */ }
    }
    return sym?.declarations || [];
  };
  const inCorpus = (n) => relOf.has(n.getSourceFile());

  const calls = [];
  const unjudged = [];              // sites dropped as unresolved, ambiguous or uncounted
  const drops = { unresolved: 0, external: 0, uncounted: 0, ambiguous: 0, module_loads: 0 };
  const uncountedKinds = {};
  const byVia = {};
  const unresolvedByLang = { typescript: 0, javascript: 0 };
  const dropEx = { unresolved: [], ambiguous: [] };

  for (const s of sites) {
    const n = s.node;
    const sf = s.sf;
    const isNew = ts.isNewExpression(n);
    const isSuper = ts.isCallExpression(n) && n.expression.kind === K.SuperKeyword;
    if (ts.isCallExpression(n) && (n.expression.kind === K.ImportKeyword ||
        (ts.isIdentifier(n.expression) && n.expression.text === "require" && langOf(s.rel) === "javascript"))) {
      drops.module_loads++;
      continue;
    }
    const via = isNew ? "new" : isSuper ? "super" : "call";
    // the callee's last name and its line (`a.b.c()`: `c`), for the call record and for sites
    // the checker cannot judge
    let ex = isSuper ? n.expression : strip(ts.isDecorator(n) && ts.isCallExpression(strip(n.expression))
      ? strip(n.expression).expression : n.expression);
    if (ts.isPropertyAccessExpression(ex)) ex = ex.name;
    const calleeName = ts.isIdentifier(ex) || ts.isPrivateIdentifier(ex) ? ex.text
      : ts.isElementAccessExpression(ex) && ts.isStringLiteralLike(ex.argumentExpression)
        ? ex.argumentExpression.text : isSuper ? "super" : null;
    const at = ts.isElementAccessExpression(ex) ? ex.argumentExpression : ex;
    const unjudge = (reason) => unjudged.push({
      file: s.rel, line: line(sf, at.getStart(sf)), caller: s.caller ? s.caller.qualname : "<module>",
      name: calleeName, via, reason,
    });
    let sigDecl;
    try { sigDecl = checker.getResolvedSignature(n)?.declaration; } catch { sigDecl = undefined; }
    const ce = isSuper ? n.expression : calleeExpr(n.expression);
    let target = null;
    let seenDecls = [];
    if (via === "call") {
      // A callee symbol with several callable declarations that are not one overload set (a
      // method of a union `(S | T).go()`, a class and an interface merged) has no single target:
      // the checker's signature would name the first member only.
      const ds = symbolDecls(ce);
      const owners = new Set(ds.filter((d) => !(ts.isModuleDeclaration(d) || ts.isInterfaceDeclaration(d) ||
        ts.isTypeAliasDeclaration(d) || ts.isEnumDeclaration(d))).map((d) => implOf(d) || d));
      if (owners.size > 1 && [...owners].some((o) => o.qualname !== undefined)) {
        drops.ambiguous++;
        unjudge("ambiguous");
        if (dropEx.ambiguous.length < 10) {
          dropEx.ambiguous.push(`${s.rel}:${line(sf, n.getStart(sf))} ${n.getText(sf).slice(0, 60).replace(/\s+/g, " ")}`);
        }
        continue;
      }
      if (sigDecl) { seenDecls.push(sigDecl); target = implOf(sigDecl); }
      if (!target) {
        seenDecls.push(...ds);
        const got = new Set(ds.map(implOf).filter(Boolean));
        if (got.size === 1) target = [...got][0];
      }
    } else {
      // new C() / super(): the class. The symbol at the callee first (a derived class without a
      // constructor would otherwise resolve to its base's constructor), then the signature.
      const ds = isSuper ? [] : symbolDecls(ce);
      seenDecls.push(...ds);
      const got = new Set(ds.map(classOf).filter(Boolean));
      if (got.size === 1) target = [...got][0];
      if (!target && sigDecl) {
        seenDecls.push(sigDecl);
        target = classOf(sigDecl) || (isSuper ? null : implOf(sigDecl));
      }
      if (!target && isSuper) {
        // implicit base constructor: the class named in `extends`
        const cls = ts.findAncestor(n, (x) => ts.isClassLike(x));
        const ext = cls?.heritageClauses?.find((h) => h.token === K.ExtendsKeyword)?.types[0];
        if (ext) {
          const bs = symbolDecls(ext.expression);
          seenDecls.push(...bs);
          const g = new Set(bs.map(classOf).filter(Boolean));
          if (g.size === 1) target = [...g][0];
        }
      }
      if (!target && !isSuper && !sigDecl) {
        const g = new Set(ds.map(implOf).filter(Boolean));   // `new f()` on a function
        if (g.size === 1) target = [...g][0];
      }
    }
    if (!target) {
      if (!seenDecls.length) {
        drops.unresolved++;
        unjudge("unresolved");
        unresolvedByLang[langOf(s.rel)]++;
        if (dropEx.unresolved.length < 10) dropEx.unresolved.push(`${s.rel}:${line(sf, n.getStart(sf))} ${n.getText(sf).slice(0, 60).replace(/\s+/g, " ")}`);
      } else if (!seenDecls.some(inCorpus)) {
        drops.external++;
      } else {
        drops.uncounted++;
        const d0 = seenDecls.find(inCorpus);
        const kname = K[d0.kind];
        unjudge(`uncounted ${kname}`);
        uncountedKinds[kname] = (uncountedKinds[kname] || 0) + 1;
      }
      continue;
    }
    calls.push({
      file: s.rel, line: line(sf, at.getStart(sf)),
      caller: s.caller ? s.caller.qualname : "<module>",
      callee_file: target.file, callee_qualname: target.qualname, callee_kind: target.kind, via,
    });
    byVia[via] = (byVia[via] || 0) + 1;
  }

  // ----------------------------------------------------------------------------------------------
  // Output
  // ----------------------------------------------------------------------------------------------

  const byKind = {};
  for (const d of declarations) byKind[d.kind] = (byKind[d.kind] || 0) + 1;
  const syntaxErrors = [];
  for (const [sf, rel] of relOf) {
    if (program.getSyntacticDiagnostics(sf).length) syntaxErrors.push(rel);
  }
  const byExt = {};
  for (const r of rels) { const x = r.match(/(\.d)?\.[^.]+$/)[0]; byExt[x] = (byExt[x] || 0) + 1; }
  const pairs = new Set(calls.map((c) => `${c.file}\0${c.caller}\0${c.callee_file}\0${c.callee_qualname}`));
  const summary = {
    files: rels.length, files_by_ext: byExt, files_not_in_program: missing,
    files_with_syntax_errors: syntaxErrors,
    lib_and_other_files_in_program: outside.length,
    declarations: declarations.length, declarations_by_kind: byKind,
    call_sites: sites.length, calls: calls.length, calls_by_via: byVia, caller_callee_pairs: pairs.size,
    dropped: drops, uncounted_target_kinds: uncountedKinds, unresolved_by_lang: unresolvedByLang,
    unresolved_examples: dropEx.unresolved, ambiguous_examples: dropEx.ambiguous,
    uncounted_class_expressions: uncountedClassExpr.length, odd_member_names: oddNames.slice(0, 20),
    odd_member_names_count: oddNames.length, ...stats,
    workspaces, notes,
    seconds: { program: (tProgram - t0) / 1000, total: (Date.now() - t0) / 1000 },
  };
  const out = {
    root: path.basename(root), typescript: ts.version,
    files: rels.map((r) => ({ path: r, lang: langOf(r) })),
    declarations, calls, unjudged, summary,
  };
  process.stdout.write(JSON.stringify(out) + "\n");
  console.error(`ts_oracle ${root}: ${rels.length} files, ${declarations.length} declarations ` +
    `${JSON.stringify(byKind)}, ${calls.length} calls (${pairs.size} pairs) of ${sites.length} sites; ` +
    `dropped ${JSON.stringify(drops)}; ${summary.seconds.total}s`);
  for (const n of notes) console.error(`  note: ${n}`);
}

main();
