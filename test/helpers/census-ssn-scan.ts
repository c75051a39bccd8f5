/**
 * The census PHI rule checked from outside: no SSN of a census file, dashed or as nine digits, in
 * anything a command printed or wrote (stdout, stderr, the journal, result files, the snapshot).
 * The census files themselves are the user's, so they are left out of the scan.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";

/** Where text was found, and the text. */
export type Place = readonly [where: string, content: string];

/** The `ssn` column of a census CSV (a header row, plain cells), dashed as ddd-dd-dddd. */
export function censusSsns(csv: string): string[] {
  const [header = "", ...rows] = csv.split("\n").filter((l) => l.trim() !== "");
  const at = header.split(",").indexOf("ssn");
  if (at < 0) throw new Error("the census has no ssn column");
  return rows.map((r) => r.split(",")[at]!.replace(/\D/g, "")).map((d) => `${d.slice(0, 3)}-${d.slice(3, 5)}-${d.slice(5)}`);
}

/** Every file under `dir` (read as bytes, so a SQLite page counts), except the census files in `except`. */
export function writtenFiles(dir: string, except: readonly string[]): Place[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => join(dir, f))
    .filter((f) => !except.includes(f) && statSync(f).isFile())
    .map((f) => [f, readFileSync(f).toString("latin1")] as const);
}

/** Fail naming the place that holds one of `ssns` (dashed or undashed). */
export function expectNoCensusSsn(places: readonly Place[], ssns: readonly string[]): void {
  expect(ssns.length).toBeGreaterThan(0);
  for (const [where, content] of places) {
    for (const ssn of ssns) {
      expect(content.includes(ssn), `${where} holds a census SSN`).toBe(false);
      expect(content.includes(ssn.replace(/-/g, "")), `${where} holds a census SSN`).toBe(false);
    }
  }
}
