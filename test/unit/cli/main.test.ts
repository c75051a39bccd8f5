import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../../src/cli/commands.js";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { runCli } from "./run-cli.js";

const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "bs-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("benefits-sync CLI skeleton", () => {
  it("--help lists every command of the table with its summary, and the global flags", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(ExitCode.OK);
    expect(COMMANDS.map((c) => c.name)).toEqual(["doctor", "init", "config check", "sync", "runs", "export", "reconcile", "prune", "jobs", "run", "schedule", "groups create", "demo", "sandbox", "sandbox advance", "pii rekey", "census plan", "census apply", "webhooks serve", "webhooks status", "webhooks apply"]);
    const flat = r.stdout.replace(/\s+/g, " ");
    // A command of a group (`config check`, `sandbox advance`) is listed by its group's help; the group here.
    for (const c of COMMANDS.filter((c) => !c.name.includes(" "))) {
      const arg = c.argument ? (c.argument.optional ? ` [${c.argument.name}]` : ` <${c.argument.name}>`) : "";
      expect(flat).toContain(`${c.name}${c.options.length ? " [options]" : ""}${arg} ${c.summary}`);
    }
    expect(flat).toContain("config config commands");
    const sandboxHelp = (await runCli(["sandbox", "--help"])).stdout.replace(/\s+/g, " ");
    expect(sandboxHelp).toContain("advance [options] make simulated days pass in a running sandbox");
    for (const flag of ["--config <file>", "--db <file>", "--base-url <url>", "--env <name>", "--json", "--quiet", "--version"]) {
      expect(r.stdout).toContain(flag);
    }
    expect(flat).toContain("75 another run or program holds the snapshot (the message names it");
    expect(flat).toContain("130/143 stopped by SIGINT/SIGTERM");
  });

  it("a command's --help shows its own options from the table", async () => {
    const r = await runCli(["sync", "--help"]);
    expect(r.code).toBe(ExitCode.OK);
    for (const opt of COMMANDS.find((c) => c.name === "sync")!.options) expect(r.stdout).toContain(opt.flags);
    const sandbox = await runCli(["sandbox", "--help"]);
    for (const flag of ["--port <n>", "--seed <s>", "--members <n>", "--groups <n>", "--claims-per-member <n>", "--latency-ms <n>"]) {
      expect(sandbox.stdout).toContain(flag);
    }
  });

  it("--version prints package.json's version", async () => {
    const r = await runCli(["--version"]);
    expect(r.code).toBe(ExitCode.OK);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it("an unknown command exits 2 and lists the commands", async () => {
    const r = await runCli(["frobnicate"]);
    expect(r.code).toBe(ExitCode.USAGE);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
    expect(r.stderr).toContain("Commands: doctor, init, config check, sync, runs, export, reconcile, prune, jobs, run, schedule, groups create, demo, sandbox, sandbox advance, pii rekey, census plan, census apply, webhooks serve, webhooks status, webhooks apply.");
    expect(r.stdout).toBe("");
  });

  it("no command at all prints help on stderr and exits 2", async () => {
    const r = await runCli([]);
    expect(r.code).toBe(ExitCode.USAGE);
    expect(r.stderr).toContain("Usage: benefits-sync");
  });

  it("an unknown option or a bad option value is a usage error, exit 2", async () => {
    expect((await runCli(["doctor", "--frob"])).code).toBe(ExitCode.USAGE);
    const bad = await runCli(["runs", "--limit", "ten"]);
    expect(bad.code).toBe(ExitCode.USAGE);
    expect(bad.stderr).toContain("expected a positive integer");
    expect((await runCli(["sync", "--claims-since", "2026-02-30"])).code).toBe(ExitCode.USAGE);
    expect((await runCli(["--env", "staging", "doctor"])).code).toBe(ExitCode.USAGE);
  });

  it("an invalid configuration exits 2 with one message naming every bad key, never the key", async () => {
    const apiKey = "sk_test_cli_0123456789";
    const file = path.join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ http: { concurrency: 0, bodyTimeoutMs: "slow" }, apiKey }));
    const r = await runCli(["doctor", "--config", file, "--base-url", "nope"], { cwd: dir });
    expect(r.code).toBe(ExitCode.USAGE);
    expect(r.stderr).toContain("http.concurrency: expected a positive integer, got 0");
    expect(r.stderr).toContain('http.bodyTimeoutMs: expected a positive integer (milliseconds), got "slow"');
    expect(r.stderr).toContain('baseUrl: expected an http(s) URL, got "nope" (from --base-url)');
    expect(r.stderr.match(/Invalid configuration/g)).toHaveLength(1);
    expect(r.stderr + r.stdout).not.toContain(apiKey);
  });

  it("a configuration that names a remote service without a key exits 2", async () => {
    const r = await runCli(["doctor", "--base-url", "http://127.0.0.1:9"], { cwd: dir });
    expect(r.code).toBe(ExitCode.USAGE);
    expect(r.stderr).toContain("apiKey: no API key is set");
  });
});
