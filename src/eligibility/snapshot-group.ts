/**
 * The group as the snapshot last saw it, for `census plan`: read-only, one read transaction, SSNs as
 * tokens (the stored ones, or made here from a snapshot kept with `--pii keep`).
 */
import { existsSync } from "node:fs";
import { InputFileError, UsageError } from "../input-errors.js";
import { openDatabase } from "../store/file/database.js";
import { groupMember, plainSsnToken, type GroupView } from "./group-people.js";

/**
 * Read group `group` (its number or its policy id) and its members from the snapshot at `dbPath`.
 * A snapshot kept with `--pii keep` holds plain SSNs: they are tokenized here, under `key`, as the
 * census's are.
 * A missing snapshot or an unknown group is an InputFileError or a UsageError saying what to do (exit 2).
 *
 * @example const view = readSnapshotGroup("benefits-sync.db", "G-1001");
 */
export function readSnapshotGroup(dbPath: string, group: string, key: Buffer): GroupView {
  if (dbPath === ":memory:" || !existsSync(dbPath)) throw new InputFileError([`db: no snapshot at ${dbPath}; run \`benefits-sync sync\` first (the plan compares the file with it)`]);
  const db = openDatabase(dbPath, { readonly: true });
  try {
    // deferred: a read-only connection; one transaction for one consistent view of the group.
    return db.transaction(() => {
      const groups = db.prepare("SELECT id, groupId FROM groups WHERE id = ? OR groupId = ?").all(group, group) as { id: string; groupId: string | null }[];
      if (groups.length === 0) throw new UsageError([`--group: the snapshot has no group ${JSON.stringify(group)} (by group number or policy id); run \`benefits-sync sync\` if it is new`]);
      if (groups.length > 1) throw new UsageError([`--group: ${JSON.stringify(group)} names ${groups.length} groups (${groups.map((g) => g.id).join(", ")}); give the group policy id`]);
      const gp = groups[0]!;
      const plans = (db.prepare("SELECT id FROM plans WHERE groupPolicyId = ? ORDER BY id").pluck().all(gp.id) as string[]);
      const rows = db
        .prepare(
          `SELECT m.data AS data, json_group_array(json_object('id', c.id, 'groupPolicyId', c.groupPolicyId, 'planId', c.planId,
             'subscriberCoverageId', c.subscriberCoverageId, 'startDate', c.startDate, 'endDate', c.endDate, 'status', c.status)) AS covs
           FROM coverages c JOIN members m ON m.id = c.memberId WHERE c.groupPolicyId = ? GROUP BY m.id ORDER BY m.id`,
        )
        .all(gp.id) as { data: string; covs: string }[];
      const members = rows.flatMap((r) => {
        const record = { ...(JSON.parse(r.data) as Record<string, unknown>), coverages: JSON.parse(r.covs) as unknown[] };
        const m = groupMember(record, gp.id, (x) => (typeof x.ssn_token === "string" ? x.ssn_token : plainSsnToken(x.ssn, key)));
        return m ? [m] : [];
      });
      return { groupPolicyId: gp.id, groupNumber: gp.groupId, plans, members };
    })();
  } finally {
    db.close();
  }
}

