/**
 * The suite's own deadlines: a defect fails a test in minutes, never holds it for ten. No single
 * wait for an event is over 60 s (its message names the event), and a test or hook that declares
 * no timeout of its own gives up after 2 min (vitest.config.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import config from "../../vitest.config.js";
import { EVENT_DEADLINE_MS } from "../helpers/wait.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MAX_WAIT_MS = 60_000;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === "fixtures" ? [] : tsFiles(join(dir, e.name))) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** The text of each `waitUntil(...)` call in `text` (parentheses balanced). */
function waitCalls(text: string): string[] {
  const calls: string[] = [];
  for (let at = text.indexOf("waitUntil("); at >= 0; at = text.indexOf("waitUntil(", at + 1)) {
    let depth = 0;
    for (let i = at + "waitUntil".length; i < text.length; i++) {
      if (text[i] === "(") depth++;
      else if (text[i] === ")" && --depth === 0) {
        calls.push(text.slice(at, i + 1));
        break;
      }
    }
  }
  return calls;
}

describe("the tests' deadlines", () => {
  it("no wait for an event is longer than 60 s: the default, and every deadline a test gives waitUntil", () => {
    expect(EVENT_DEADLINE_MS).toBeLessThanOrEqual(MAX_WAIT_MS);
    const longer: string[] = [];
    for (const file of tsFiles(join(ROOT, "test"))) {
      for (const call of waitCalls(readFileSync(file, "utf8"))) {
        const ms = /,\s*([\d_]+)\s*\)$/.exec(call)?.[1];
        if (ms !== undefined && Number(ms.replace(/_/g, "")) > MAX_WAIT_MS) longer.push(`${relative(ROOT, file)}: ${call.split("\n")[0]}`);
      }
    }
    expect(longer).toEqual([]);
  });

  it("a test or hook with no timeout of its own gives up after 2 min", () => {
    expect(config.test?.testTimeout).toBeLessThanOrEqual(120_000);
    expect(config.test?.hookTimeout).toBeLessThanOrEqual(120_000);
  });
});
