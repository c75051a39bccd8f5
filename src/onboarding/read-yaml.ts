/**
 * A YAML group file, read as strictly as the JSON one: YAML 1.2's core schema (so `2026-01-01`
 * stays a string and `no` stays `no`), a repeated key refused, aliases bounded. A YAML error names
 * the line and column only: the parser's own message quotes the source line, which may hold an
 * SSN, and nothing this tool prints quotes a person's data.
 */
import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import type { FileRead } from "../config/read-file.js";

/** "line L, column C" (both from 1) of an offset in the text. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/**
 * @example
 * readYamlFile("acme-2026.yaml", "acme-2026.yaml") // { kind: "ok", data: { groupId: "G-1", ... } }
 */
export function readYamlFile(file: string, display: string): FileRead {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : `cannot be read (${code ?? "error"})`;
    return { kind: "problem", problem: `${display}: ${why}` };
  }
  const doc = parseDocument(text, { schema: "core", uniqueKeys: true, prettyErrors: false, merge: false });
  const err = doc.errors[0];
  if (err) {
    const where = ` at ${lineAndColumn(text, err.pos[0])}`;
    return { kind: "problem", problem: `${display}: not valid YAML${where} (${err.code === "DUPLICATE_KEY" ? "a key given twice" : err.code.toLowerCase().replace(/_/g, " ")})` };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch {
    return { kind: "problem", problem: `${display}: not valid YAML (too many aliases)` };
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return { kind: "problem", problem: `${display}: expected a mapping of the group's keys, got ${Array.isArray(data) ? "a list" : data === null ? "nothing" : `a ${typeof data}`}` };
  }
  return { kind: "ok", data: data as Record<string, unknown> };
}
