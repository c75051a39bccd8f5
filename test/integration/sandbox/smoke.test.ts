import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { clientFor, walk } from "./walk-helpers.js";

describe("smoke", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ seed: 3, members: 1000 });
  });
  afterAll(() => sb.close());
  it("walks", async () => {
    const c = clientFor(sb);
    const m = await walk(c, "members");
    const g = await walk(c, "groups");
    const d = await walk(c, "designs");
    const cl = await walk(c, "claims");
    console.log(m.length, g.length, d.length, cl.length, JSON.stringify(m[0]), JSON.stringify(cl[0]), JSON.stringify(g[0]));
    const cs = await sb.advance();
    console.log(JSON.stringify(Object.fromEntries(Object.entries(cs.changes).map(([k, v]) => [k, [v.inserted.length, v.updated.length, v.deleted.length]]))));
    expect(m.length).toBeGreaterThan(900);
    await c.close();
  });
});
