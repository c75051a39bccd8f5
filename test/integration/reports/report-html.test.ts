/**
 * The reconciliation page in a real browser: Debian's chromium driven by playwright-core (no
 * browser download). It opens with no console message of level error, no page error and no request
 * beyond its own file; the three charts are there with a non-zero size, their bars drawn, and a
 * screenshot of the page is taken. The page speaks to a benefits operations manager: business dates
 * (run ids in small print), money with thousands separators, group names beside group ids, the
 * findings grouped by group with their ids folded away; its top fits a 1280 px screen with its
 * charts in view. Under CI=true a missing chromium fails the test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { ALL_CLAIMS } from "../../helpers/sandbox-truth.js";
import { runCli } from "../../unit/cli/run-cli.js";
import { csvObjects } from "../../unit/sinks/fixtures.js";

const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === "true") throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);

let sb: Sandbox;
let dir: string;
let browser: Browser | undefined;
/** The start date (UTC) of runs 1 and 2, read from the snapshot's own run table. */
let dates: { a: string; b: string };
/** Money as the service writes it ("1234.5", "-0.07") to cents, and cents with thousands separators. */
const cents = (v: string | null | undefined): bigint => {
  if (v === null || v === undefined || v === "") return 0n;
  const [whole, frac = ""] = v.replace("-", "").split(".");
  const c = BigInt(whole!) * 100n + BigInt((frac + "00").slice(0, 2));
  return v.startsWith("-") ? -c : c;
};
const grouped = (c: bigint): string => {
  const abs = c < 0n ? -c : c;
  const whole = String(abs / 100n).replace(/\B(?=(\d{3})+$)/g, ",");
  return `${c < 0n ? "-" : ""}${whole}.${String(abs % 100n).padStart(2, "0")}`;
};
/** A decimal amount of 1,000 or more written without a separator. */
const ungroupedMoney = /(?<![\d,.])\d{4,}\.\d{2}(?!\d).{0,40}/;

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
  const db = new BetterSqlite3(env.BENEFITS_DB, { readonly: true });
  const started = db.prepare("SELECT substr(started_at, 1, 10) FROM _runs WHERE run_id IN (1, 2) ORDER BY run_id").pluck().all() as string[];
  db.close();
  dates = { a: started[0]!, b: started[1]! };
  if (available) browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});
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
    expect(await page.title()).toBe(`Reconciliation: ${dates.a} → ${dates.b}`);
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

  it("says when in business dates, run ids in small print", async () => {
    const page = await browser!.newPage();
    await page.goto(pathToFileURL(join(dir, "rep", "report.html")).href);
    expect(await page.textContent("h1")).toMatch(new RegExp(`^Reconciliation: ${dates.a}\\s*run 1 → ${dates.b}\\s*run 2$`));
    expect(await page.locator("h1 small").allTextContents()).toEqual(["run 1", "run 2"]);
    expect(await page.textContent("#period-a")).toContain(dates.a);
    expect(await page.textContent("#period-a small")).toContain("run 1");
    expect(await page.textContent("#period-b")).toContain(dates.b);
    expect(await page.textContent("#period-b small")).toContain("run 2");
    await page.close();
  });

  it("writes money with thousands separators everywhere, in the page and the summary", async () => {
    const paid = [...sb.iterate("claims")].reduce((t, c) => t + cents(c.paidAmount), 0n);
    expect(paid).toBeGreaterThan(100_000n);
    const page = await browser!.newPage();
    await page.goto(pathToFileURL(join(dir, "rep", "report.html")).href);
    const text = await page.innerText("body");
    expect(text).toContain(grouped(paid));
    expect(text.match(ungroupedMoney)?.[0]).toBeUndefined();
    const summary = readFileSync(join(dir, "rep", "summary.md"), "utf8");
    expect(summary).toContain(grouped(paid));
    expect(summary.match(ungroupedMoney)?.[0]).toBeUndefined();
    await page.close();
  });

  it("groups the findings by group, with the group's name, counts per check and the ids folded in <details>", async () => {
    const names = new Map([...sb.iterate("groups")].map((g) => [String(g.groupId), String(g.sponsorName)]));
    const findings = csvObjects(join(dir, "rep", "findings.csv"));
    const byGroup = new Map<string, Map<string, string[]>>();
    for (const f of findings) {
      const checks = byGroup.get(f.group_id!) ?? new Map<string, string[]>();
      checks.set(f.check!, [...(checks.get(f.check!) ?? []), f.record_id!]);
      byGroup.set(f.group_id!, checks);
    }
    expect(byGroup.size).toBeGreaterThan(1);
    const page = await browser!.newPage();
    await page.goto(pathToFileURL(join(dir, "rep", "report.html")).href);
    expect(await page.locator("script").count()).toBe(0);
    expect(await page.locator("section.group-findings").count()).toBe(byGroup.size);
    for (const [gid, checks] of byGroup) {
      const section = page.locator(`section.group-findings[data-group="${gid}"]`);
      const total = [...checks.values()].reduce((t, ids) => t + ids.length, 0);
      const heading = (await section.locator("h3").textContent())!;
      expect(heading, gid).toContain(gid);
      if (names.has(gid)) expect(heading, gid).toContain(names.get(gid)!);
      expect(heading, gid).toMatch(new RegExp(`\\b${total.toLocaleString("en-US")} finding`));
      const details = section.locator("details");
      expect(await details.count(), gid).toBe(checks.size);
      for (let i = 0; i < checks.size; i++) {
        const d = details.nth(i);
        expect(await d.getAttribute("open"), gid).toBeNull();
        const check = (await d.getAttribute("data-check"))!;
        const ids = checks.get(check)!;
        expect(ids, `${gid} ${check}`).toBeDefined();
        expect(await d.locator("summary").textContent()).toContain(ids.length.toLocaleString("en-US"));
        expect((await d.locator("code.record").allTextContents()).sort()).toEqual([...ids].sort());
        // Folded: the ids take no room until the reader opens the list.
        expect(await d.locator("code.record").first().isVisible()).toBe(false);
      }
    }
    await page.close();
  });

  it("fits its top in a 1280 px wide screen: no horizontal scroll, the charts drawn inside the viewport", async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(pathToFileURL(join(dir, "rep", "report.html")).href);
    const scrollWidth = (await page.evaluate("document.documentElement.scrollWidth")) as number;
    expect(scrollWidth).toBeLessThanOrEqual(1280);
    for (const id of ["chart-membership", "chart-movement", "chart-claims"]) {
      const box = (await page.locator(`svg#${id}`).boundingBox())!;
      expect(box.width * box.height, id).toBeGreaterThan(0);
      expect(box.x, id).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, id).toBeLessThanOrEqual(1280);
    }
    // The top of the page shows the membership chart whole, without scrolling.
    const first = (await page.locator("svg#chart-membership").boundingBox())!;
    expect(first.y).toBeGreaterThanOrEqual(0);
    expect(first.y + first.height).toBeLessThanOrEqual(1000);
    const shot = join(dir, "top-1280.png");
    await page.screenshot({ path: shot });
    expect(statSync(shot).size).toBeGreaterThan(20_000);
    await page.close();
  });
});
