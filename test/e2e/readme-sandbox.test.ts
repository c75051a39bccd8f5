/**
 * The README's stand-in recipe ("The sandbox as a stand-in"), each line run through `sh -c` exactly
 * as printed, with `benefits-sync` on the PATH as an install puts it: the sandbox in the first
 * terminal, then the other lines in order. The one change: the README's port 4010, swapped for a
 * free one in every line (a sandbox the reader left running may hold it). The second sync must
 * see the days that passed, the claims of the advanced week included: its window ends on the
 * sandbox's today, not the real date. The first sync must copy claims too: the printed sandbox line
 * fixes its today in mid-month (on the real date early in a month a first sync found 0 or 1).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installedEnv, runPrinted, startOnFreePort } from "../helpers/printed-commands.js";

const README = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");

/** The ```sh block right after the paragraph that starts with `**The sandbox as a stand-in.**`. */
function recipe(): string[] {
  const at = README.indexOf("**The sandbox as a stand-in.**");
  expect(at, "the README's stand-in passage").toBeGreaterThan(-1);
  const block = /```sh\r?\n([\s\S]*?)```/.exec(README.slice(at))?.[1];
  expect(block, "a ```sh block after the passage").toBeDefined();
  return block!.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
}

let dir: string;
let env: Record<string, string>;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bsync-readme-sb-"));
  // What an install puts on the PATH: a `benefits-sync` that runs the built CLI.
  env = installedEnv(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("README: the sandbox as a stand-in", () => {
  it("runs as printed (port 4010 swapped for a free one): sandbox, sync, advance, sync sees the changed days", async () => {
    const printed = recipe();
    expect(printed[0]).toMatch(/^benefits-sync sandbox\b/);
    const { server: sb, lines, says } = await startOnFreePort(printed, 4010, dir, env);
    try {
      const banner = sb.banner;
      const rest = lines.slice(1);
      const outputs: string[] = [];
      for (const line of rest) {
        const r = runPrinted(line, dir, env);
        expect(r.status, `${line} (${says})\n${r.stderr}`).toBe(0);
        outputs.push(r.stdout);
      }
      // The first sync copied the claims of the sandbox's month so far, whatever the real date: the
      // printed line fixes the sandbox's today (early in a real month there would be almost none).
      expect(printed[0]).toMatch(/ --today \d{4}-\d{2}-\d{2}\b/);
      const first = /^\s*claims\s+(\d+) seen/m.exec(outputs[0] ?? "");
      expect(first, outputs[0]).not.toBeNull();
      expect(Number(first![1])).toBeGreaterThan(100);
      expect(README).toContain(`(here ${first![1]}, then the week's)`);
      // The key printed in the README is the one the banner gives.
      const key = /full key:\s+(\S+)/.exec(banner)?.[1];
      expect(rest.join("\n")).toContain(`BENEFITS_API_KEY=${key} `);
      expect(outputs.join("\n")).toMatch(/The sandbox's today is now \d{4}-\d{2}-\d{2}\./);
      // The second sync saw the days pass (members came, changed, went) and the claims of the window.
      const last = outputs[outputs.length - 1] ?? "";
      const m = /^\s*members\s+\d+ seen\s+(\d+) inserted\s+(\d+) updated\s+(\d+) deleted/m.exec(last);
      expect(m, last).not.toBeNull();
      expect(Number(m![1]) + Number(m![2]) + Number(m![3])).toBeGreaterThan(0);
      expect(Number(/^\s*claims\s+(\d+) seen/m.exec(last)?.[1])).toBeGreaterThan(0);
      // The advanced week's claims arrived: the last run's window ends on the sandbox's today, and
      // the snapshot holds claims with service dates after the day the sandbox started on.
      const started = /today (\d{4}-\d{2}-\d{2})/.exec(banner)?.[1];
      const now = /The sandbox's today is now (\d{4}-\d{2}-\d{2})\./.exec(outputs.join("\n"))?.[1];
      expect([started, now].every(Boolean), banner).toBe(true);
      const db = new BetterSqlite3(join(dir, "standin.db"), { readonly: true });
      try {
        const week = db.prepare(`SELECT COUNT(*) FROM claims WHERE "serviceDateFrom" > ?`).pluck().get(started) as number;
        expect(week, `claims with service dates after ${started} (the advanced week's)`).toBeGreaterThan(0);
        const options = db.prepare("SELECT options FROM _runs ORDER BY run_id DESC LIMIT 1").pluck().get() as string;
        expect((JSON.parse(options) as { claimsWindow: { to: string } }).claimsWindow.to).toBe(now);
      } finally {
        db.close();
      }
    } finally {
      await sb.stop();
    }
  });
});
