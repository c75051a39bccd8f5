import { MockAgent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient, type ServiceClient } from "../../../src/api/client.js";
import { ApiError, BenefitsSyncError, ResponseShapeError } from "../../../src/errors.js";

const ORIGIN = "http://svc.test";
const PHI = ["Jonathan", "Quixley", "1984-07-19", "07/19/1984", "123-45-6789", "987654321", "6789", "4321"];
const HTML = `<!DOCTYPE html><html><body><h1>Member Jonathan Quixley</h1><p>DOB 1984-07-19 (07/19/1984), SSN 123-45-6789, spouse 987654321</p></body></html>`;
const TRUNCATED = `{"data":[{"id":"m1","firstName":"Jonathan","lastName":"Quixley","dateOfBirth":"1984-07-19","ssn":"123-45-6789"},{"id":"m2","ssn":"987654321","firstName":"Jona`;

let agent: MockAgent;
let hits: number;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  hits = 0;
});
afterEach(async () => {
  await agent.close();
});

function answer(method: string, path: string, status: number, text: string) {
  agent
    .get(ORIGIN)
    .intercept({ method, path: (p) => p.split("?")[0] === path })
    .reply(() => {
      hits++;
      return { statusCode: status, data: text, responseOptions: { headers: { "content-type": "text/html" } } };
    })
    .persist();
}

const client = () => createClient({ baseUrl: ORIGIN, apiKey: "phi-unit-key-55aa", dispatcher: agent, retry: { maxAttempts: 1 } });

async function failure(fn: () => Promise<unknown>): Promise<BenefitsSyncError> {
  try {
    await fn();
  } catch (err) {
    expect(hits).toBeGreaterThan(0);
    expect(err).toBeInstanceOf(BenefitsSyncError);
    return err as BenefitsSyncError;
  }
  throw new Error("expected a failure");
}

function expectNoPhi(err: BenefitsSyncError) {
  const texts = [err.message, JSON.stringify(err), String((err as ResponseShapeError).excerpt ?? "")];
  for (const t of texts) for (const p of PHI) expect(t).not.toContain(p);
}

async function drain<T>(it: AsyncIterable<T>) {
  for await (const _ of it) void _;
}

const body = { firstName: "A", lastName: "B", dateOfBirth: "2000-01-01", ssn: "111-22-3333", memberType: "employee" };
type Call = [string, string, string, (c: ServiceClient) => Promise<unknown>];
const peopleCalls: Call[] = [
  ["members list (typed)", "GET", "/v2/members", (c) => drain(c.listMembers())],
  ["members list (raw pages, the sync's path)", "GET", "/v2/members", (c) => drain(c.rawPages("members"))],
  ["members list (pages)", "GET", "/v2/members", (c) => drain(c.pages("members"))],
  ["one member", "GET", "/v1/members/m1", (c) => c.getMember("m1")],
  ["patch member", "PATCH", "/v2/members/m1", (c) => c.patchMember("m1", { lastName: "C" })],
  ["claims", "GET", "/v1/claims/medical", (c) => drain(c.rawPages("claims"))],
  ["initial enrollment", "POST", "/v2/groups/g1/enroll/initial-enrollment", (c) => c.initialEnrollment("g1", { members: [body] } as never)],
  ["add subscriber", "POST", "/v3/groups/g1/enroll/add-subscriber", (c) => c.addSubscriber("g1", body as never)],
  ["add dependent", "POST", "/v3/groups/g1/enroll/c1/add-dependent", (c) => c.addDependent("g1", "c1", body as never)],
  ["terminate", "POST", "/v3/groups/g1/enroll/terminate", (c) => c.terminate("g1", { memberId: "m1" } as never)],
  ["enrollment request", "GET", "/v1/enrollmentRequests/er1", (c) => c.getEnrollmentRequest("er1")],
];

describe("a malformed answer from an endpoint that carries people is described, never quoted", () => {
  it.each(peopleCalls)("%s: an HTML 200 page", async (_, method, path, call) => {
    answer(method, path, 200, HTML);
    const err = await failure(() => call(client()));
    expect(err).toBeInstanceOf(ResponseShapeError);
    expectNoPhi(err);
    expect(err.message).toContain("an HTML page");
    expect(err.message).toContain(`(${Buffer.byteLength(HTML)} bytes)`);
  });

  it.each(peopleCalls)("%s: truncated JSON", async (_, method, path, call) => {
    answer(method, path, 200, TRUNCATED);
    const err = await failure(() => call(client()));
    expect(err).toBeInstanceOf(ResponseShapeError);
    expectNoPhi(err);
    expect(err.message).toContain("truncated JSON");
  });

  it.each([502, 400, 404])("an HTML %i page from the members list", async (status) => {
    answer("GET", "/v2/members", status, HTML);
    const err = await failure(() => drain(client().rawPages("members")));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(status);
    expectNoPhi(err);
    expect(err.message).toContain(`answered ${status}; the answer is not JSON`);
    expect(err.message).toContain("an HTML page");
  });
});

describe("other endpoints may quote a short excerpt, redacted", () => {
  it("an HTML page from /v2/designs is quoted with SSNs masked", async () => {
    answer("GET", "/v2/designs", 200, `<html><title>Maintenance</title> call 123-45-6789 or 987654321</html>`);
    const err = await failure(() => drain(client().rawPages("designs")));
    expect(err.message).toContain("Maintenance");
    expect(err.message).not.toContain("123-45-6789");
    expect(err.message).not.toContain("987654321");
  });
});
