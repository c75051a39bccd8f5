import type { ValidationIssue } from "../../schemas/error-body.js";
import type { BodyView } from "../errors.js";
import { carriesPeople } from "./people-endpoints.js";
import { redactDeep } from "./redact-deep.js";

/**
 * What an error about the answer of `endpoint` may show of its body: an excerpt (redacted by the
 * error) for most endpoints, but only a description of its shape for one that carries people.
 *
 * @example
 * bodyView("<html>…", "GET /v2/members") // { shape: "an HTML page (5123 bytes), not quoted: ..." }
 */
export function bodyView(text: string, endpoint: string): BodyView {
  if (!carriesPeople(endpoint)) return { excerpt: text };
  return { shape: `${describeBody(text)}, not quoted: this endpoint's answers carry member data` };
}

/** What an error keeps of a JSON error answer: the server's message and its validation issues. */
export interface ErrorBodyView {
  readonly serverMessage: string | undefined;
  readonly issues: readonly ValidationIssue[] | undefined;
}

const NOT_QUOTED = "(not quoted)";

/**
 * What an error about a JSON error answer of `endpoint` may keep: the server's `message` and
 * `errors` (redacted by the error) for most endpoints. One that carries people may name the person
 * in any text ("... taken by member Jane Roe born 1980-02-03"), so its answer is described: how many
 * `errors` entries and their field paths, never a message.
 *
 * @example
 * errorBodyView({ message: "taken by Jane Roe", errors: [{ path: ["email"], message: "Jane" }] }, "GET /v2/members")
 * // { serverMessage: "not quoted (this endpoint's answers carry people's data); 1 errors entry",
 * //   issues: [{ path: ["email"], message: "(not quoted)" }] }
 */
export function errorBodyView(body: { message?: string | undefined; errors?: readonly ValidationIssue[] | undefined }, endpoint: string): ErrorBodyView {
  if (!carriesPeople(endpoint)) return { serverMessage: body.message, issues: body.errors === undefined ? undefined : redactDeep([...body.errors]) };
  const errors = body.errors ?? [];
  const count = `${errors.length} errors ${errors.length === 1 ? "entry" : "entries"}`;
  return {
    serverMessage: `${body.message === undefined ? "the answer" : "its message"} not quoted (this endpoint's answers carry people's data); ${count}`,
    issues: errors.map((i) => ({ path: redactDeep([...i.path]), message: NOT_QUOTED })),
  };
}

/**
 * Describe a body by its length and what it starts with, never by its text.
 *
 * @example
 * describeBody('{"data":[{"id":"m1","ssn":"12') // "truncated JSON (29 bytes)"
 */
export function describeBody(text: string): string {
  return `${kindOf(text)} (${Buffer.byteLength(text, "utf8")} bytes)`;
}

function kindOf(text: string): string {
  const head = text.trimStart().slice(0, 1024).toLowerCase();
  if (head === "") return "an empty body";
  if (/^(?:<!--[\s\S]*?-->\s*)*<!doctype html|<html[\s>]/.test(head)) return "an HTML page";
  if (head.startsWith("<?xml")) return "an XML document";
  if (head.startsWith("<")) return "markup";
  if (head[0] === "{" || head[0] === "[") return jsonEndsOpen(text) ? "truncated JSON" : "malformed JSON";
  if (/^[a-z]/.test(head)) return "text starting with a letter";
  if (/^[0-9]/.test(head)) return "text starting with a digit";
  return "text starting with punctuation";
}

/** True when the text ends inside a string or with an object or array still open: cut short, not mistyped. */
function jsonEndsOpen(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return inString || depth > 0;
}
