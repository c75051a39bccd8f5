/**
 * The config file may carry comments (`//` to the end of the line, and `/* ... *\/`), as the file
 * `benefits-sync init` writes does: they are read as white space, never inside a string (a URL
 * keeps its `//`), and a syntax error after a comment still names its own line and column.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import { ConfigError } from "../../../src/errors.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "bs-config-comments-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("comments in the config file", () => {
  it("reads // and /* */ comments as white space, and keeps // inside strings", () => {
    writeFileSync(
      path.join(dir, "benefits-sync.config.json"),
      [
        "// written by hand",
        "{",
        '  /* the service */ "baseUrl": "https://svc.test/v1", // a trailing comment with "quotes"',
        '  "db": "a//b.db", /* a comment',
        "     over two lines */",
        '  "sinks": { "lake": { "type": "folder", "dir": "x/*y*/z" } }',
        "}",
        "",
      ].join("\n"),
    );
    const c = loadConfig({ cwd: dir, env: {} });
    expect(c.baseUrl).toBe("https://svc.test/v1");
    expect(c.db).toBe(path.join(dir, "a//b.db"));
    expect(c.sinks.lake).toMatchObject({ type: "folder", dir: "x/*y*/z" });
  });

  it("a syntax error after comments names its own line and column", () => {
    writeFileSync(path.join(dir, "benefits-sync.config.json"), ['// one', '/* two', ' three */ {', '  "db": "x.db",,', "}"].join("\n"));
    let err: unknown;
    try {
      loadConfig({ cwd: dir, env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems[0]).toMatch(/^benefits-sync\.config\.json: not valid JSON at line 4, column 16/);
  });

  it("an unterminated block comment is a syntax error, not a silently shorter file", () => {
    writeFileSync(path.join(dir, "benefits-sync.config.json"), '{ "db": "x.db" /* never closed }');
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(/not valid JSON at line 1/);
  });
});
