import { request } from "undici";
import { describe, expect, it } from "vitest";
import { SandboxOptionsError, runSandboxCommand } from "../../../src/sandbox/cli.js";
import { main } from "../../../src/sandbox/serve.js";
import { waitUntil } from "../../helpers/wait.js";

describe("benefits-sync sandbox", () => {
  it("prints the base URL and the three keys, serves, and stops on abort", async () => {
    const lines: string[] = [];
    const ac = new AbortController();
    const done = runSandboxCommand({ port: "0", members: "300", seed: "9", latencyMs: "1" }, { out: (l) => lines.push(l), signal: ac.signal });
    const url = await waitUntil("the listening line", () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(lines.join("\n"))?.[1]);
    const key = /full key:\s+(\S+)/.exec(lines.join("\n"))?.[1] as string;
    expect(lines.join("\n")).toMatch(/read-only key:\s+sbx_readonly_/);
    expect(lines.join("\n")).toMatch(/no-claims key:\s+sbx_noclaims_/);
    const res = await request(`${url}/v2/members`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    ac.abort();
    expect(await done).toBe(0);
    await expect(request(`${url}/v2/members`)).rejects.toThrow();
  });

  it("rejects bad options with one SandboxOptionsError naming each", async () => {
    const e = await runSandboxCommand({ port: "-1", members: "many", today: "2026-02-30", answerShapes: "terminate=nothing,frobnicate=id" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SandboxOptionsError);
    expect((e as SandboxOptionsError).problems.join("\n")).toMatch(/--port[\s\S]*--members[\s\S]*--today/);
    expect((e as SandboxOptionsError).problems).toEqual(
      expect.arrayContaining([
        '--answer-shapes: terminate cannot answer "nothing"; expected one of coverage, member, empty',
        expect.stringMatching(/^--answer-shapes: unknown write "frobnicate"/),
      ]),
    );
  });

  it("serve.js main prints one JSON line with baseUrl and keys", async () => {
    const lines: string[] = [];
    const ac = new AbortController();
    const done = main(["--members", "200", "--seed", "4", "--claims-per-member", "1"], { out: (l) => lines.push(l), signal: ac.signal });
    const line = await waitUntil("the JSON line", () => lines[0]);
    const info = JSON.parse(line) as { baseUrl: string; keys: { full: string; readOnly: string; noClaims: string } };
    expect(info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await request(`${info.baseUrl}/v2/groups`, { headers: { authorization: `Bearer ${info.keys.readOnly}` } });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    ac.abort();
    expect(await done).toBe(0);
  });
});
