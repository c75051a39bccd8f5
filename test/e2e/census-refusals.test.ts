import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type MemberRec, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";

/**
 * A refusal whose body is a proxy's HTML page (not the service's JSON) is still a refusal: the
 * write is never sent again, a 403 stops the apply, and the result file records the status. Before,
 * such an answer counted as lost: the apply looked, found nothing, and sent the write again.
 */
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 60, groups: 2, seed: 43, enrollmentDelayMs: 30 });
  dir = mkdtempSync(join(tmpdir(), "bsync-census-refusals-"));
});
afterAll(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

const group = () => [...sb.iterate("groups")].at(-1)!;
const named = (last: string) => ([...sb.iterate("members")] as MemberRec[]).filter((m) => m.lastName === last);
const addSubscriberSends = () => sb.stats().writes[`POST /v3/groups/${group().id}/enroll/add-subscriber`] ?? 0;

describe("census apply: a refusal as an HTML page", () => {
  it.each([
    [403, "forbidden", 1],
    [400, "failed", 2],
    [500, "failed", 2],
  ] as const)("%i: each write sent once, recorded with its status, never looked for as lost", async (status, outcome, sends) => {
    const last = `Html${status}`;
    const file = join(dir, `${last}.csv`);
    const plan = group().plans[0]!.id;
    writeFileSync(file, `employee_id,relationship,first_name,last_name,date_of_birth,ssn,plan_id\nH1,self,Ann,${last},1988-08-08,902-3${status % 10}-0001,${plan}\nH2,self,Bob,${last},1989-09-09,902-3${status % 10}-0002,${plan}\n`);
    sb.setFaults({ pathPrefix: `/v3/groups/${group().id}/enroll`, [`http${status}`]: 1, htmlErrors: true });
    const before = addSubscriberSends();
    try {
      const result = join(dir, `${last}.json`);
      const r = await startCli(["census", "apply", file, "--group", group().id, "--batch-size", "1", "--settle-seconds", "0", "--result", result], { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db") }, dir).done;
      expect(r.code, r.stderr).toBe(1);
      // Two batches: a 403 stops the apply after the first; a 400 or 500 refuses each once.
      expect(addSubscriberSends() - before).toBe(sends);
      expect(r.stdout).toContain(`answered ${status}; the answer is not JSON: an HTML page`);
      expect(`${r.stdout}${r.stderr}`).not.toContain("the answer was lost");
      const rec = JSON.parse(readFileSync(result, "utf8")) as { status: string; stoppedBy?: string; requests: { kind: string; outcome: string; answer?: unknown }[] };
      expect(rec.status).toBe("failed");
      expect(rec.requests).toEqual(Array.from({ length: sends }, () => expect.objectContaining({ kind: "add-subscriber", outcome, answer: { status } })));
      if (status === 403) expect(rec.stoppedBy).toContain("answered 403");
      else expect(rec.stoppedBy).toBeUndefined();
    } finally {
      sb.setFaults({});
    }
    expect(named(last)).toHaveLength(0);
  });
});
