/**
 * The peak memory of `census plan` at a given census size (docs/census.md states what it gives at
 * the file size limit). A sandbox in this process, a sync into a snapshot, then a census of ROWS
 * rows: the biggest group's subscribers as they are (one in ten with a new address), then new
 * households (a subscriber, a spouse, a child), one row in a hundred with a bad date. `census plan
 * --json` runs under /usr/bin/time; its peak RSS and time are printed.
 *
 *   npm run build && node dist/bench/census-size.js 300000 [MEMBERS=20000] [--keep DIR]
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startSandbox, type MemberRec } from "../src/sandbox/index.js";

const CLI = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "cli", "main.js");
const HEADER = "employee_id,relationship,first_name,last_name,date_of_birth,ssn,gender,email,phone,address_line1,city,state,zip,plan_id";

async function writeCensus(file: string, rows: number, members: MemberRec[], gp: string, plan: string): Promise<number> {
  const out = createWriteStream(file);
  const write = (line: string) => (out.write(`${line}\n`) ? undefined : new Promise<void>((r) => out.once("drain", () => r())));
  await write(HEADER);
  let n = 0;
  const subs = members.filter((m) => m.relationship === "self" && /^\d{3}-\d{2}-\d{4}$/.test(m.ssn) && m.coverages.some((c) => c.groupPolicyId === gp && c.endDate === null));
  for (const m of subs) {
    if (n >= rows) break;
    const a = m.address;
    const line1 = n % 10 === 0 ? `${n} Census Way` : a.line1;
    await write([m.subscriberId, "self", m.firstName, m.lastName, m.dateOfBirth, m.ssn, m.gender, m.email ?? "", m.phone ?? "", line1, a.city, a.state, a.zip, ""].join(","));
    n++;
  }
  for (let h = 0; n < rows; h++) {
    for (const [rel, first] of [["self", "Pat"], ["spouse", "Sam"], ["child", "Kim"]] as const) {
      if (n >= rows) break;
      const ssn = String(700_000_000 + n);
      const dob = n % 100 === 99 ? "1990-13-01" : `19${50 + (n % 50)}-0${1 + (n % 9)}-${String(1 + (n % 28)).padStart(2, "0")}`;
      await write([`N${h}`, rel, `${first}${n}`, `Household${h}`, dob, `${ssn.slice(0, 3)}-${ssn.slice(3, 5)}-${ssn.slice(5)}`, "F", `p${n}@example.com`, "555-010-0000", `${h} Elm St`, "Springfield", "IL", "62701", plan].join(","));
      n++;
    }
  }
  await new Promise<void>((r) => out.end(() => r()));
  return statSync(file).size;
}

async function main(): Promise<void> {
  const [rowsArg, membersArg] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  const keep = process.argv.indexOf("--keep");
  const rows = Number(rowsArg ?? 300_000);
  const memberCount = Number(membersArg ?? 20_000);
  const dir = keep > 0 ? process.argv[keep + 1]! : mkdtempSync(join(tmpdir(), "bsync-census-size-"));
  const sb = await startSandbox({ members: memberCount, groups: 2, seed: 7 });
  try {
    const env = { PATH: process.env.PATH ?? "", BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db") };
    const members = [...sb.iterate("members")];
    const count = (gp: string) => members.filter((m) => m.coverages.some((c) => c.groupPolicyId === gp)).length;
    const group = [...sb.iterate("groups")].reduce((a, b) => (count(b.id) > count(a.id) ? b : a));
    // Asynchronously: the sandbox answers from this process's event loop.
    await promisify(execFile)(process.execPath, [CLI, "sync"], { env, maxBuffer: 1 << 26 });
    const file = join(dir, "census.csv");
    const bytes = await writeCensus(file, rows, members, group.id, group.plans[0]!.id);
    const time = join(dir, "time");
    const json = execFileSync("/usr/bin/time", ["-f", "%e %M", "-o", time, process.execPath, CLI, "--json", "census", "plan", file, "--group", group.id], { env, maxBuffer: 1 << 30 }).toString();
    const [seconds, kb] = readFileSync(time, "utf8").trim().split("\n").pop()!.split(" ");
    const plan = JSON.parse(json) as Record<string, unknown>;
    const len = (k: string) => (Array.isArray(plan[k]) ? (plan[k] as unknown[]).length : 0);
    console.log(
      `census plan: ${rows} rows (${(bytes / 1024 / 1024).toFixed(1)} MB, ${Math.round(bytes / rows)} bytes a row) against ${count(group.id)} members of the group: ` +
        `${seconds} s, peak ${Math.round(Number(kb) / 1024)} MB ` +
        `(plan: ${len("addSubscribers")} subscribers to add, ${len("updates")} updates, ${len("unmatched")} unmatched, ${len("problems")} problems)`,
    );
  } finally {
    await sb.close();
    if (keep < 0) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
