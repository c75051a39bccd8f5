/**
 * Two census appliers in the simulation: `census apply` as cron and an operator run it, two
 * processes of the built CLI at once on one group, after a first apply was killed mid-way, against
 * the sandbox (its writes, its enrollment requests and its delays are real), with answers lost
 * after the service applied a write.
 *
 * A schedule, from its seed: the sandbox's size and enrollment delay; a census of 2-7 new hires of
 * one group; maybe a first apply killed (kill -9) once it has recorded a drawn number of writes
 * in its journal (its lock and its open writes stay behind, the stale lock of a dead process);
 * then two appliers started a drawn few milliseconds apart, with the service losing a drawn share
 * of write answers; then, with the faults gone, one apply alone until it succeeds (at most 3).
 *
 * What must hold (any other outcome is a violation):
 * - `census-twice`: every hire exists exactly once in the service, and the service refused no
 *   write as already done (a write sent again keeps its member id: 400 "already enrolled"); a
 *   write whose answer was lost is looked for, not sent again; two appliers never both hold the group;
 * - `census-exit`: each of the two appliers exits 0 (it applied, or found it all done), 75 (the
 *   other holds the group) or 1 (a write stayed unsettled: the next apply settles it); the final
 *   apply exits 0;
 * - `census-lock-left`: no lock is left once every apply that was not killed has exited;
 * - `census-ssn`: no census SSN in anything printed or written (journal, result files).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type MemberRec } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { censusSsns, writtenFiles, type Place } from "../helpers/census-ssn-scan.js";
import { waitUntil } from "../helpers/wait.js";
import { Rng } from "./rng.js";

export interface CensusViolation {
  readonly kind: "census-twice" | "census-exit" | "census-lock-left" | "census-ssn";
  readonly message: string;
}

export interface CensusOutcome {
  readonly violations: CensusViolation[];
  readonly trace: string[];
}

const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,plan_id";

type Done = Awaited<ReturnType<typeof startCli>["done"]>;

/** One schedule of census appliers, from its seed. */
export async function runCensusSchedule(seed: number): Promise<CensusOutcome> {
  const rng = Rng.derive(seed, 20);
  const trace: string[] = [];
  const violations: CensusViolation[] = [];
  const dir = mkdtempSync(join(tmpdir(), "bsync-census-sim-"));
  const enrollmentDelayMs = rng.pick([0, 150, 1200]);
  const sb = await startSandbox({ members: 30, groups: 2, seed: seed % 997, enrollmentDelayMs });
  const printed: Place[] = [];
  try {
    const group = [...sb.iterate("groups")].at(-1)!;
    const n = rng.between(2, 7);
    const last = `Sim${seed}`;
    const file = join(dir, "census.csv");
    const rows = Array.from({ length: n }, (_, i) => `E${i + 1},self,Hire${i + 1},${last},1990-02-${String(10 + i)},901-${String(10 + (seed % 89))}-${String(1000 + i)},${group.plans[0]!.id}`);
    writeFileSync(file, `${HEADER}\n${rows.join("\n")}\n`);
    const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db") };
    const args = (result: string) => ["census", "apply", file, "--group", group.id, "--batch-size", String(rng.between(1, 3)), "--settle-seconds", "2", "--result", join(dir, result)];
    const journal = join(dir, "snap.db.census", `${group.id}.journal.jsonl`);
    const keep = (what: string, d: Done) => printed.push([`${what} stdout`, d.stdout], [`${what} stderr`, d.stderr]);
    trace.push(`census schedule ${seed}: ${n} hire(s) into ${group.id}, enrollment delay ${enrollmentDelayMs} ms`);

    // A first apply killed once it has recorded `killAt` writes' intents: its lock and its open writes stay.
    if (rng.chance(0.6)) {
      const killAt = rng.between(0, n - 1);
      const first = startCli(args("first.json"), env, dir);
      const intents = () => (existsSync(journal) ? readFileSync(journal, "utf8").split("\n").filter((l) => l.includes('"t":"intent"')).length : 0);
      await Promise.race([waitUntil(`the first apply's ${killAt} intent(s) in its journal`, () => intents() >= killAt, 60_000).catch(() => undefined), first.done]);
      first.child.kill("SIGKILL");
      const d = await first.done;
      keep("first apply", d);
      trace.push(`  first apply killed (${d.signal ?? `exit ${d.code}`}) after ${intents()} intent(s)`);
    }

    // Two appliers at once, a drawn few ms apart, the service losing a drawn share of write answers.
    const lost = rng.pick([0, 0, 0.3, 0.6]);
    if (lost > 0) sb.setFaults({ lostAnswer: lost, seed });
    const gap = rng.between(0, 250);
    const a = startCli(args("a.json"), env, dir);
    if (gap > 0) await new Promise((r) => setTimeout(r, gap));
    const b = startCli(args("b.json"), env, dir);
    const both = await Promise.all([a.done, b.done]);
    sb.setFaults({});
    for (const [i, d] of both.entries()) {
      keep(`applier ${i}`, d);
      if (d.code !== 0 && d.code !== 75 && d.code !== 1) violations.push({ kind: "census-exit", message: `applier ${i} exited ${d.code ?? d.signal}: ${d.stderr.slice(0, 300)}` });
    }
    trace.push(`  two appliers ${gap} ms apart, ${lost * 100}% of answers lost: exits ${both.map((d) => d.code).join(", ")}`);

    // Then one apply alone, no fault, until it succeeds.
    let final: Done | undefined;
    for (let i = 0; i < 3 && final?.code !== 0; i++) {
      final = await startCli(args(`final-${i}.json`), env, dir).done;
      keep(`final apply ${i}`, final);
      trace.push(`  final apply ${i}: exit ${final.code}`);
    }
    if (final?.code !== 0) violations.push({ kind: "census-exit", message: `the final apply alone did not succeed in 3 tries: ${final?.stderr.slice(0, 300)}` });

    const hires = ([...sb.iterate("members")] as MemberRec[]).filter((m) => m.lastName === last);
    const names = hires.map((m) => m.firstName).sort();
    const want = Array.from({ length: n }, (_, i) => `Hire${i + 1}`).sort();
    if (JSON.stringify(names) !== JSON.stringify(want)) violations.push({ kind: "census-twice", message: `the service holds hires [${names.join(", ")}], not each of [${want.join(", ")}] once` });
    // A write sent again with the same member id is refused (400 "already enrolled"); no 400 is injected here.
    const stats = sb.stats();
    const sent = stats.writes[`POST /v3/groups/${group.id}/enroll/add-subscriber`] ?? 0;
    const refused = stats.byStatus["400"] ?? 0;
    if (refused > 0) violations.push({ kind: "census-twice", message: `the service refused ${refused} write(s) with 400: a write sent again` });
    const locks = existsSync(join(dir, "snap.db.census")) ? readdirSync(join(dir, "snap.db.census")).filter((f) => f.endsWith(".lock")) : [];
    if (locks.length) violations.push({ kind: "census-lock-left", message: `left behind after every apply exited: ${locks.join(", ")}` });
    const ssns = censusSsns(readFileSync(file, "utf8"));
    for (const [where, text] of [...printed, ...writtenFiles(dir, [file])]) {
      if (ssns.some((s) => text.includes(s) || text.includes(s.replace(/-/g, "")))) violations.push({ kind: "census-ssn", message: `${where} holds a census SSN` });
    }
    trace.push(`  service: ${hires.length} hire(s), ${sent} add-subscriber write(s)`);
    return { violations, trace };
  } finally {
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
