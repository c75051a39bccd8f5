/**
 * The census file and the PII key a command starts from. The key must be the snapshot's (the same
 * HMAC key gives the same SSN token), so a census never creates one where a snapshot has none.
 */
import { existsSync, readFileSync } from "node:fs";
import { ConfigError } from "../errors.js";
import { loadOrCreatePiiKey } from "../store/pii.js";
import { readCensus, type Census } from "./read-census.js";

/**
 * The snapshot's PII key: the configured one, or the key file beside the snapshot. With neither,
 * a ConfigError (exit 2): a new key would give tokens no snapshot knows.
 */
export function snapshotPiiKey(dbPath: string, configured: string | undefined): Buffer {
  if (!configured && !existsSync(`${dbPath}.pii-key`))
    throw new ConfigError([`piiKey: neither BENEFITS_PII_KEY nor ${dbPath}.pii-key is there; run \`benefits-sync sync\` first, so that the census's SSN tokens are the snapshot's`]);
  return loadOrCreatePiiKey(dbPath, configured).key;
}

/**
 * Read and check the census file at `path` (a missing or unreadable file is a ConfigError).
 *
 * @example const census = loadCensus("census.csv", key);
 */
export function loadCensus(path: string, key: Buffer): Census & { bytes: Buffer } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError([`FILE: cannot read the census file ${path}${code === "ENOENT" ? ": no such file" : code ? ` (${code})` : ""}`]);
  }
  return { ...readCensus(bytes.toString("utf8"), path, key), bytes };
}
