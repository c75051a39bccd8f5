/**
 * The README is for a user: its sections in the order a user reads them (what it is, the two
 * commands, install, a five-minute start, one section per job, the guarantees), short enough to
 * read top to bottom (the long forms, figures and history live in docs/), no sentence promising
 * what already landed or untrue, and every link to a file or a section pointing at something that
 * exists, in the README and in the docs/ pages its text moved to.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { buildProgram } from "../../src/cli/program.js";
import { README } from "../helpers/readme-blocks.js";

const text = readFileSync(README, "utf8");
const DOCS = join(dirname(README), "docs");

/** A page's lines outside fenced blocks (a `#` in a shell block is a comment, not a heading). */
function prose(page = text): string[] {
  let fence = false;
  return page.split("\n").filter((l) => {
    if (l.startsWith("```")) fence = !fence;
    return !fence && !l.startsWith("```");
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (h: string) => h.toLowerCase().replace(/[^a-z0-9 _-]/g, "").replace(/ /g, "-");

describe("the README", () => {
  it("has its sections in the order a user needs them", () => {
    const sections = prose().filter((l) => l.startsWith("## ")).map((l) => l.slice(3));
    const wanted = ["The two commands", "Install", "Five-minute start", "Nightly export", "Analysts", "Incremental runs and webhooks", "Reconciliation", "Census", "Guarantees", "CLI", "Performance", "The long tests"];
    const at = wanted.map((w) => sections.findIndex((s) => s.startsWith(w)));
    expect(at.filter((i) => i < 0), `sections missing: ${wanted.filter((_, k) => at[k]! < 0).join(", ")}`).toEqual([]);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it("stays short, and says nothing stale", () => {
    expect(text.split("\n").length - (text.endsWith("\n") ? 1 : 0)).toBeLessThanOrEqual(350); // as `wc -l` counts
    // "another project": the name is unclaimed on the public registry, so npx would fetch whoever claims it.
    for (const stale of ["has not landed", "does not exist yet", "npx benefits-sync", "which is another project"]) expect(text).not.toContain(stale);
  });

  it("says how long the two commands and each long test take", () => {
    const section = (h: string) => text.slice(text.indexOf(`## ${h}`)).split(/^## /m)[1] ?? "";
    expect(section("The two commands")).toMatch(/npm run demo[\s\S]*npm test/);
    expect(section("The two commands").match(/about \d+ (seconds|minutes)/gi)?.length).toBe(2);
    // The demo's time leaves out nothing a newcomer waits for: the first install compiles better-sqlite3.
    expect(section("The two commands")).toMatch(/first `npm install` \(\d+ minutes here: it compiles better-sqlite3\)/);
    for (const long of ["test:sim", "test:kill9", "test:mutation", "bench"]) expect(section("The long tests")).toMatch(new RegExp(`\`npm run ${long}\`:[^\\n]*`));
  });

  it("links only to files and sections that exist, in the README and in docs/", () => {
    const anchorsOf = (path: string) => new Set(prose(readFileSync(path, "utf8")).filter((l) => /^#{1,4} /.test(l)).map((l) => slug(l.replace(/^#+ /, ""))));
    const pages = [README, ...readdirSync(DOCS).filter((f) => f.endsWith(".md")).map((f) => join(DOCS, f))];
    const broken: string[] = [];
    for (const page of pages) {
      for (const m of prose(readFileSync(page, "utf8")).join("\n").matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [file, anchor] = target.split("#") as [string, string | undefined];
        const path = file === "" ? page : join(dirname(page), file);
        if (!existsSync(path)) broken.push(`${page}: ${target}`);
        else if (anchor !== undefined && path.endsWith(".md") && !anchorsOf(path).has(anchor)) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("shows in its CLI synopsis only the options each command has (or every command has)", () => {
    const block = /^## CLI\n+```\n([\s\S]*?)\n```/m.exec(text)?.[1];
    expect(block, "the CLI section's synopsis block").toBeDefined();
    const quiet = { write: () => true };
    const globals = buildProgram({ stdout: quiet, stderr: quiet }).program.options.map((o) => o.long);
    // One entry per command line; an indented line continues the one above; `plan|apply` is two commands.
    const entries: string[] = [];
    for (const line of block!.split("\n")) {
      if (line.startsWith("benefits-sync ")) entries.push(line.slice("benefits-sync ".length));
      else entries[entries.length - 1] += ` ${line.trim()}`;
    }
    const byLength = [...COMMANDS].sort((a, b) => b.name.length - a.name.length);
    const wrong: string[] = [];
    for (const entry of entries) {
      const [first = "", second = "", ...rest] = entry.split(" ");
      for (const alt of second.split("|")) {
        const synopsis = [first, alt, ...rest].join(" ");
        const spec = byLength.find((c) => synopsis === c.name || synopsis.startsWith(`${c.name} `));
        if (!spec) {
          wrong.push(`no command for "benefits-sync ${synopsis}"`);
          continue;
        }
        const own = spec.options.map((o) => /--[a-z-]+/.exec(o.flags)?.[0]);
        for (const [flag] of synopsis.matchAll(/--[a-z][a-z-]*/g)) if (!own.includes(flag) && !globals.includes(flag)) wrong.push(`${spec.name} has no ${flag}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
