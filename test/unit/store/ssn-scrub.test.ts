import { createHash, createHmac } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { sync } from "../../../src/pipeline/sync.js";
import { refreshTypedSql } from "../../../src/store/schema/analyst-schema.js";
import { canonicalJson } from "../../../src/store/walk/canonical.js";
import { memorySource } from "../../helpers/memory-source.js";
import { TEST_PII_KEY, tempStore } from "../../helpers/temp-store.js";
import { baseData, WINDOW } from "../sinks/fixtures.js";

/**
 * A snapshot written before the one SSN rule holds plain SSNs under keys the old rule did not
 * know (`dependentSsn`, `spouse.socialSecurityNumber`), and the server still sends the same text,
 * so no record changes and nothing would be re-encoded. The next run scrubs them in place: every
 * version, the quarantine and run errors, with no new version and no plain byte left in the
 * file or its WAL.
 */
let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

const DEP = "111-22-4444";
const SPOUSE = "111224445";

describe("a snapshot from before the one SSN rule", () => {
  it("is scrubbed in place by the next run: versions, quarantine, run errors, file bytes", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    const data = baseData();
    Object.assign(data.members[0]!, { dependentSsn: DEP, spouse: { name: "Pat", socialSecurityNumber: SPOUSE } });
    const first = await sync({ source: memorySource(() => data), store: t.store, claimsWindow: WINDOW });
    expect(first.status).toBe("succeeded");
    const id = data.members[0]!.id as string;

    // What the old rule stored: `ssn` masked, the other keys plain (canonical, keys sorted).
    const stored = JSON.parse(t.db.prepare("SELECT d.data FROM _members_v v JOIN _members_d d ON d.vid = v.vid WHERE v.id = ?").pluck().get(id) as string) as Record<string, unknown>;
    const old: Record<string, unknown> = { dependentSsn: DEP, spouse: { name: "Pat", socialSecurityNumber: SPOUSE } };
    for (const [k, v] of Object.entries(stored)) if (!k.startsWith("dependentSsn") && k !== "spouse") old[k] = v;
    const oldText = canonicalJson(old);
    t.db.prepare("UPDATE _members_d SET data = ? WHERE vid IN (SELECT vid FROM _members_v WHERE id = ?)").run(oldText, id);
    t.db.prepare("DELETE FROM _meta WHERE key LIKE 'ssn%'").run();
    t.db.prepare("INSERT INTO _quarantine VALUES (?, 'members', 'members', NULL, 'the item has no id', ?, '2026-01-01T00:00:00Z')").run(
      first.runId,
      '{"spouse":{"socialSecurityNumber":"12-34-5"}}',
    );
    t.db.prepare("UPDATE _runs SET error = ? WHERE run_id = ?").run('HTTP 500: {"dependentSsn":"98-7"}', first.runId);
    expect(t.db.prepare("SELECT data FROM members WHERE id = ?").pluck().get(id)).toContain(DEP);
    const versionsBefore = t.db.prepare("SELECT COUNT(*) FROM _members_v").pluck().get();

    const second = await sync({ source: memorySource(() => data), store: t.store, claimsWindow: WINDOW });
    expect(second.status).toBe("succeeded");

    const now = JSON.parse(t.db.prepare("SELECT data FROM members WHERE id = ?").pluck().get(id) as string) as Record<string, unknown>;
    const token = (digits: string) => createHmac("sha256", TEST_PII_KEY).update(digits).digest("hex");
    expect(now.dependentSsn_token).toBe(token("111224444"));
    expect(now.dependentSsn_last4).toBe("4444");
    expect(now.spouse).toEqual({ name: "Pat", socialSecurityNumber_last4: "4445", socialSecurityNumber_token: token(SPOUSE) });
    expect(now.dependentSsn).toBeUndefined();
    // No new version, no change recorded: the record did not change, its stored form did.
    expect(t.db.prepare("SELECT COUNT(*) FROM _members_v").pluck().get()).toBe(versionsBefore);
    expect(t.db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = ?").pluck().get(second.runId)).toBe(0);
    const row = t.db.prepare("SELECT data, hash FROM members WHERE id = ?").get(id) as { data: string; hash: string };
    expect(row.hash).toBe(createHash("sha256").update(row.data).digest("hex").slice(0, 32));
    expect(t.db.prepare("SELECT excerpt FROM _quarantine").pluck().get()).not.toContain("12-34-5");
    expect(t.db.prepare("SELECT error FROM _runs WHERE run_id = ?").pluck().get(first.runId)).not.toContain("98-7");

    for (const f of [t.path, `${t.path}-wal`].filter(existsSync)) {
      const bytes = readFileSync(f).toString("latin1");
      for (const s of [DEP, DEP.replace(/-/g, ""), SPOUSE, "12-34-5"]) expect(bytes.includes(s), `${s} in ${f}`).toBe(false);
    }
  });

  it("rule 3: identifier names, typed pairs, last4 holding more and shapes are tokenised in place, typed columns too", async () => {
    const t = tempStore();
    cleanup.push(t.cleanup);
    const data = baseData();
    const first = await sync({ source: memorySource(() => data), store: t.store, claimsWindow: WINDOW });
    expect(first.status).toBe("succeeded");
    const memberId = data.members[0]!.id as string;
    const claimId = data.claims[0]!.id as string;
    const token = (digits: string) => createHmac("sha256", TEST_PII_KEY).update(digits).digest("hex");

    // What rule 2 stored for a member and a claim that hold what it did not see, as its writer wrote them.
    const member = JSON.parse(t.db.prepare("SELECT d.data FROM _members_v v JOIN _members_d d ON d.vid = v.vid WHERE v.id = ?").pluck().get(memberId) as string) as Record<string, unknown>;
    Object.assign(member, {
      taxId: "222-33-0001",
      governmentIds: [{ type: "SSN", value: "222330002" }],
      ssnLast4: "222330003",
      address: { city: "Austin", line1: "c/o 222-33-0004" },
    });
    const claim = JSON.parse(t.db.prepare("SELECT d.data FROM _claims_v v JOIN _claims_d d ON d.vid = v.vid WHERE v.id = ?").pluck().get(claimId) as string) as Record<string, unknown>;
    claim.processing = { denialReason: "member 123 45 6789 not found" };
    const write = (table: string, id: string, value: unknown) => {
      const text = canonicalJson(value);
      const vid = t.db.prepare(`SELECT vid FROM ${table} WHERE id = ?`).pluck().get(id);
      t.db.prepare(`UPDATE ${table.replace(/_v$/, "_d")} SET data = ?, hash = ? WHERE vid = ?`).run(text, createHash("sha256").update(text).digest("hex").slice(0, 32), vid);
      t.db.prepare(refreshTypedSql(table === "_members_v" ? "members" : "claims")).run(vid);
    };
    write("_members_v", memberId, member);
    write("_claims_v", claimId, claim);
    t.db.prepare("UPDATE _meta SET value = '2' WHERE key = 'ssn_rule'").run();
    // The premise: the plain text is in the data and in the typed columns.
    expect(t.db.prepare("SELECT address_line1 FROM members WHERE id = ?").pluck().get(memberId)).toBe("c/o 222-33-0004");
    expect(t.db.prepare("SELECT processing_denialReason FROM claims WHERE id = ?").pluck().get(claimId)).toBe("member 123 45 6789 not found");
    const versionsBefore = ["_members_v", "_claims_v", "_coverages_v"].map((v) => t.db.prepare(`SELECT COUNT(*) FROM ${v}`).pluck().get());

    const second = await sync({ source: memorySource(() => data), store: t.store, claimsWindow: WINDOW });
    expect(second.status).toBe("succeeded");

    const now = JSON.parse(t.db.prepare("SELECT data FROM members WHERE id = ?").pluck().get(memberId) as string) as Record<string, unknown>;
    expect(now).toMatchObject({
      taxId_last4: "0001",
      taxId_token: token("222330001"),
      governmentIds: [{ type: "SSN", value_last4: "0002", value_token: token("222330002") }],
      ssnLast4_last4: "0003",
      ssnLast4_token: token("222330003"),
      address: { city: "Austin", line1: `c/o [ssn:${token("222330004")}]` },
    });
    for (const k of ["taxId", "ssnLast4"]) expect(now[k], k).toBeUndefined();
    expect(t.db.prepare("SELECT address_line1 FROM members WHERE id = ?").pluck().get(memberId)).toBe(`c/o [ssn:${token("222330004")}]`);
    expect(t.db.prepare("SELECT processing_denialReason FROM claims WHERE id = ?").pluck().get(claimId)).toBe(`member [ssn:${token("123456789")}] not found`);
    // The same record, its stored form brought up to the rule: no new version, no change recorded.
    expect(["_members_v", "_claims_v", "_coverages_v"].map((v) => t.db.prepare(`SELECT COUNT(*) FROM ${v}`).pluck().get())).toEqual(versionsBefore);
    expect(t.db.prepare("SELECT COUNT(*) FROM changes WHERE run_id = ?").pluck().get(second.runId)).toBe(0);
    for (const [view, id] of [["members", memberId], ["claims", claimId]] as const) {
      const row = t.db.prepare(`SELECT data, hash FROM ${view} WHERE id = ?`).get(id) as { data: string; hash: string };
      expect(row.hash).toBe(createHash("sha256").update(row.data).digest("hex").slice(0, 32));
    }
    expect(t.db.prepare("SELECT value FROM _meta WHERE key = 'ssn_rule'").pluck().get()).toBe("3");

    for (const f of [t.path, `${t.path}-wal`].filter(existsSync)) {
      const bytes = readFileSync(f).toString("latin1");
      for (const s of ["222-33-0001", "222330002", "222330003", "222-33-0004", "123 45 6789"]) expect(bytes.includes(s), `${s} in ${f}`).toBe(false);
    }
  });
});
