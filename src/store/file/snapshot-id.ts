/**
 * A snapshot's identity (`_meta.snapshot_id`, migration 4): 128 random bits written as 32 letters
 * `a`-`p` (each hex digit shifted to a letter). Not hex: messages that name a snapshot (an output
 * or a warehouse that belongs to another one) go through the SSN mask (src/errors.ts), which
 * turns any nine digits in a row into `[ssn]`, PHI first; one hex id in eighteen held such a run,
 * and its refusal named a snapshot nobody could find. Snapshots made before keep their hex id.
 */
import { randomBytes } from "node:crypto";

const LETTERS = "abcdefghijklmnop";

export function newSnapshotId(): string {
  let id = "";
  for (const byte of randomBytes(16)) id += LETTERS[byte >> 4]! + LETTERS[byte & 15]!;
  return id;
}
