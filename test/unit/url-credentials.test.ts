/**
 * A URL's password never reaches a text we print or keep: `redact()` (which every error message,
 * config problem and job log line goes through) masks the userinfo's password of every URL in a
 * text, whatever its scheme (a mistyped one included), and keeps the user name and the rest.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, redact } from "../../src/errors.js";

describe("redact: URL credentials", () => {
  it.each([
    ["a postgres sink", "postgresql://etl:TopSecret@host/db", "postgresql://etl:***@host/db"],
    ["a mistyped scheme", "htps://svc:pwSecret@host", "htps://svc:***@host"],
    ["a port and a query", "postgres://etl:TopSecret@wh.example:5432/db?schema=x", "postgres://etl:***@wh.example:5432/db?schema=x"],
    ["a raw @ in the password", "postgres://etl:Top@Secret@host/db", "postgres://etl:***@host/db"],
    ["an empty user", "redis://:TopSecret@cache:6379", "redis://:***@cache:6379"],
    ["percent-encoded", "https://a%40b:Top%2FSecret@host/x", "https://a%40b:***@host/x"],
    ["upper-case scheme", "HTTPS://u:TopSecret@HOST", "HTTPS://u:***@HOST"],
  ])("%s", (_, url, shown) => {
    expect(redact(url)).toBe(shown);
  });

  it("inside longer text, quoted or not, several in one text", () => {
    const text = `sinks.wh.url: expected a postgres:// URL, got "mysql://etl:TopSecret@host/db" (from the config file); also htps://svc:pwSecret@host.`;
    const out = redact(text);
    expect(out).not.toContain("TopSecret");
    expect(out).not.toContain("pwSecret");
    expect(out).toContain(`got "mysql://etl:***@host/db" (from the config file)`);
    expect(out).toContain("also htps://svc:***@host.");
    expect(redact(JSON.stringify({ url: "postgres://etl:TopSecret@h/db", next: "a@b" }))).toBe('{"url":"postgres://etl:***@h/db","next":"a@b"}');
  });

  it("leaves URLs without a password, and e-mail addresses, as they are", () => {
    for (const text of ["postgres://etl@host:5432/db#benefits_sync", "https://svc.test:8443/v2/members?limit=5", "mail admin@example.com", "GET /v2/designs"]) {
      expect(redact(text)).toBe(text);
    }
  });

  it("reaches every error message and config problem", () => {
    const e = new ConfigError([`sinks.wh.url: got "postgresql://etl:TopSecret@host/db"`]);
    expect(e.message + e.problems.join()).not.toContain("TopSecret");
    expect(e.message).toContain("postgresql://etl:***@host/db");
  });
});
