/** A small data set and a driver for real syncs on a temp snapshot, for the sink tests. */
import { execFileSync } from "node:child_process";
import { sync, type RunReport } from "../../../src/pipeline/sync.js";
import { memorySource, type MemoryData, type MemorySourceOptions } from "../../helpers/memory-source.js";
import type { TempStore } from "../../helpers/temp-store.js";

export const WINDOW = { from: "2026-01-01", to: "2026-03-31" };

export function baseData(): MemoryData {
  return {
    designs: [{ id: "d1", name: "Gold", planType: "PPO" }],
    groups: [{ id: "gp1", groupId: "G1", sponsorName: "Acme", plans: [{ id: "p1", name: "Gold", basePlanDesignId: "d1" }] }],
    members: [member("m1", "Ana"), member("m2", "Zoë"), member("m3", "李")],
    claims: [claim("k1", "2026-02-01"), claim("k2", "2026-02-02")],
  };
}

export function member(id: string, first: string) {
  return {
    id,
    firstName: first,
    lastName: "Nguyễn",
    ssn: `123-45-67${id.slice(-1).padStart(2, "0")}`,
    address: { city: "Austin" },
    coverages: [{ id: `c-${id}`, groupId: "G1", status: "active", startDate: "2026-01-01", endDate: null }],
  };
}

export function claim(id: string, date: string) {
  return { id, groupId: "G1", serviceDateFrom: date, claimStatus: "pending", claimAmount: "100.00", lines: [{ code: "99213", amount: "100.00" }] };
}

/** A run that started (and so has an id). */
export interface Ran {
  readonly runId: number;
  readonly status: string;
  readonly resumedFrom?: number | undefined;
}

function started(r: RunReport): Ran {
  if (typeof r.runId !== "number" || r.runId <= 0) throw new Error(`the run did not start: ${JSON.stringify(r)}`);
  return r as Ran;
}

/** One real sync of `data` into the temp store. */
export async function runSync(t: TempStore, data: MemoryData, opts: MemorySourceOptions & { window?: { from: string; to: string } } = {}): Promise<Ran> {
  return started(await sync({ source: memorySource(() => data, opts), store: t.store, claimsWindow: opts.window ?? WINDOW }));
}

/** A run that commits some changes and then fails: the designs page is applied, the walk dies on members. */
export async function failedRunWithChanges(t: TempStore, data: MemoryData, window = { from: "2025-12-01", to: "2026-03-31" }): Promise<Ran> {
  const r = started(await sync({ source: memorySource(() => data, { failFromFetch: 4, pageSize: 1 }), store: t.store, claimsWindow: window }));
  if (r.status !== "failed") throw new Error("expected the run to fail");
  return r;
}

/** Parse a CSV file with Python's csv module (a parser we did not write): the rows, header first. */
export function parseCsv(path: string): string[][] {
  const script = "import csv, json, sys\nwith open(sys.argv[1], newline='', encoding='utf-8') as f:\n    print(json.dumps(list(csv.reader(f, strict=True))))";
  return JSON.parse(execFileSync(python(), ["-c", script, path], { encoding: "utf8" })) as string[][];
}

let pythonPath: string | undefined;
/**
 * The interpreter itself, asked once: `python3` on the PATH may be a version manager's shim that
 * starts a shell and a few processes on every call (about 0.3 s here, several seconds on a loaded
 * machine, where a test parsing a dozen files ran past its time limit).
 */
function python(): string {
  pythonPath ??= execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim();
  return pythonPath;
}

/** The rows of a CSV file as objects keyed by the header. */
export function csvObjects(path: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(path);
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
}
