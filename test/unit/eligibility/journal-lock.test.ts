import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApplyJournal, JournalBusyError } from "../../../src/eligibility/apply-journal.js";
import { LOCK_LEASE_MS, takeJournalLock } from "../../../src/eligibility/journal-lock.js";
import { waitUntil } from "../../helpers/wait.js";

/**
 * The journal lock, with real processes on a real file system: a stale lock taken over by several
 * processes at once is never held by two; a process that lost its lock does not remove another's;
 * a lock whose pid now belongs to another process is taken over.
 */
const JOURNAL = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "dist", "src", "eligibility", "apply-journal.js");
/** A pid no process has (above any pid_max): a lock naming it was left by a process that is gone. */
const GONE_PID = "2147483646";

let dir: string;
beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), "bsync-journal-lock-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Each process takes the journal `wins` times. Holding it, it creates a marker file exclusively (a
 * second holder finds it there: an overlap), keeps it a moment, removes it, closes the journal and
 * leaves a stale lock (a gone pid) behind, so that every take is a takeover racing the others.
 */
const TAKER = `
import { closeSync, openSync, unlinkSync, writeFileSync } from "node:fs";
const { ApplyJournal } = await import(process.argv[1]);
const [path, marker, wins] = process.argv.slice(2);
let won = 0, overlaps = 0, busy = 0, errors = 0;
const until = Date.now() + 40_000;
while (won < Number(wins) && Date.now() < until) {
  let j;
  try { j = ApplyJournal.open(path); } catch (e) { if (e.code === "CENSUS_BUSY") busy++; else errors++; continue; }
  try { closeSync(openSync(marker, "wx")); } catch { overlaps++; }
  const end = performance.now() + 2;
  while (performance.now() < end);
  try { unlinkSync(marker); } catch {}
  j.close();
  try { writeFileSync(path + ".lock", "${GONE_PID}", { flag: "wx" }); } catch {}
  won++;
}
process.stdout.write(JSON.stringify({ won, overlaps, busy, errors }));
`;

interface Taken {
  won: number;
  overlaps: number;
  busy: number;
  /** Takes that failed with anything but "busy" (a lock file gone between a check and a read). */
  errors: number;
}

function runTaker(path: string, marker: string, wins: number): Promise<Taken> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", TAKER, JOURNAL, path, marker, String(wins)], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) =>
    child.once("close", (code) => (code === 0 ? resolve(JSON.parse(out) as Taken) : reject(new Error(`taker exited ${code}: ${err}`)))),
  );
}

describe("the journal lock", () => {
  it("a stale lock taken over by several processes at once is never held by two", async () => {
    const path = join(dir, "gp.journal.jsonl");
    writeFileSync(`${path}.lock`, GONE_PID);
    const results = await Promise.all([1, 2, 3, 4].map(() => runTaker(path, join(dir, "holding"), 150)));
    expect(results.map((r) => [r.overlaps, r.errors])).toEqual([[0, 0], [0, 0], [0, 0], [0, 0]]);
    // Every process got the lock its share of times: the takeovers went on racing to the end.
    expect(results.map((r) => r.won)).toEqual([150, 150, 150, 150]);
  }, 120_000);

  it("close() of an apply whose lock another process took leaves the other's lock alone", () => {
    const path = join(dir, "gp.journal.jsonl");
    const lost = ApplyJournal.open(path);
    const other = JSON.stringify({ pid: process.ppid, host: hostname(), token: "the-other-apply" });
    writeFileSync(join(dir, "other.tmp"), other);
    renameSync(join(dir, "other.tmp"), `${path}.lock`);
    lost.close();
    expect(readFileSync(`${path}.lock`, "utf8")).toBe(other);
  });

  it("a lock whose pid is alive but is another process (the pid reused) is taken over; the holder itself is not", async () => {
    const path = join(dir, "gp.journal.jsonl");
    const lock = `${path}.lock`;
    const other = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    try {
      const pid = await waitUntil("the stand-in process to start", () => other.pid, 30_000);
      await waitUntil("the stand-in process in /proc", () => {
        try {
          return readFileSync(`/proc/${pid}/stat`, "utf8").length > 0;
        } catch {
          return false;
        }
      }, 30_000);
      // An older version's lock (the pid alone), written an hour before that process started.
      writeFileSync(lock, String(pid));
      const anHourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(lock, anHourAgo, anHourAgo);
      const first = ApplyJournal.open(path);
      expect(JSON.parse(readFileSync(lock, "utf8"))).toMatchObject({ pid: process.pid });
      expect(() => ApplyJournal.open(path)).toThrow(JournalBusyError);
      first.close();
      // This version's lock: the pid with another start time than the live process's.
      writeFileSync(lock, JSON.stringify({ pid, start: "1", host: hostname(), token: "reused" }));
      const second = ApplyJournal.open(path);
      expect(JSON.parse(readFileSync(lock, "utf8"))).toMatchObject({ pid: process.pid });
      second.close();
      // The live process's own lock, start time and all, is not stale.
      const start = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19];
      writeFileSync(lock, JSON.stringify({ pid, start, host: hostname(), token: "live" }));
      expect(() => ApplyJournal.open(path)).toThrow(`pid ${pid}`);
    } finally {
      other.kill();
    }
  });

  it("a lock of another host (a container restarted under a new name) is busy while renewed, taken over once not renewed for the lease; a holder renews its own", () => {
    const path = join(dir, "gp.journal.jsonl");
    const lock = `${path}.lock`;
    writeFileSync(lock, JSON.stringify({ pid: 1, start: "5", boot: "another-boot", host: "bsync-old-container", token: "theirs" }));
    expect(() => ApplyJournal.open(path)).toThrow(/pid 1 on bsync-old-container, renewed .*taken over/);
    const justInside = new Date(Date.now() - LOCK_LEASE_MS + 30_000);
    utimesSync(lock, justInside, justInside);
    expect(() => ApplyJournal.open(path)).toThrow(JournalBusyError);
    const lapsed = new Date(Date.now() - LOCK_LEASE_MS - 1_000);
    utimesSync(lock, lapsed, lapsed);
    ApplyJournal.open(path).close();
    // A holder renews its own lock (its modification time), and only its own.
    const held = takeJournalLock(lock);
    try {
      const old = new Date(Date.now() - 60_000);
      utimesSync(lock, old, old);
      held.renew();
      expect(statSync(lock).mtimeMs).toBeGreaterThan(Date.now() - 30_000);
      writeFileSync(lock, JSON.stringify({ pid: 1, host: "bsync-old-container", token: "not-ours" }));
      utimesSync(lock, old, old);
      held.renew();
      expect(statSync(lock).mtimeMs).toBeLessThan(Date.now() - 50_000);
    } finally {
      held.release();
    }
    expect(readFileSync(lock, "utf8")).toContain("not-ours");
  });
});
