/**
 * The reconciliation page in a real browser: Debian's chromium driven by playwright-core (no
 * browser download). It opens with no console message of level error, no page error and no request
 * beyond its own file; the three charts are there with a non-zero size, their bars drawn, and a
 * screenshot of the page is taken. Under CI=true a missing chromium fails the test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { runCli } from "../../unit/cli/run-cli.js";

const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === "true") throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);

let sb: Sandbox;
let dir: string;
let browser: Browser | undefined;

beforeAll(async () => {
  sb = await startSandbox({ members: 400, seed: 8, inconsistencies: true });
  dir = mkdtempSync(join(tmpdir(), "bsync-report-html-"));
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "html-test-pii-key-0123456789" };
  const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--quiet"];
  expect((await runCli(["sync", ...window], { env, cwd: dir })).code).toBe(ExitCode.OK);
  await sb.advance();
  await sb.advance();
  expect((await runCli(["sync", ...window], { env, cwd: dir })).code).toBe(ExitCode.OK);
  const r = await runCli(["reconcile", "--from", "1", "--to", "2", "--out", "rep", "--as-of", sb.today], { env, cwd: dir });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(ExitCode.OK);
  if (available) browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!available)("report.html in headless Chromium", () => {
  it("opens with no console error and no request, and shows its three charts with their bars", async () => {
    const page = await browser!.newPage({ viewport: { width: 1100, height: 900 } });
    const problems: string[] = [];
    const requests: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("request", (q) => requests.push(q.url()));
    const url = pathToFileURL(join(dir, "rep", "report.html")).href;
    await page.goto(url, { waitUntil: "load" });
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
    expect(await page.title()).toBe("Reconciliation: run 1 → run 2");
    expect(await page.textContent("#arithmetic")).toBe("The arithmetic holds.");

    for (const id of ["chart-membership", "chart-movement", "chart-claims"]) {
      const box = await page.locator(`svg#${id}`).boundingBox();
      expect(box, id).not.toBeNull();
      expect(box!.width, id).toBeGreaterThan(100);
      expect(box!.height, id).toBeGreaterThan(50);
      const bars = await page.locator(`svg#${id} rect.bar`).evaluateAll((els) => els.map((e) => (e as unknown as { getBBox(): { width: number } }).getBBox().width));
      expect(bars.length, id).toBeGreaterThan(1);
      expect(bars.filter((w) => w > 0).length, id).toBeGreaterThan(1);
    }
    // The movement chart draws what report.json says.
    const json = JSON.parse(readFileSync(join(dir, "rep", "report.json"), "utf8")) as { coverages: { movement: Record<string, number> } };
    const titles = await page.locator("svg#chart-movement rect.bar title").allTextContents();
    expect(titles.map((t) => Number(t.split(": ").pop()!.replace(/,/g, "")))).toEqual(Object.values(json.coverages.movement));

    const shot = join(dir, "rep-screenshot.png");
    await page.locator("svg#chart-membership").scrollIntoViewIfNeeded();
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(20_000);
    await page.close();
  });
});
