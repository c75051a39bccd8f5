/**
 * A URL's password never reaches a text we print or keep: `redact()` (which every error message,
 * config problem and job log line goes through) masks the userinfo's password of every URL in a
 * text, whatever its scheme (a mistyped one included), and keeps the user name and the rest; and
 * the value of every `password=` key (libpq's `host=h password=pw`, `PGPASSWORD=pw`, a URL's
 * `?password=`), quoted or not, any case.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, redact } from "../../src/errors.js";
import { describeIssues } from "../../src/config/problems.js";

describe("redact: connection-string credentials (URL and libpq key=value)", () => {
  it.each([
    ["a postgres sink", "postgresql://etl:TopSecret@host/db", "postgresql://etl:***@host/db"],
    ["a mistyped scheme", "htps://svc:pwSecret@host", "htps://svc:***@host"],
    ["a port and a query", "postgres://etl:TopSecret@wh.example:5432/db?schema=x", "postgres://etl:***@wh.example:5432/db?schema=x"],
    ["a raw @ in the password", "postgres://etl:Top@Secret@host/db", "postgres://etl:***@host/db"],
    ["an empty user", "redis://:TopSecret@cache:6379", "redis://:***@cache:6379"],
    ["percent-encoded", "https://a%40b:Top%2FSecret@host/x", "https://a%40b:***@host/x"],
    ["upper-case scheme", "HTTPS://u:TopSecret@HOST", "HTTPS://u:***@HOST"],
    ["libpq key=value", "host=127.0.0.1 port=1 password=S3cretPw dbname=x", "host=127.0.0.1 port=1 password=*** dbname=x"],
    ["a quoted value with a space and an escaped quote", "host=h password='se cr\\'et' dbname=x", "host=h password=*** dbname=x"],
    ["any case, spaces around =", "host=h PassWord = S3cretPw dbname=x", "host=h PassWord = *** dbname=x"],
    ["a PGPASSWORD-like key", "PGPASSWORD=S3cretPw psql; sslpassword=S3cretPw", "PGPASSWORD=*** psql; sslpassword=***"],
    ["a URL's password parameter", "postgres://etl@host/db?password=S3cretPw&sslmode=require", "postgres://etl@host/db?password=***"],
    ["an unterminated quote (a cut excerpt)", "password='S3cret Pw", "password=***"],
    ["ODBC's PWD=, to its ;", "Driver={PostgreSQL};Server=h;Uid=etl;PWD=S3cret Pw;Database=x", "Driver={PostgreSQL};Server=h;Uid=etl;PWD=***;Database=x"],
    ["ODBC's braced value, }} inside", "Server=h;Pwd={S3;cr}}et};Database=x", "Server=h;Pwd=***;Database=x"],
    ["a double-quoted value", 'host=h password="S3cret Pw" dbname=x', "host=h password=*** dbname=x"],
    ["an escaped quote after JSON escaped the backslash", JSON.stringify("host=h password='S3 cr\\'etPw' dbname=x"), '"host=h password=*** dbname=x"'],
    ["sslpassword= and a URL's ?password= together", "postgres://etl@h/db?sslpassword=S3cret&password=S3cretPw", "postgres://etl@h/db?sslpassword=***"],
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

  it("a libpq password inside quoted text and JSON keeps the text around it", () => {
    expect(redact(`--sink "host=h password=S3cretPw": not a postgres:// URL`)).toBe(`--sink "host=h password=***": not a postgres:// URL`);
    expect(redact(JSON.stringify({ sink: "host=h password=S3cretPw", next: 1 }))).toBe('{"sink":"host=h password=***","next":1}');
    expect(redact("sinks.wh.passwordEnv: expected a name; password: 8 characters")).toBe("sinks.wh.passwordEnv: expected a name; password: 8 characters");
  });

  it("a config value is masked before it is cut to 60 characters (a password cut in half has no @ left)", () => {
    const url = `postgres://etl:S3cretPw${"x".repeat(60)}@warehouse.example.com:5432/db`;
    const input = { sinks: { wh: { url } } };
    const issue = { code: "custom", path: ["sinks", "wh", "url"], message: "expected a postgres:// URL", input: url } as const;
    const [problem] = describeIssues([issue as never], input, () => "the config file", () => []);
    expect(problem).not.toContain("S3cretPw");
    expect(problem).toContain('got "postgres://etl:***@warehouse.example.com:5432/db"');
  });

  it("reaches every error message and config problem", () => {
    const e = new ConfigError([`sinks.wh.url: got "postgresql://etl:TopSecret@host/db"`]);
    expect(e.message + e.problems.join()).not.toContain("TopSecret");
    expect(e.message).toContain("postgresql://etl:***@host/db");
  });
});
