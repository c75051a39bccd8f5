import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceClient } from "../../../src/api/index.js";
import { canonicalJson, startSandbox, type ChangeSet, type Resource, type Sandbox } from "../../../src/sandbox/index.js";
import { clientFor, walk } from "./walk-helpers.js";

type Snapshot = Record<Resource, Map<string, string>>;
type Rec = Record<string, unknown> & { id: string };

/** What the sync engine stores from full walks through the API: six resources by id. */
async function snapshot(client: ServiceClient): Promise<Snapshot> {
  const s: Snapshot = { designs: new Map(), groups: new Map(), plans: new Map(), members: new Map(), coverages: new Map(), claims: new Map() };
  for (const d of (await walk(client, "designs")) as Rec[]) s.designs.set(d.id, canonicalJson(d));
  const groups = (await walk(client, "groups")) as Rec[];
  for (const { plans, ...g } of groups) {
    s.groups.set(g.id, canonicalJson(g));
    for (const p of plans as Rec[]) s.plans.set(p.id, canonicalJson(p));
  }
  // Members walked per group (as the engine fans out), so members in two groups are seen twice.
  for (const gr of groups) {
    for (const { coverages, ...m } of (await walk(client, "members", { groupId: gr.groupId as string })) as Rec[]) {
      s.members.set(m.id, canonicalJson(m));
      for (const c of coverages as Rec[]) s.coverages.set(c.id, canonicalJson(c));
    }
  }
  for (const c of (await walk(client, "claims")) as Rec[]) s.claims.set(c.id, canonicalJson(c));
  return s;
}

function diff(a: Snapshot, b: Snapshot): ChangeSet["changes"] {
  const out = {} as ChangeSet["changes"];
  for (const r of Object.keys(a) as Resource[]) {
    out[r] = {
      inserted: [...b[r].keys()].filter((k) => !a[r].has(k)).sort(),
      updated: [...b[r].keys()].filter((k) => a[r].has(k) && a[r].get(k) !== b[r].get(k)).sort(),
      deleted: [...a[r].keys()].filter((k) => !b[r].has(k)).sort(),
    };
  }
  return out;
}

let sb: Sandbox;
let client: ServiceClient;
beforeAll(async () => {
  sb = await startSandbox({ seed: 41, members: 2000, groups: 6 });
  client = clientFor(sb);
});
afterAll(async () => {
  await client.close();
  await sb.close();
});

describe("advance() is ground truth for a fresh full walk", () => {
  it("a walk after advance() differs from the one before by exactly the returned change set", async () => {
    let before = await snapshot(client);
    for (let i = 0; i < 2; i++) {
      const cs = await sb.advance();
      const after = await snapshot(client);
      expect(cs.changes).toEqual(diff(before, after));
      const total = Object.values(cs.changes).reduce((n, r) => n + r.inserted.length + r.updated.length + r.deleted.length, 0);
      expect(total).toBeGreaterThan(10);
      before = after;
    }
  });

  it("the control route advances too, and the day moves", async () => {
    const day = sb.today;
    const res = await request(`${sb.baseUrl}/_sandbox/advance`, { method: "POST" });
    const cs = (await res.body.json()) as ChangeSet;
    expect(res.statusCode).toBe(200);
    expect(cs.day > day).toBe(true);
    expect(sb.today).toBe(cs.day);
    expect(cs.changes.claims.inserted.length).toBeGreaterThan(0);
  });
});
