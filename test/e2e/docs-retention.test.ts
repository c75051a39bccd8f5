/**
 * docs/retention.md's examples, run as printed: the two prune lines through `sh -c` with
 * `benefits-sync` on the PATH, against a snapshot of five syncs of the sandbox (over loopback), their
 * output the shape the page shows; the config file it prints, checked by `config check` and read
 * by the schema as the retention it says.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Config } from "../../src/config/schema.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { installedEnv, runPrinted } from "../helpers/printed-commands.js";
import { docPage, namedBlock, printedFile } from "../helpers/readme-blocks.js";

const PAGE = docPage("retention.md");
let sb: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox({ members: 120, groups: 2, seed: 31 });
  dir = mkdtempSync(join(tmpdir(), "bsync-docs-retention-"));
  env = { ...installedEnv(dir), HOME: dir, BENEFITS_PII_KEY: "docs-retention-pii-key-0123456789", BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full };
  for (let run = 1; run <= 5; run++) {
    if (run > 1) for (let k = 0; k < 3; k++) await sb.advance();
    // (Not through runPrinted: it waits synchronously, and this sandbox answers in this process.)
    const r = await startCli(["sync", "--quiet"], env, dir).done;
    expect(r.code, r.stderr).toBe(0);
  }
}, 120_000);

afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("docs/retention.md, as printed", () => {
  it("looks first, then prunes, and says what it removed as the page shows", () => {
    const [look, prune] = namedBlock(PAGE, "retention: look first, then prune") as [string, string];
    const dry = runPrinted(look, dir, env);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^Would remove runs 1 to 2 \(2 runs\) and \d+ closed versions \(--keep-runs 3\); the history would start at run 3\./);
    const done = runPrinted(prune, dir, env);
    expect(done.status, done.stderr).toBe(0);
    // The page's output, with its numbers as patterns.
    const shown = /```text\n([\s\S]*?)```/.exec(readFileSync(PAGE, "utf8"))![1]!.trimEnd().split("\n");
    const got = done.stdout.trimEnd().split("\n");
    const pattern = (line: string) => new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\d[\d,.]*/g, "[\\d,.]+").replace(/(members|coverages|claims) \[\\d,\.\]\+(, )?/g, "((designs|groups|plans|members|coverages|claims) [\\d,.]+(, )?)+")}`);
    expect(got[0]).toMatch(pattern(shown[0]!));
    expect(got[1]).toMatch(/^ {2}Closed versions: ((designs|groups|plans|members|coverages|claims) [\d,]+(, )?)+\. Current versions are never removed\.$/);
    expect(got[2]).toMatch(pattern(shown[2]!));
    const runs = runPrinted("benefits-sync runs --json", dir, env);
    expect((JSON.parse(runs.stdout) as { status: string }[]).map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded", "pruned", "pruned"]);
  });

  it("the scheduler's retention, as the page's config file says it", () => {
    const text = printedFile(PAGE, "benefits-sync.config.json");
    writeFileSync(join(dir, "benefits-sync.config.json"), text);
    const check = runPrinted("benefits-sync config check", dir, env);
    expect(check.status, check.stderr + check.stdout).toBe(0);
    expect(Config.parse(JSON.parse(text)).schedule.retention).toEqual({ keepRuns: 90 });
    // One of the two, never both.
    writeFileSync(join(dir, "both.json"), JSON.stringify({ schedule: { retention: { keepRuns: 3, keepDays: 30 } } }));
    const both = runPrinted("benefits-sync config check both.json", dir, env);
    expect(both.status).toBe(2);
    expect(both.stderr + both.stdout).toContain("give exactly one of keepRuns and keepDays");
    rmSync(join(dir, "benefits-sync.config.json"));
  });
});
