/**
 * The client's tolerance over loopback: a sandbox told to answer each write in another plausible
 * shape (an empty 201 or 204, `{groupPolicyId}`, `{id}`, the whole request, statuses spelled
 * `COMPLETED`), and the real client against it. Every write that the sandbox applied must read as
 * done, and the sandbox's own records show it was applied once.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ServiceClient } from "../../../src/api/index.js";
import { startSandbox, type Sandbox, type SandboxOptions } from "../../../src/sandbox/index.js";
import { EVENT_DEADLINE_MS } from "../../helpers/wait.js";
import { clientFor, walk } from "./walk-helpers.js";

let sb: Sandbox | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await sb?.close();
});

async function start(answerShapes: NonNullable<SandboxOptions["answerShapes"]>): Promise<{ sb: Sandbox; client: ServiceClient }> {
  sb = await startSandbox({ seed: 5, members: 300, enrollmentDelayMs: 20, answerShapes });
  client = clientFor(sb);
  return { sb, client };
}

const person = (first: string) => ({ firstName: first, lastName: "Shape", dateOfBirth: "1985-05-05", ssn: "123-45-6789", memberType: "employee" });

async function groupBody(c: ServiceClient, n: string) {
  const d = (await walk(c, "designs"))[0] as { id: string; configuration: { vendorIds: string[]; benefitBundleIds: string[] } };
  return {
    groupId: `G-SHAPE-${n}`,
    adminEmail: `shape-${n}@example.com`,
    sponsorName: "Shape Co",
    ein: "55-1234567",
    planDesignId: d.id,
    benefitBundleId: d.configuration.benefitBundleIds[0] as string,
    vendorId: d.configuration.vendorIds[0] as string,
    effectiveDate: `20${30 + Number(n)}-01-01`,
    terminationDate: `20${30 + Number(n)}-12-31`,
  };
}

describe("the sandbox answers each write in the shape it is told, and the client reads every one", () => {
  it("create group {groupPolicyId} and empty; add-subscriber {id}; polls spelled COMPLETED", async () => {
    const { sb, client } = await start({ createGroup: "groupPolicyId", addSubscriber: "id", enrollmentStatus: "upper" });
    const created = await client.createGroup(await groupBody(client, "1"));
    expect(created.answer).toEqual({ status: 201, shape: "{groupPolicyId: string}" });
    const g = [...sb.iterate("groups")].find((x) => x.groupId === "G-SHAPE-1");
    expect(created.groupPolicyId).toBe(g?.id);

    const accepted = await client.addSubscriber(g?.id as string, { subscribers: [{ plan: g?.plans[0]?.id as string, self: person("Ida") }] });
    expect(accepted.answer).toEqual({ status: 202, shape: "{id: string}" });
    const done = await client.waitForEnrollmentRequest(accepted.enrollmentRequestId as string, { timeoutMs: EVENT_DEADLINE_MS, intervalMs: 10 });
    expect([done.status, done.rawStatus]).toEqual(["succeeded", "COMPLETED"]);
    expect([...sb.iterate("members")].filter((m) => m.firstName === "Ida" && m.lastName === "Shape")).toHaveLength(1);
  });

  it("an empty 201 for create group and the whole request for add-dependent", async () => {
    const { sb, client } = await start({ createGroup: "empty", addDependent: "request" });
    const created = await client.createGroup(await groupBody(client, "2"));
    expect(created).toMatchObject({ groupPolicyId: undefined, answer: { status: 201, shape: "empty" } });
    expect([...sb.iterate("groups")].filter((x) => x.groupId === "G-SHAPE-2")).toHaveLength(1);

    const sub = [...sb.iterate("members")].find((m) => m.relationship === "self" && m.coverages[0]?.status === "active");
    const cov = sub?.coverages[0];
    const acc = await client.addDependent(cov?.groupPolicyId as string, cov?.id as string, { plan: cov?.planId as string, dependent: { ...person("Kit"), memberType: "dependent" } });
    expect(acc.answer.status).toBe(201);
    expect(acc.request?.status).toBe("pending");
    const done = await client.waitForEnrollmentRequest(acc.enrollmentRequestId as string, { timeoutMs: EVENT_DEADLINE_MS, intervalMs: 10 });
    expect(done.status).toBe("succeeded");
  });

  it("terminate answering 204 or the member, update-member answering 204", async () => {
    const { sb, client } = await start({ terminate: "empty", patchMember: "empty" });
    const [a, b] = [...sb.iterate("members")].filter((m) => m.coverages.length === 1 && m.coverages[0]?.status === "active");
    const covA = a?.coverages[0];
    const ended = await client.terminate(covA?.groupPolicyId as string, { memberId: a?.id as string, coverageId: covA?.id as string, terminationDate: "2026-01-31" });
    expect(ended).toMatchObject({ coverage: undefined, answer: { status: 204, shape: "empty" } });
    expect((await client.getMember(a?.id as string)).coverages?.[0]?.status).toBe("terminated");

    const patched = await client.patchMember(b?.id as string, { phone: "+15550100" });
    expect(patched).toMatchObject({ member: undefined, answer: { status: 204, shape: "empty" } });
    expect((await client.getMember(b?.id as string)).phone).toBe("+15550100");
    await client.close();
    await sb.close();

    const second = await start({ terminate: "member" });
    const m = [...second.sb.iterate("members")].find((x) => x.coverages.length === 1 && x.coverages[0]?.status === "active");
    const cov = m?.coverages[0];
    const viaMember = await second.client.terminate(cov?.groupPolicyId as string, { memberId: m?.id as string, coverageId: cov?.id as string, terminationDate: "2026-01-31" });
    expect(viaMember.member?.id).toBe(m?.id);
    expect(viaMember.coverage).toMatchObject({ id: cov?.id, status: "terminated", endDate: "2026-01-31" });
  });
});
