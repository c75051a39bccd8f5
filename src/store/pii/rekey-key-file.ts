/**
 * The key file across a re-keying: the new key is written beside the old one as
 * `<db>.pii-key.new` (0600) before the snapshot's transaction commits, and renamed over
 * `<db>.pii-key` after. A crash between the two leaves both files; the snapshot's check value
 * tells which key it holds, so whoever opens it next finishes the rename (or, for `pii rekey`
 * alone, which holds the write lock, removes a new key that never committed).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { asDiskFull } from "../file/disk-full.js";
import { createKeyFileWhole, readKeyFile } from "./pii.js";

export const pendingKeyPath = (dbPath: string): string => `${dbPath}.pii-key.new`;

/** `none`: no new key file; `completed`: it was the snapshot's key and is now the key file; `left`: it is not (yet) the snapshot's. */
export type PendingKey = "none" | "completed" | "left";

/**
 * Finish a re-keying that committed but did not rename its key file: when `<db>.pii-key.new` holds
 * the key whose check the snapshot records, it becomes `<db>.pii-key`. A new key file the snapshot
 * does not record is left alone (a `pii rekey` may be in its transaction right now).
 */
export function completePendingKey(dbPath: string, checkOf: (key: Buffer) => string, stored: string | undefined): PendingKey {
  const pending = pendingKeyPath(dbPath);
  if (!existsSync(pending)) return "none";
  if (stored === undefined || !sameCheck(checkOf(readKeyFile(pending)), stored)) return "left";
  try {
    renameSync(pending, `${dbPath}.pii-key`);
  } catch (e) {
    // Another process finished it first.
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  return "completed";
}

/** A new random key, written as `<db>.pii-key.new` (0600); one left by a re-keying that never committed is replaced. */
export function writePendingKey(dbPath: string): Buffer {
  const pending = pendingKeyPath(dbPath);
  rmSync(pending, { force: true });
  const key = randomBytes(32);
  // Whole or not at all: a command opening the snapshot meanwhile reads this file (completePendingKey).
  let linked: boolean;
  try {
    linked = createKeyFileWhole(pending, key);
  } catch (e) {
    throw asDiskFull(e, dbPath);
  }
  // Only a rekey writes this file, and it holds the write lock: one there now is no one's.
  if (!linked) throw new Error(`pii rekey: ${pending} appeared while the rekey held the write lock; nothing was changed`);
  return key;
}

/** After the commit: the new key becomes the key file (written again from memory if another process already moved it). */
export function installPendingKey(dbPath: string, key: Buffer): void {
  const file = `${dbPath}.pii-key`;
  try {
    renameSync(pendingKeyPath(dbPath), file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    if (existsSync(file) && readKeyFile(file).equals(key)) return;
    writeFileSync(`${file}.tmp`, `${key.toString("hex")}\n`, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }
}

export function sameCheck(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}
