/**
 * `notify` is checked by the one check every command makes (checked-config.ts): a URL or the
 * name of a variable that holds one, not both; a variable that is unset or holds no http(s) URL
 * is refused by the commands that run jobs. A chat webhook's URL is its token: a problem never
 * quotes it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/checked-config.js";

const TOKEN = "T0/B0/sekret-chat-token";
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "bs-notify-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function problems(notify: unknown, env: Record<string, string> = {}): readonly string[] {
  writeFileSync(path.join(dir, "benefits-sync.config.json"), JSON.stringify({ notify }));
  const check = checkConfig({ env, cwd: dir });
  return check.ok ? [] : check.problems;
}

describe("notify in the configuration", () => {
  it("takes a URL, or a variable holding one", () => {
    expect(problems({ url: `https://hooks.slack.com/services/${TOKEN}` })).toEqual([]);
    expect(problems({ urlEnv: "CHAT_URL" }, { CHAT_URL: `https://hooks.slack.com/services/${TOKEN}` })).toEqual([]);
  });

  it("a URL that is not http(s) is named by its key, its value masked", () => {
    const p = problems({ url: `htps://hooks.slack.com/services/${TOKEN}` });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^notify\.url: expected an http\(s\) URL/);
    expect(p.join("\n")).not.toContain("sekret");
  });

  it("both url and urlEnv, or neither, is refused", () => {
    expect(problems({ url: `https://hooks.slack.com/services/${TOKEN}`, urlEnv: "CHAT_URL" })[0]).toContain("give exactly one of url and urlEnv");
    expect(problems({})[0]).toContain("give exactly one of url and urlEnv");
  });

  it("a variable that is unset, or holds no http(s) URL, is refused naming the variable, never its value", () => {
    expect(problems({ urlEnv: "CHAT_URL" })).toEqual(["notify.urlEnv: the environment variable CHAT_URL is not set; set it to the chat webhook's URL, or remove notify (from the config file benefits-sync.config.json)"]);
    const p = problems({ urlEnv: "CHAT_URL" }, { CHAT_URL: `hooks.slack.com/services/${TOKEN}` });
    expect(p).toEqual(["notify.urlEnv: CHAT_URL does not hold an http(s) URL (from the config file benefits-sync.config.json)"]);
  });
});
