/** Reading `benefits-sync.config.json`: the file is optional unless named with `--config`. */
import { readFileSync } from "node:fs";
import { blankComments } from "./json-comments.js";

export type FileRead =
  | { readonly kind: "absent" }
  | { readonly kind: "ok"; readonly data: Record<string, unknown> }
  | { readonly kind: "problem"; readonly problem: string };

/**
 * Read and parse a JSON config file (comments allowed: json-comments.ts). A syntax error names the file, the line and the column, and
 * never quotes the file's text: V8's own message quotes it, and the file may hold the API key.
 *
 * @example
 * readConfigFile("/nope.json", { required: false }) // { kind: "absent" }
 */
export function readConfigFile(file: string, opts: { required: boolean; display: string }): FileRead {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !opts.required) return { kind: "absent" };
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : `cannot be read (${code ?? "error"})`;
    return { kind: "problem", problem: `${opts.display}: ${why}` };
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // editors on Windows add a BOM
  text = blankComments(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const { line, column } = lineAndColumn(text, syntaxErrorPosition(text, (err as Error).message));
    return { kind: "problem", problem: `${opts.display}: not valid JSON at line ${line}, column ${column} (${reasonOf((err as Error).message)})` };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { kind: "problem", problem: `${opts.display}: expected a JSON object, got ${Array.isArray(parsed) ? "an array" : parsed === null ? "null" : `a ${typeof parsed}`}` };
  }
  return { kind: "ok", data: parsed as Record<string, unknown> };
}

/** V8's reason without the quoted source text and without the position. */
function reasonOf(message: string): string {
  return message.split(/,\s*"|,\s*\.\.\./)[0]!.replace(/\s*in JSON at position \d+.*$/, "").trim();
}

/**
 * Where the parse failed. V8 gives "at position N" for most errors but not for an unexpected
 * token; then a binary search finds the longest prefix that is still a valid beginning of JSON
 * (such a prefix fails only at its own end), and the bad token is the next character.
 */
export function syntaxErrorPosition(text: string, message: string): number {
  const m = /at position (\d+)/.exec(message);
  if (m) return Number(m[1]);
  const validPrefix = (k: number) => {
    try {
      JSON.parse(text.slice(0, k));
      return true;
    } catch (e) {
      // A truncated-but-valid beginning fails at its very end: "Unexpected end", or "at position k".
      const msg = (e as Error).message;
      const at = /at position (\d+)/.exec(msg);
      return at ? Number(at[1]) >= k : /Unexpected end of JSON input/.test(msg);
    }
  };
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (validPrefix(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const line = before.split("\n").length;
  return { line, column: position - before.lastIndexOf("\n") };
}
