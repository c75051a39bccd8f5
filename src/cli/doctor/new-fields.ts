/**
 * doctor's second question, after "does the service answer": has the service started sending
 * fields we do not know? The run that first saw each path said so once; doctor is where someone
 * looks later, so it lists every path the snapshot recorded (paths only: the table keeps no value).
 * Reading the snapshot never fails doctor: its checks are about the service.
 */
import { BenefitsSyncError, redact } from "../../errors.js";
import type { MaskedAs } from "../../store/walk/field-masking.js";
import { newFieldsInFile } from "../../store/walk/new-fields.js";

export interface SeenField {
  readonly resource: string;
  readonly path: string;
  readonly firstRunId: number;
  readonly firstSeenAt: string;
  /** How the snapshot masked it (src/store/walk/field-masking.ts); null when it is stored as sent. */
  readonly masked: MaskedAs | null;
}

/** The recorded paths, or why there are none to show: no snapshot yet, or one that cannot be read. */
export interface NewFieldsSeen {
  readonly db: string;
  readonly fields: readonly SeenField[];
  readonly noSnapshot?: true;
  readonly problem?: string;
}

/** Every new field path the snapshot at `db` recorded, read only (no file is made). */
export function readNewFieldsSeen(db: string): NewFieldsSeen {
  try {
    const rows = newFieldsInFile(db);
    if (rows === undefined) return { db, fields: [], noSnapshot: true };
    return { db, fields: rows.map((r) => ({ resource: r.resource, path: r.path, firstRunId: r.first_run_id, firstSeenAt: r.first_seen_at, masked: r.masked })) };
  } catch (e) {
    if (!(e instanceof BenefitsSyncError)) throw e;
    return { db, fields: [], problem: redact(e.message) };
  }
}
