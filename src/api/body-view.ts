import type { BodyView } from "../errors.js";
import { carriesPeople } from "./people-endpoints.js";

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
