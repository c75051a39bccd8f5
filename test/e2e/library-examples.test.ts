/**
 * docs/library.md's examples (`examples/*.ts`), as a developer would use them: compiled with
 * `tsc --strict` in a project of their own against the packed package (not the sources), then run
 * against the sandbox (port 0; its today a few days before the real one, so that the claims window
 * of a real run, which ends today, holds the claims of the days it advances, and a lookback of a
 * year in the project's configuration file holds its whole history):
 * a sync from code, a run's changes read back, a sink of one's own through the delivery ledger,
 * and webhooks received inside one's own HTTP server and applied to the snapshot.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type ChangeSet, type Sandbox } from "../../src/sandbox/index.js";
import { packedProject, runNode, startNode, type Finished } from "../helpers/packed-package.js";
import { expectedSsnToken } from "../helpers/ssn-oracle.js";
import { waitUntil } from "../helpers/wait.js";

const EXAMPLES = fileURLToPath(new URL("../../examples", import.meta.url));
const GUIDE = fileURLToPath(new URL("../../docs/library.md", import.meta.url));
const PII_KEY = "library-guide-pii-key-0123456789";
const SECRET = "whsec-library-guide-0123456789";
const WAIT_MS = 50_000;

let tmp: string;
let project: string;
/** The packed tarball's paths (`package/...`). */
let packedFiles: readonly string[] = [];
let sb: Sandbox;
let env: Record<string, string>;
/** The members of run 1 (the sandbox before its first simulated day), with their SSNs. */
let firstMembers: { id: string; ssn: string }[] = [];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "bs-library-"));
  const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
  sb = await startSandbox({ members: 300, groups: 3, seed: 42, today: threeDaysAgo, webhookDelayMs: 50 });
  env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(tmp, "snapshot.db"), BENEFITS_PII_KEY: PII_KEY };
});
afterAll(async () => {
  await sb?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const example = (name: string, args: readonly string[] = [], extra: Record<string, string> = {}): Promise<Finished> =>
  runNode(join(project, "out", `${name}.js`), args, { ...env, ...extra }, project);

/** `RESOURCE OP ID` of each change read-changes printed, sorted. */
const changeLines = (stdout: string): string[] =>
  stdout
    .split("\n")
    .filter((l) => /^\w+ (insert|update|delete) /.test(l))
    .map((l) => l.split(" ").slice(0, 3).join(" "))
    .sort();

/** The same lines from the sandbox's own record of a day. */
const truthLines = (day: ChangeSet): string[] =>
  Object.entries(day.changes)
    .flatMap(([resource, c]) => [...c.inserted.map((id) => `${resource} insert ${id}`), ...c.updated.map((id) => `${resource} update ${id}`), ...c.deleted.map((id) => `${resource} delete ${id}`)])
    .sort();

describe("docs/library.md: the examples against the packed package and the sandbox", { timeout: 120_000 }, () => {
  it("compile with tsc --strict in a project that has only the packed package", async () => {
    const packed = packedProject(tmp);
    project = packed.dir;
    packedFiles = packed.files;
    // The clone is left as it was: the tarball went to the temporary folder.
    expect(readdirSync(fileURLToPath(new URL("../..", import.meta.url))).filter((f) => f.endsWith(".tgz"))).toEqual([]);
    expect(packed.files.filter((f) => f.startsWith("package/src/") || f.startsWith("package/examples/"))).toEqual([]);
    mkdirSync(join(project, "examples"));
    const names = readdirSync(EXAMPLES).filter((f) => f.endsWith(".ts"));
    expect(names.sort()).toEqual(["my-sink.ts", "read-changes.ts", "sync-from-code.ts", "webhooks-in-your-server.ts"]);
    for (const n of names) copyFileSync(join(EXAMPLES, n), join(project, "examples", n));
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, types: ["node"], rootDir: "examples", outDir: "out" },
        include: ["examples"],
      }),
    );
    writeFileSync(join(project, "benefits-sync.config.json"), JSON.stringify({ resources: { claims: { lookbackDays: 365 } } }));
    const tsc = await runNode(join(project, "node_modules", "typescript", "bin", "tsc"), ["-p", project], {}, project);
    expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0);
    for (const n of names) expect(existsSync(join(project, "out", n.replace(/\.ts$/, ".js")))).toBe(true);
  });

  it("the guide links each example, and every function or class it calls in `code` is exported by the packed package", async () => {
    const guide = readFileSync(GUIDE, "utf8");
    const linked = [...new Set([...guide.matchAll(/\]\(\.\.\/examples\/([\w-]+\.ts)\)/g)].map((m) => m[1]!))].sort();
    expect(linked).toEqual(readdirSync(EXAMPLES).filter((f) => f.endsWith(".ts")).sort());
    const api = (await import(pathToFileURL(join(project, "node_modules", "benefits-sync", "dist", "src", "index.js")).href)) as Record<string, unknown>;
    // The members a sink implements (Sink, SinkSession) are checked by tsc on examples/my-sink.ts.
    const members = new Set(["open", "write", "commit", "close", "arrived", "prepare", "deltas"]);
    const called = [...new Set([...guide.matchAll(/`(?:new )?([A-Za-z]+)\(/g)].map((m) => m[1]!))].filter((n) => !members.has(n));
    expect(called.length).toBeGreaterThan(10);
    expect(called.filter((n) => typeof api[n] !== "function")).toEqual([]);
  });

  it("the guide pins the dev packages it installs to the versions the examples are compiled with here (package-lock.json)", () => {
    const guide = readFileSync(GUIDE, "utf8");
    const install = guide.split("\n").find((l) => l.startsWith("npm install --save-dev "));
    expect(install, "the guide's line that installs the dev packages").toBeDefined();
    const lock = JSON.parse(readFileSync(fileURLToPath(new URL("../../package-lock.json", import.meta.url)), "utf8")) as { packages: Record<string, { version: string }> };
    const pkgs = install!.split(/\s+/).slice(3).filter((a) => !a.startsWith("--"));
    expect(pkgs.map((p) => p.replace(/@[^@/]*$/, "")).sort()).toEqual(["@types/better-sqlite3", "@types/node", "typescript"]);
    for (const p of pkgs) {
      const name = p.replace(/@[^@/]*$/, "");
      expect(p, `${name} pinned`).toBe(`${name}@${lock.packages[`node_modules/${name}`]!.version}`);
      // What tsc ran with above: the clone's install, linked into the project.
      const used = JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8")) as { version: string };
      expect(p).toBe(`${name}@${used.version}`);
    }
    expect(install).toContain(" --save-exact ");
  });

  it("the guides point into what the package ships, not the sources; deliverToSink's outcome is described by its real fields", () => {
    for (const page of [GUIDE, fileURLToPath(new URL("../../docs/sink-kit.md", import.meta.url))]) {
      const text = readFileSync(page, "utf8");
      expect(text.match(/`src\/[^`]*`/g) ?? [], `${page} names a source path the package does not ship`).toEqual([]);
      const shipped = [...text.matchAll(/`node_modules\/benefits-sync\/([^`]+)`/g)].map((m) => m[1]!);
      expect(shipped.length, page).toBeGreaterThan(0);
      for (const p of shipped) expect(packedFiles, `${page}: ${p}`).toContain(`package/${p}`);
    }
    const guide = readFileSync(GUIDE, "utf8");
    const described = /^\/\/ outcome: \{ (.*) \}$/m.exec(guide)?.[1];
    expect(described, "the guide's comment on what deliverToSink returns").toBeDefined();
    const declared = readFileSync(join(project, "node_modules", "benefits-sync", "dist", "src", "sinks", "ledger.d.ts"), "utf8");
    const fields = new Set([.../interface DeliveryOutcome<T> \{([\s\S]*?)\n\}/.exec(declared)![1]!.matchAll(/readonly (\w+)\??:/g)].map((m) => m[1]!));
    const named = [...described!.matchAll(/(?:^|, )(\w+)\??(?=[:,( ]|$)/g)].map((m) => m[1]!);
    expect(named).toEqual(["status", "runs", "values", "error"]);
    expect(named.filter((n) => !fields.has(n))).toEqual([]);
  });

  it("sync from code: the first run loads the sandbox; another PII key is refused (exit 2) and changes nothing", async () => {
    const first = await example("sync-from-code");
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^run 1 succeeded$/m);
    firstMembers = [...sb.iterate("members")].map((m) => ({ id: m.id, ssn: m.ssn }));
    const n = firstMembers.length;
    expect(first.stdout).toContain(`members: ${n} seen, ${n} inserted, 0 updated, 0 deleted`);
    expect(Number(/^claims: (\d+) seen/m.exec(first.stdout)?.[1])).toBeGreaterThan(0);

    const wrongKey = await example("sync-from-code", [], { BENEFITS_PII_KEY: "another-key-than-the-snapshots-0123" });
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toMatch(/^pii key: the snapshot .* was tokenised with another PII key/m);
    expect(wrongKey.stderr).not.toContain("another-key-than-the-snapshots-0123");
    // No run was recorded by the refused one.
    const none = await example("read-changes", ["2"]);
    expect({ code: none.code, stderr: none.stderr }).toMatchObject({ code: 2, stderr: expect.stringMatching(/^there is no run 2 in this snapshot/) });
    const latest = await example("read-changes");
    expect(latest.stdout).toMatch(/^run 1 \(succeeded\): \d+ changes$/m);
  });

  it("read a run's changes: after a simulated day, run 2's changes are exactly the sandbox's record of it", async () => {
    const day = await sb.advance();
    const second = await example("sync-from-code");
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^run 2 succeeded$/m);
    const read = await example("read-changes", ["2"]);
    expect(read.code, read.stderr).toBe(0);
    const lines = changeLines(read.stdout);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).toEqual(truthLines(day));
    // An update names its changed fields.
    expect(read.stdout).toMatch(/^members update \S+ \S+/m);
    expect(read.stdout).toMatch(/^run 2 \(succeeded\): \d+ changes$/m);

    const bad = await example("read-changes", ["two"]);
    expect({ code: bad.code, stderr: bad.stderr.trim() }).toEqual({ code: 2, stderr: 'expected a run id (a positive whole number), got "two"' });
    const missing = await example("read-changes", ["99"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^there is no run 99 in this snapshot/);
  });

  it("deliver to a sink of your own: each run once, nothing twice, a failed delivery stays pending and rides with the next", async () => {
    const usage = await example("my-sink");
    expect({ code: usage.code, stderr: usage.stderr.trim() }).toEqual({ code: 2, stderr: "usage: node my-sink.js FOLDER   (the folder the JSON-lines files go to; it must exist)" });
    const out = join(tmp, "jsonl");
    mkdirSync(out);
    const first = await example("my-sink", [out]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^delivered runs 1, 2$/m);
    const run2 = readFileSync(join(out, "run-00000002.jsonl"), "utf8").trim().split("\n");
    const read2 = changeLines((await example("read-changes", ["2"])).stdout);
    expect(run2.map((l) => JSON.parse(l) as { resource: string; op: string; id: string }).map((c) => `${c.resource} ${c.op} ${c.id}`).sort()).toEqual(read2);
    for (const secret of [PII_KEY, sb.keys.full]) expect(run2.join("\n")).not.toContain(secret);
    // The sink gets SSN tokens under the snapshot's PII key, never an SSN.
    const run1 = readFileSync(join(out, "run-00000001.jsonl"), "utf8");
    const inserted = new Map(run1.trim().split("\n").map((l) => JSON.parse(l) as { resource: string; id: string; data: Record<string, unknown> }).filter((c) => c.resource === "members").map((c) => [c.id, c.data]));
    expect(inserted.size).toBe(firstMembers.length);
    for (const m of firstMembers) {
      expect(inserted.get(m.id)).toMatchObject({ ssn_token: expectedSsnToken(m.ssn, Buffer.from(PII_KEY)) });
      expect(inserted.get(m.id)).not.toHaveProperty("ssn");
      for (const form of [m.ssn, m.ssn.replace(/\D/g, "")]) expect(run1).not.toContain(form);
    }

    const again = await example("my-sink", [out]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^nothing to deliver/m);

    // Run 3, then a delivery that cannot write its folder: it fails and run 3 stays pending.
    await sb.advance();
    expect((await example("sync-from-code")).stdout).toMatch(/^run 3 succeeded$/m);
    rmSync(out, { recursive: true });
    writeFileSync(out, "not a folder");
    const failed = await example("my-sink", [out]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^delivery failed, runs 3 stay pending: /m);
    rmSync(out);
    mkdirSync(out);
    const retried = await example("my-sink", [out]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(/^delivered runs 3$/m);
    expect(readdirSync(out)).toEqual(["run-00000003.jsonl"]);
  });

  it("webhooks inside your own server: your routes answer, the sandbox's deliveries are accepted and applied as runs", async () => {
    const noSecret = await example("webhooks-in-your-server", [], { PORT: "0" });
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toMatch(/^no webhook secret is configured: set BENEFITS_WEBHOOK_SECRET/);
    const server = startNode(join(project, "out", "webhooks-in-your-server.js"), [], { ...env, BENEFITS_WEBHOOK_SECRET: SECRET, PORT: "0" }, project);
    try {
      const base = await waitUntil("the example's listening line", () => /^listening on (\S+) /m.exec(server.stdout())?.[1], WAIT_MS);
      const own = await request(`${base}/`);
      expect(await own.body.text()).toBe("your app\n");
      const health = await request(`${base}/healthz`);
      expect(health.statusCode).toBe(200);
      await health.body.dump();
      const unsigned = await request(`${base}/webhooks`, { method: "POST", body: '{"id":"evt_x","type":"member_update","payload":{"id":"m1"}}' });
      expect(unsigned.statusCode).toBe(401);
      await unsigned.body.dump();

      sb.webhooks.addConfig({ url: `${base}/webhooks`, auth: { type: "bearer", token: "portal-token-0123" }, secret: SECRET });
      const day = await sb.advance();
      await sb.webhooks.idle();
      const deliveries = sb.webhooks.deliveries();
      expect(deliveries.length).toBeGreaterThan(0);
      expect(deliveries.filter((d) => d.state !== "successful")).toEqual([]);
      // Every event applied by the worker, in runs of job `webhooks` (each printed with its run id).
      // A line per drain, which may have applied in several runs (it printed the drain's events once
      // for each of its runs before, and a drain of two runs, likelier on a loaded machine, never
      // added up: the wait below timed out on a suite run beside two others).
      const applied = () => [...server.stdout().matchAll(/^applied: ((?:run \d+ succeeded \(\d+ members\)(?:, )?)+); (\d+) events, (\d+) pending$/gm)];
      const events = () => applied().reduce((n, m) => n + Number(m[2]), 0);
      await waitUntil(`the worker to apply all ${deliveries.length} events`, () => events() >= deliveries.length, WAIT_MS).catch((e: Error) => {
        throw new Error(`${e.message}; the example printed:\n${server.stdout().slice(-1500)}`);
      });
      expect(events()).toBe(deliveries.length);
      const runs = applied().flatMap((m) => [...m[1]!.matchAll(/run (\d+)/g)].map((r) => r[1]!));
      const changed = new Set([...day.changes.members.inserted, ...day.changes.members.updated]);
      for (const run of runs) {
        const read = await example("read-changes", [run]);
        expect(read.code, read.stderr).toBe(0);
        for (const line of changeLines(read.stdout).filter((l) => l.startsWith("members "))) expect(changed.has(line.split(" ")[2]!), line).toBe(true);
      }
    } finally {
      server.child.kill("SIGTERM");
    }
    const done = await server.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.trim().split("\n").at(-1)).toBe("stopped");
    for (const secret of [SECRET, PII_KEY, sb.keys.full]) expect(done.stdout + done.stderr).not.toContain(secret);
  });

  it("the lease: a sync while another holds the snapshot exits 75 and changes nothing; the stopped run is resumed by the next", async () => {
    // Every request of the service hangs: the first run holds the lease while it waits.
    sb.setFaults({ hang: 1 });
    const holder = startNode(join(project, "out", "sync-from-code.js"), [], env, project);
    let stopped: Finished;
    try {
      await waitUntil("the first run's request to hang at the sandbox", () => (sb.stats().byStatus.hang ?? 0) > 0, WAIT_MS);
      const second = await example("sync-from-code");
      expect(second.code, second.stderr).toBe(75);
      expect(second.stderr).toMatch(/^no run started \(busy\): run (\d+) \(pid \d+ on .*\) holds this snapshot until .*; try again later/m);
    } finally {
      holder.child.kill("SIGTERM");
      stopped = await holder.done;
      sb.setFaults({});
    }
    const held = /^run (\d+) failed: stopped by SIGTERM$/m.exec(stopped.stdout);
    expect({ code: stopped.code, held: held !== null }, stopped.stdout + stopped.stderr).toEqual({ code: 1, held: true });
    const next = await example("sync-from-code");
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toMatch(new RegExp(`^run ${Number(held![1]) + 1} succeeded \\(resumed run ${held![1]}\\)$`, "m"));
  });
});
