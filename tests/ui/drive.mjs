// Drives the map page in the system Chromium with playwright-core, the way a person would: load
// it from disk with the network cut, read the layers, search, open a symbol, open a layer, and
// report what the page showed as one JSON object on stdout (tests/ui.rs judges it; bench/ui.sh
// reads the render time). Screenshots go to scenario.shots.
//   usage: node tests/ui/drive.mjs '<scenario JSON>'
//   scenario: {"page": "/abs/map.html" | "url": "http://127.0.0.1:N/", "shots": "/dir",
//              "search": "query", "open": "symbol id", "layer": "layer id", "between": "from,to",
//              "width": 1440, "height": 900}
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const prefix = process.env.TG_UI_PREFIX || join(process.env.HOME || "", ".cache", "tldrgraph-ui");
const { chromium } = require(join(prefix, "node_modules", "playwright-core"));

const scenario = JSON.parse(process.argv[2]);
const target = scenario.url || pathToFileURL(scenario.page).href;
const shots = scenario.shots;
if (shots) mkdirSync(shots, { recursive: true });

// Flags that keep Chromium from reaching for the network on its own (updates, sync, QUIC).
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
});
const report = { requests: [], errors: [] };
try {
  const context = await browser.newContext({
    viewport: { width: scenario.width || 1440, height: scenario.height || 900 },
    offline: !scenario.url,
  });
  // Every request the page makes is seen; any that is not the page itself is refused and kept.
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url === target || (scenario.url && url.startsWith(scenario.url) && url.split("#")[0] === target)) return route.continue();
    report.requests.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on("pageerror", (e) => report.errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") report.errors.push(`${m.type()}: ${m.text()}`); });
  page.on("dialog", (d) => { report.errors.push(`dialog: ${d.message()}`); d.dismiss(); });

  await page.goto(target, { waitUntil: "load" });
  await page.waitForSelector("html[data-rendered-ms]", { timeout: 120000 });
  report.rendered_ms = Number(await page.getAttribute("html", "data-rendered-ms"));
  report.title = await page.title();
  report.totals = await page.textContent("#totals");
  report.stale = await page.$eval("#stale", (p) => (p.hidden ? null : p.textContent));
  report.layers = await page.$$eval("g.band", (bands) => bands.map((b) => ({
    id: b.dataset.layer, symbols: Number(b.dataset.symbols), text: [...b.querySelectorAll("text")].map((t) => t.textContent),
  })));
  report.arcs = await page.$$eval("path.arc", (arcs) => arcs.map((a) => ({
    from: a.dataset.from, to: a.dataset.to, total: Number(a.dataset.total), violations: Number(a.dataset.violations),
    violation_colour: getComputedStyle(a).stroke,
  })));
  report.violation_count = await page.textContent("#violation-count");
  report.violations = await page.$$eval("#violations li", (items) => items.map((li) => ({ src: li.dataset.src, dst: li.dataset.dst, text: li.textContent })));
  report.script_elements = await page.$$eval("script", (s) => s.length);
  report.injected_images = await page.$$eval("img", (s) => s.length);
  if (shots) await page.screenshot({ path: join(shots, "overview.png"), fullPage: false });

  if (scenario.search) {
    let started = Date.now();
    await page.fill("#search", scenario.search);
    await page.waitForSelector("#results:not([hidden])", { timeout: 10000 });
    report.search_ms = Date.now() - started; // includes the input's 120 ms debounce
    report.search = await page.$$eval("#results li[data-symbol]", (items) => items.map((li) => li.dataset.symbol));
    if (shots) await page.screenshot({ path: join(shots, "search.png") });
    const pick = scenario.open ? `#results li[data-symbol="${scenario.open.replace(/"/g, '\\"')}"]` : "#results li[data-symbol]";
    if (await page.$(pick)) {
      started = Date.now();
      await page.click(pick);
      await page.waitForSelector("#symbol-detail", { timeout: 10000 });
      report.symbol_ms = Date.now() - started;
      report.symbol = await page.$eval("#symbol-detail", (d) => {
        const text = (sel) => d.querySelector(sel)?.textContent ?? null;
        const list = (sel) => [...d.querySelectorAll(`${sel} li`)].map((li) => ({ id: li.dataset.symbol, confidence: Number(li.dataset.confidence), violation: li.classList.contains("violation-text") }));
        return { id: d.dataset.symbol, name: text("#symbol-name"), where: text("#symbol-where"), layer: text("#symbol-layer"),
          intent: text("#symbol-intent"), signature: text("#symbol-signature"), doc: text("#symbol-doc"),
          callers: list("#callers"), callees: list("#callees"), hash: location.hash };
      });
      if (shots) await page.screenshot({ path: join(shots, "symbol.png") });
    }
  }
  if (scenario.layer) {
    const started = Date.now();
    await page.click(`g.band[data-layer="${scenario.layer}"]`);
    await page.waitForSelector("#layer-detail", { timeout: 10000 });
    report.layer_ms = Date.now() - started;
    report.layer = await page.$eval("#layer-detail", (d) => ({
      id: d.dataset.layer,
      counts: Object.fromEntries([...d.querySelectorAll("dd[data-count]")].map((dd) => [dd.dataset.count, Number(dd.textContent.replace(/,/g, ""))])),
      files: [...d.querySelectorAll("#layer-files li")].map((li) => li.dataset.file),
    }));
    if (shots) await page.screenshot({ path: join(shots, "layer.png") });
    if (report.layer.files.length) {
      await page.click("#layer-files li");
      await page.waitForSelector("#file-detail", { timeout: 10000 });
      report.file = await page.$eval("#file-detail", (d) => ({ path: d.dataset.file, symbols: [...d.querySelectorAll("#file-symbols li")].map((li) => li.dataset.symbol) }));
    }
  }
  if (scenario.between) {
    const [from, to] = scenario.between.split(",");
    // The middle of an arc's box is off its stroke: the click is sent to the arc itself.
    await page.dispatchEvent(`path.arc[data-from="${from}"][data-to="${to}"]`, "click");
    await page.waitForSelector("#between-detail", { timeout: 10000 });
    report.between = await page.$$eval("#between-edges li", (items) => items.map((li) => ({ src: li.dataset.src, dst: li.dataset.dst, violation: li.classList.contains("violation-text") })));
  }
  report.pwned = await page.evaluate(() => window.__pwned ?? null);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
