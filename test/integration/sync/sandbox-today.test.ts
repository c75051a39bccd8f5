/**
 * The default claims window's end: a sandbox on loopback is asked its today (it keeps its own
 * calendar); anything that does not answer as one (a tunnel to the service, an unknown page)
 * leaves the real date, and an address that is not loopback is never asked.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { sandboxToday } from "../../../src/pipeline/sandbox-today.js";

let sb: Sandbox;
let other: Server;
let otherUrl: string;
const asked: string[] = [];

beforeAll(async () => {
  sb = await startSandbox({ members: 20, groups: 1, seed: 3, today: "2026-03-03" });
  // Not a sandbox: answers every path 404, as the service (or a tunnel to it) would.
  other = createServer((req, res) => {
    asked.push(req.url ?? "");
    res.writeHead(404, { "content-type": "application/json" });
    res.end('{"message":"Not found"}');
  });
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await sb?.close();
  await new Promise((resolve) => other?.close(resolve));
});

const day = (d: Date | undefined) => d?.toISOString().slice(0, 10);

describe("sandboxToday", () => {
  it("is the sandbox's today, and follows it when days pass", async () => {
    expect(day(await sandboxToday(sb.baseUrl))).toBe("2026-03-03");
    await sb.advance();
    expect(day(await sandboxToday(`${sb.baseUrl}/`))).toBe("2026-03-04");
    expect(day(await sandboxToday(sb.baseUrl.replace("127.0.0.1", "localhost")))).toBe("2026-03-04");
  });

  it("is undefined for a loopback address that is not a sandbox (it was asked once, without a key)", async () => {
    expect(await sandboxToday(otherUrl)).toBeUndefined();
    expect(asked).toEqual(["/_sandbox/info"]);
  });

  it("asks nothing of an address that is not loopback, or of no address at all", async () => {
    expect(await sandboxToday("https://api.example.com")).toBeUndefined();
    expect(await sandboxToday("not a url")).toBeUndefined();
  });
});
