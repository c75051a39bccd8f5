import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, EinOverlapError, GroupTakenError, UnknownReferenceError } from "../../../src/errors.js";
import type { ServiceClient } from "../../../src/api/index.js";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.js";
import { clientFor, walk } from "./walk-helpers.js";
import { EVENT_DEADLINE_MS } from "../../helpers/wait.js";

let sb: Sandbox;
let client: ServiceClient;
beforeAll(async () => {
  sb = await startSandbox({ seed: 31, members: 1000, enrollmentDelayMs: 40 });
  client = clientFor(sb);
});
afterAll(async () => {
  await client.close();
  await sb.close();
});

async function refs() {
  const designs = await walk(client, "designs");
  const d = designs[0] as { id: string; configuration: { vendorIds: string[]; benefitBundleIds: string[] } };
  return { planDesignId: d.id, vendorId: d.configuration.vendorIds[0] as string, benefitBundleId: d.configuration.benefitBundleIds[0] as string };
}

const person = (first: string, memberType = "employee") => ({
  firstName: first,
  lastName: "Núñez",
  dateOfBirth: "1988-02-29",
  ssn: "123-45-6789",
  memberType,
  address: { line1: "1 Main St", city: "Austin", state: "TX", zip: "78701" },
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ApiError);
  return e as ApiError;
}

describe("writes", () => {
  it("creates a group from a plan design and applies the documented 400 rules", async () => {
    const r = await refs();
    const body = { groupId: "G-NEW-1", adminEmail: "admin@newco.example.com", sponsorName: "NewCo", ein: "98-7654321", ...r, effectiveDate: "2026-02-01", terminationDate: "2027-01-31" };
    const created = await client.createGroup(body);
    const g = created.group as NonNullable<typeof created.group>;
    expect(created.groupPolicyId).toBe(g.id);
    expect(g.groupId).toBe("G-NEW-1");
    expect(g.plans?.[0]?.basePlanDesignId).toBe(r.planDesignId);
    expect((await walk(client, "groups")).some((x) => x.id === g.id)).toBe(true);

    const email = await rejection(client.createGroup({ ...body, groupId: "G-NEW-2" }));
    expect(email.status).toBe(400);
    expect(email.serverMessage).toMatch(/adminEmail/);
    expect(email).toBeInstanceOf(GroupTakenError);
    expect((email as GroupTakenError).field).toBe("adminEmail");
    const number = await rejection(client.createGroup({ ...body, adminEmail: "other@newco.example.com" }));
    expect(number.serverMessage).toMatch(/groupId/);
    expect([number.code, (number as GroupTakenError).field]).toEqual(["GROUP_TAKEN", "groupId"]);
    const overlap = await rejection(client.createGroup({ ...body, groupId: "G-NEW-3", adminEmail: "x@newco.example.com", effectiveDate: "2026-06-01", terminationDate: "2027-05-31" }));
    expect(overlap.serverMessage).toMatch(/EIN/);
    expect(overlap).toBeInstanceOf(EinOverlapError);
    // The same EIN for the next, non-overlapping year is fine: one sponsor, many groups.
    const renewal = await client.createGroup({ ...body, groupId: "G-NEW-4", adminEmail: "y@newco.example.com", effectiveDate: "2027-02-01", terminationDate: "2028-01-31" });
    expect(renewal.group?.sponsorId).toBe(g.sponsorId);
    for (const [field, msg] of [["planDesignId", /planDesignId/], ["benefitBundleId", /benefitBundleId/], ["vendorId", /vendorId/]] as const) {
      const e = await rejection(client.createGroup({ ...body, groupId: `G-${field}`, adminEmail: `${field}@x.example.com`, ein: "11-1111111", [field]: "does-not-exist" }));
      expect(e.serverMessage).toMatch(msg);
      expect(e).toBeInstanceOf(UnknownReferenceError);
      expect((e as UnknownReferenceError).field).toBe(field);
    }
    const invalid = await rejection(client.createGroup({ ...body, adminEmail: "not-an-email", ein: "12" } as never));
    expect(invalid.status).toBe(400);
    expect(invalid.issues.map((i) => i.path.join("."))).toEqual(expect.arrayContaining(["adminEmail", "ein"]));
  });

  it("enrolls members at group start, synchronously", async () => {
    const groups = await walk(client, "groups");
    const g = groups[0] as { id: string; groupId: string };
    const res = await client.initialEnrollment(g.id, { members: [{ ...person("Zoë"), memberId: "ext-1" }, { ...person("Ana", "dependent"), memberId: "ext-2" }] });
    expect(res.enrolled).toBe(2);
    const m = await client.getMember("ext-2");
    expect(m.coverages?.[0]?.groupId).toBe(g.groupId);
    expect(m.coverages?.[0]?.subscriberCoverageId).toBe(res.members?.[0]?.coverages?.[0]?.id);
    const dup = await rejection(client.initialEnrollment(g.id, { members: [{ ...person("Zoë"), memberId: "ext-1" }] }));
    expect(dup.issues[0]?.path).toEqual(["members", 0, "memberId"]);
  });

  it("add-subscriber: an enrollment request goes pending → succeeded, and the members appear in the listing", async () => {
    const groups = await walk(client, "groups");
    const g = groups.find((x) => (x.plans as unknown[]).length > 0) as { id: string; groupId: string; plans: { id: string }[] };
    const accepted = await client.addSubscriber(g.id, { subscribers: [{ plan: g.plans[0]?.id as string, self: person("Søren-Q"), spouse: person("Chloé-Q", "dependent"), children: [person("Liam-Q", "dependent")], tags: ["t"] }] });
    const first = await client.getEnrollmentRequest(accepted.enrollmentRequestId as string);
    expect(["pending", "processing"]).toContain(first.status);
    const done = await client.waitForEnrollmentRequest(accepted.enrollmentRequestId as string, { timeoutMs: EVENT_DEADLINE_MS });
    expect(done.status).toBe("succeeded");
    const listed = await walk(client, "members", { groupId: g.groupId });
    const mine = listed.filter((m) => ["Søren-Q", "Chloé-Q", "Liam-Q"].includes(m.firstName as string));
    expect(mine).toHaveLength(3);
    const self = mine.find((m) => m.firstName === "Søren-Q") as { coverages: { id: string }[] };
    expect(mine.every((m) => (m.coverages as { subscriberCoverageId: string }[])[0]?.subscriberCoverageId === self.coverages[0]?.id)).toBe(true);

    const failing = await client.addSubscriber(g.id, { subscribers: [{ plan: "no-such-plan", self: person("Bad") }] });
    const failed = await client.waitForEnrollmentRequest(failing.enrollmentRequestId as string, { timeoutMs: EVENT_DEADLINE_MS });
    expect(failed.status).toBe("failed");
    expect(failed.errors?.length).toBeGreaterThan(0);
    const invalid = await rejection(client.addSubscriber(g.id, { subscribers: [] }));
    expect(invalid.status).toBe(400);
    expect(invalid.issues.length).toBeGreaterThan(0);
  });

  it("add-dependent, terminate and patch-member change what the reads return", async () => {
    const members = [...sb.iterate("members")];
    const sub = members.find((m) => m.relationship === "self" && m.coverages.length === 1 && m.coverages[0]?.status === "active");
    if (!sub) throw new Error("no subscriber");
    const cov = sub.coverages[0] as (typeof sub.coverages)[number];
    const acc = await client.addDependent(cov.groupPolicyId, cov.id, { plan: cov.planId, dependent: person("Quillon-Björn", "dependent") });
    expect((await client.waitForEnrollmentRequest(acc.enrollmentRequestId as string, { timeoutMs: EVENT_DEADLINE_MS })).status).toBe("succeeded");
    const household = await walk(client, "members", { groupId: cov.groupId });
    const dep = household.find((m) => m.firstName === "Quillon-Björn") as { subscriberId: string; coverages: { subscriberCoverageId: string }[] };
    expect(dep.subscriberId).toBe(sub.subscriberId);
    expect(dep.coverages[0]?.subscriberCoverageId).toBe(cov.id);

    const terminated = await client.terminate(cov.groupPolicyId, { memberId: sub.id, coverageId: cov.id, terminationDate: "2026-01-31", reason: "left" });
    expect(terminated.coverage).toMatchObject({ id: cov.id, endDate: "2026-01-31", status: "terminated" });
    expect((await client.getMember(sub.id)).coverages?.[0]?.status).toBe("terminated");

    const patched = (await client.patchMember(sub.id, { lastName: "O'Brien", address: { city: "Boise" } })).member;
    expect(patched?.lastName).toBe("O'Brien");
    expect(patched?.address?.city).toBe("Boise");
    expect(patched?.address?.line1).toBe(sub.address.line1);
    expect((await client.getMember(sub.id)).lastName).toBe("O'Brien");
    const bad = await rejection(client.patchMember(sub.id, { dateOfBirth: "1990-13-01" }));
    expect(bad.status).toBe(400);
    const missing = await rejection(client.terminate(cov.groupPolicyId, { memberId: "00000000-0000-4000-8000-000000000000", terminationDate: "2026-01-31" }));
    expect(missing.status).toBe(404);
  });

  it("keeps its own count of the write requests that reached it, by method and path, whatever answered them", async () => {
    const send = (method: "GET" | "POST" | "PATCH", path: string, key = sb.keys.full) =>
      request(`${sb.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, ...(method === "GET" ? {} : { body: "{}" }) }).then((r) => r.body.dump());
    const before = sb.stats().writes;
    const delta = () => Object.fromEntries(Object.entries(sb.stats().writes).flatMap(([k, n]) => (n === (before[k] ?? 0) ? [] : [[k, n - (before[k] ?? 0)]])));
    await send("GET", "/v2/groups"); // a read: not a write
    await send("POST", "/v3/groups/gp_none/enroll/terminate"); // refused (404): still sent
    await send("POST", "/v3/groups/gp_none/enroll/terminate");
    await send("PATCH", "/v2/members/m_none", sb.keys.readOnly); // refused (403): still sent
    await request(`${sb.baseUrl}/_sandbox/faults`, { method: "POST", body: JSON.stringify({ pathPrefix: "/v3/", http503: 1 }) }).then((r) => r.body.dump()); // a control route: not the API
    try {
      await send("POST", "/v3/groups/gp_none/enroll/c1/add-dependent"); // answered by a fault
    } finally {
      sb.setFaults({});
    }
    expect(delta()).toEqual({
      "POST /v3/groups/gp_none/enroll/terminate": 2,
      "PATCH /v2/members/m_none": 1,
      "POST /v3/groups/gp_none/enroll/c1/add-dependent": 1,
    });
    const info = (await (await request(`${sb.baseUrl}/_sandbox/info`)).body.json()) as { stats: { writes: Record<string, number> } };
    expect(info.stats.writes).toEqual(sb.stats().writes);
  });
});
