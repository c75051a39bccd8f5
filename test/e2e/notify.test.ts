/**
 * `notify`: a chat webhook hears of a failed job and of fields the service added without notice,
 * in one short Slack-compatible message (`{"text": ...}`), and of nothing else. The message never
 * carries a person's data (every SSN the sandbox served, dashed or not) or the API key; one that
 * does not land is a warning naming the receiver by host and port, never the exit status. The
 * built CLI against the sandbox, the receiver a node:http server, all over loopback.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { closedPort } from "../helpers/ports.js";
import { docPage } from "../helpers/readme-blocks.js";
import { startReceiver, type Received, type Receiver } from "../helpers/receiver.js";
import { sandboxData } from "../helpers/sandbox-truth.js";
import { waitUntil } from "../helpers/wait.js";

const TOKEN = "T0001/B0002/chat-token-do-not-print";
let sb: Sandbox;
let dir: string;
let receiver: Receiver;
let hook: string;
let received: Received[];
/** Every SSN the sandbox serves, dashed and as nine digits. */
const ssns: string[] = [];

beforeAll(async () => {
  sb = await startSandbox({ members: 60, groups: 2, seed: 11 });
  dir = mkdtempSync(join(tmpdir(), "bsync-notify-"));
  receiver = await startReceiver((path) => (path.startsWith("/broken/") ? 500 : 200));
  ({ url: hook, received } = receiver);
  for (const m of sandboxData(sb).members) {
    const digits = String(m.ssn ?? "").replace(/\D/g, "");
    if (digits.length === 9) ssns.push(digits, `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}`);
  }
  expect(ssns.length).toBeGreaterThan(100);
});
afterAll(async () => {
  await sb?.close();
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder, snapshot and config for one story; `notify` as the config file gives it. */
function workspace(name: string, config: object | string): { cwd: string; env: Record<string, string> } {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  writeFileSync(join(cwd, "benefits-sync.config.json"), typeof config === "string" ? config : JSON.stringify(config));
  return { cwd, env: { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db") } };
}

const runJob = (w: { cwd: string; env: Record<string, string> }, extraEnv: Record<string, string> = {}) =>
  startCli(["run", "hourly-member-sync", "--json"], { ...w.env, ...extraEnv }, w.cwd).done;

/** The messages that arrived since `from`, each checked for the Slack shape. */
function messagesSince(from: number): string[] {
  return received.slice(from).map((m) => {
    expect(m.contentType).toBe("application/json");
    const parsed = JSON.parse(m.body) as { text: unknown };
    expect(Object.keys(parsed)).toEqual(["text"]);
    expect(typeof parsed.text).toBe("string");
    return parsed.text as string;
  });
}

function expectNoPhiOrKey(text: string): void {
  expect(text).not.toContain(sb.keys.full);
  for (const s of ssns) if (text.includes(s)) expect.fail(`an SSN the sandbox served is in: ${text}`);
}

/**
 * A listing that fails with a message naming a person, an SSN the sandbox served in it: on the
 * members' endpoint (whose messages are never quoted) or the groups' (quoted, redacted).
 */
const failingListing = (pathPrefix = "/v2/members") => ({ pathPrefix, http400: 1, errorMessage: `member Jane Roe (SSN ${ssns[1]}, ${ssns[0]}) is locked` });

describe("notify", () => {
  it("a run with new fields posts one message naming them; a succeeded run without any posts nothing", async () => {
    const w = workspace("fields", { notify: { url: `${hook}/hooks/${TOKEN}` }, schedule: { textfile: "metrics.prom" } });
    const before = received.length;
    const plain = await runJob(w);
    expect(plain.code, plain.stderr).toBe(0);
    expect(received.length, "a succeeded run without new fields posted a message").toBe(before);

    sb.setFaults({ extraFields: { members: { preferredLanguage: "en", benefitsContact: { name: "Pat Doe", ssn: ssns[1] } } } });
    try {
      const fresh = await runJob(w);
      expect(fresh.code, fresh.stderr).toBe(0);
      const runId = (JSON.parse(fresh.stdout) as { runId: number }).runId;
      const [text, ...more] = messagesSince(before);
      expect(more).toEqual([]);
      expect(received[before]!.path).toBe(`/hooks/${TOKEN}`);
      expect(text).toContain("hourly-member-sync");
      expect(text).toContain(`run ${runId}`);
      // The SSN inside the new object is named too, as masked (new-fields notice, issue 38).
      expect(text).toContain(
        "members: benefitsContact, benefitsContact.ssn (an SSN by its name: stored as benefitsContact.ssn_token and benefitsContact.ssn_last4), preferredLanguage",
      );
      expectNoPhiOrKey(text!);
      expect(readFileSync(join(w.cwd, "metrics.prom"), "utf8")).toContain('benefits_sync_new_field_paths{resource="members"} 3\n');

      // The same fields again are no news.
      const again = await runJob(w);
      expect(again.code, again.stderr).toBe(0);
      expect(received.length).toBe(before + 1);
    } finally {
      sb.setFaults({});
    }
  });

  it("a failing job posts one message with the job, run, status and error code, never an SSN or the key", async () => {
    const w = workspace("failing", { notify: { url: `${hook}/hooks/${TOKEN}` } });
    const before = received.length;
    sb.setFaults(failingListing("/v2/groups"));
    try {
      const r = await runJob(w);
      expect(r.code, r.stderr).toBe(1);
      const report = JSON.parse(r.stdout) as { runId: number; error: { code: string } };
      const [text, ...more] = messagesSince(before);
      expect(more).toEqual([]);
      expect(text).toContain("hourly-member-sync");
      expect(text).toContain(`run ${report.runId}`);
      expect(text).toContain("failed");
      expect(text).toContain(report.error.code);
      expectNoPhiOrKey(text!);
      expectNoPhiOrKey(r.stdout + r.stderr);
    } finally {
      sb.setFaults({});
    }
  });

  it("sync posts too: a failed sync is told", async () => {
    const w = workspace("sync", { notify: { url: `${hook}/hooks/${TOKEN}` } });
    const before = received.length;
    sb.setFaults(failingListing());
    try {
      const r = await startCli(["sync", "--quiet"], w.env, w.cwd).done;
      expect(r.code, r.stderr).toBe(1);
      const [text, ...more] = messagesSince(before);
      expect(more).toEqual([]);
      expect(text).toMatch(/^benefits-sync sync, run 1: failed: /);
      expectNoPhiOrKey(text!);
    } finally {
      sb.setFaults({});
    }
  });

  it("schedule posts too: a scheduled job that fails is told, with the variable the config names", async () => {
    const off = { enabled: false };
    const config = { notify: { urlEnv: "CHAT_URL" }, jobs: { "nightly-claims-export": off, "daily-groups-designs": off, "weekly-full-walk": off, "monthly-reconcile": off } };
    const w = workspace("schedule", config);
    const before = received.length;
    // A key the service refuses: the one enabled job, behind its schedule, fails at its first call.
    const daemon = startCli(["schedule", "--run-missed"], { ...w.env, BENEFITS_API_KEY: "sbx_refused_0000000000", CHAT_URL: `${hook}/hooks/${TOKEN}` }, w.cwd);
    let out = "";
    daemon.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    await waitUntil("the message of the failed job", () => received.length > before);
    await waitUntil("the job.failed line", () => out.includes('"event":"job.failed"'));
    daemon.child.kill("SIGTERM");
    const r = await daemon.done;
    expect(r.code, r.stderr).toBe(143);
    const [text, ...more] = messagesSince(before);
    expect(more).toEqual([]);
    expect(text).toMatch(/^benefits-sync hourly-member-sync, run 1: failed: /);
    expect(text).not.toContain("sbx_refused_0000000000");
  });

  it("a message that does not land is a warning naming the receiver by host and port; the exit status stays the run's", async () => {
    const answered500 = workspace("broken", { notify: { url: `${hook}/broken/${TOKEN}` } });
    sb.setFaults(failingListing());
    try {
      const r = await runJob(answered500);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`notify: the message to ${new URL(hook).host} was answered 500`);
      expect(r.stderr).not.toContain(TOKEN);
    } finally {
      sb.setFaults({});
    }
    const port = await closedPort();
    const nobody = workspace("nobody", { notify: { url: `http://127.0.0.1:${port}/hooks/${TOKEN}` } });
    sb.setFaults({ extraFields: { members: { preferredLanguage: "en" } } });
    try {
      const r = await runJob(nobody);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`notify: the message to 127.0.0.1:${port} could not be delivered`);
      expect(r.stderr).not.toContain(TOKEN);
    } finally {
      sb.setFaults({});
    }
  });

  it("a receiver that takes the connection and never answers: the job still ends, its status its run's, with the warning", async () => {
    const silent = createNetServer(() => {}); // accepts, reads nothing, answers nothing
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as AddressInfo).port;
    try {
      const w = workspace("silent", { notify: { url: `http://127.0.0.1:${port}/hooks/${TOKEN}` } });
      sb.setFaults(failingListing());
      const r = await runJob(w);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`notify: the message to 127.0.0.1:${port} could not be delivered`);
      expect(r.stderr).not.toContain(TOKEN);
    } finally {
      sb.setFaults({});
      silent.close();
    }
  });

  it("docs/jobs.md's notify config (moved there from the README), as printed: checked like the sinks' urlEnv, then a failing job is told", async () => {
    const text = readFileSync(docPage("jobs.md"), "utf8");
    const at = text.indexOf("**Notify.**");
    expect(at, "docs/jobs.md's notify passage").toBeGreaterThan(-1);
    const block = /```json\r?\n([\s\S]*?)```/.exec(text.slice(at))?.[1];
    expect(block, "a ```json block after the notify passage").toBeDefined();
    const w = workspace("readme", block!);

    const unset = await startCli(["config", "check"], w.env, w.cwd).done;
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain("notify.urlEnv: the environment variable SLACK_WEBHOOK_URL is not set");
    const refused = await runJob(w);
    expect(refused.code).toBe(2);
    const set = await startCli(["config", "check"], { ...w.env, SLACK_WEBHOOK_URL: `${hook}/hooks/${TOKEN}` }, w.cwd).done;
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(`  notify:   ${new URL(hook).host} (from SLACK_WEBHOOK_URL), on a failed run or new fields\n`);
    expect(set.stdout).not.toContain(TOKEN);

    const before = received.length;
    sb.setFaults(failingListing());
    try {
      const r = await runJob(w, { SLACK_WEBHOOK_URL: `${hook}/hooks/${TOKEN}` });
      expect(r.code, r.stderr).toBe(1);
      const [message, ...more] = messagesSince(before);
      expect(more).toEqual([]);
      expect(message).toContain("hourly-member-sync");
      expectNoPhiOrKey(message!);
    } finally {
      sb.setFaults({});
    }
  });
});
