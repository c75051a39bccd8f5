/**
 * The README's stand-in recipe ("The sandbox as a stand-in"), each line run through `sh -c` exactly
 * as printed, with `benefits-sync` on the PATH as an install puts it: the sandbox in the first
 * terminal, then the other lines in order. The second sync must see the days that passed.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../helpers/cli-process.js";
import { waitUntil } from "../helpers/wait.js";

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
  const bin = join(dir, "bin");
  mkdirSync(bin);
  // What an install puts on the PATH: a `benefits-sync` that runs the built CLI.
  writeFileSync(join(bin, "benefits-sync"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, "benefits-sync"), 0o755);
  env = { PATH: `${bin}:${process.env.PATH ?? ""}` };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("README: the sandbox as a stand-in", () => {
  it("runs as printed: sandbox, sync, advance, sync sees the changed days", { timeout: 600_000 }, async () => {
    const [serve, ...rest] = recipe();
    expect(serve).toMatch(/^benefits-sync sandbox\b/);
    // The README's port is fixed: a second suite on this machine may hold it for a while, so a
    // start refused with EADDRINUSE is tried again until this test's own sandbox is up.
    const start = () => {
      const child = spawn("sh", ["-c", `exec ${serve}`], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
      const out = { banner: "", errors: "", gone: false };
      child.stdout.on("data", (d: Buffer) => (out.banner += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out.errors += d.toString()));
      const exited = new Promise((resolve) => child.once("close", resolve));
      void exited.then(() => (out.gone = true));
      return { child, out, exited };
    };
    let sb = start();
    try {
      await waitUntil("the sandbox's banner", async () => {
        if (sb.out.gone) {
          if (!/EADDRINUSE/.test(sb.out.errors)) throw new Error(`${serve} exited: ${sb.out.errors}`);
          await new Promise((r) => setTimeout(r, 250));
          sb = start();
          return false;
        }
        return sb.out.banner.includes("Press Ctrl+C");
      });
      const banner = sb.out.banner;
      const outputs: string[] = [];
      for (const line of rest) {
        const r = spawnSync("sh", ["-c", line], { cwd: dir, env, encoding: "utf8" });
        expect(r.status, `${line}\n${r.stderr}`).toBe(0);
        outputs.push(r.stdout);
      }
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
    } finally {
      sb.child.kill("SIGTERM");
      await sb.exited;
    }
  });
});
