/**
 * The census file and the PII key a command starts from. The key must be the snapshot's (the same
 * HMAC key gives the same SSN token), so a census never creates one where a snapshot has none.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, fstatSync, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { ConfigError } from "../errors.js";
import { InputFileError } from "../input-errors.js";
import { resolveSnapshotPiiKey } from "../store/pii/pii-key-identity.js";
import { openBesideSqlite } from "../store/file/sqlite-file.js";
import { CsvParser } from "./csv-records.js";
import { CensusReader, type Census } from "./read-census.js";

/**
 * The snapshot's PII key: the configured one, or the key file beside the snapshot. With neither,
 * a ConfigError (exit 2): a new key would give tokens no snapshot knows.
 */
export function snapshotPiiKey(dbPath: string, configured: string | undefined): Buffer {
  if (!configured && !existsSync(`${dbPath}.pii-key`))
    throw new ConfigError([`piiKey: neither BENEFITS_PII_KEY nor ${dbPath}.pii-key is there; run \`benefits-sync sync\` first, so that the census's SSN tokens are the snapshot's`]);
  return resolveSnapshotPiiKey(dbPath, configured, { record: false }).key;
}

/**
 * The largest census file read: 40 MB, about 280,000 rows of the full layout (about 145 bytes a
 * row). `census plan` of 300,000 such rows peaked at 0.62 GB and of 600,000 at 1.09 GB (linear,
 * about 1.6 KB a row over 0.16 GB: bench/census-size.ts), so a file at the limit stays under 1 GB
 * also with narrower rows (about 490,000 rows of 85 bytes). A group's census is far smaller; a
 * bigger file is most likely several groups' (or not a census), and is refused before it is read.
 */
export const CENSUS_MAX_BYTES = 40 * 1024 * 1024;

/**
 * The most rows read: a file of narrow rows (only the required columns, ~45 bytes) fits 900,000
 * rows in {@link CENSUS_MAX_BYTES}, about 1.6 GB to plan; past 500,000 rows (about 0.96 GB by the
 * same fit) the read stops and the file is refused, before anything is planned or sent.
 */
export const CENSUS_MAX_ROWS = 500_000;

const CHUNK = 1024 * 1024;

/**
 * Read and check the census file at `path`, in chunks (never the whole file as one string), with
 * its SHA-256 for the result file. A missing or unreadable file, or one over
 * {@link CENSUS_MAX_BYTES}, is a ConfigError (exit 2) and nothing of it is read; one over
 * {@link CENSUS_MAX_ROWS} is refused (exit 2) as soon as its read gets there.
 *
 * @example const census = loadCensus("census.csv", key);
 */
export function loadCensus(path: string, key: Buffer): Census & { sha256: string } {
  let fd: number;
  let size: number;
  try {
    // The user's CSV, read before this process opens any SQLite file; a path named as SQLite names
    // its files is refused unopened (src/store/file/sqlite-file.ts).
    fd = openBesideSqlite(path, "r", 0o600);
    size = fstatSync(fd).size;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputFileError([`FILE: cannot read the census file ${path}${code === "ENOENT" ? ": no such file" : code ? ` (${code})` : ""}`]);
  }
  try {
    if (size > CENSUS_MAX_BYTES)
      throw new InputFileError([`FILE: the census file ${path} is ${mb(size)}, over the ${mb(CENSUS_MAX_BYTES)} a census may be; nothing was read or sent. Split it, e.g. one file per group (see docs/census.md)`]);
    const hash = createHash("sha256");
    const decoder = new StringDecoder("utf8");
    const reader = new CensusReader(path, key);
    let records = 0;
    const parser = new CsvParser((rec) => {
      // The header is a record too: rows are the records after it.
      if (++records > CENSUS_MAX_ROWS + 1)
        throw new InputFileError([`FILE: the census file ${path} has more than ${CENSUS_MAX_ROWS.toLocaleString("en-US")} rows, the most a census may have; nothing was planned or sent. Split it, e.g. one file per group (see docs/census.md)`]);
      reader.record(rec);
    });
    const buf = Buffer.allocUnsafe(CHUNK);
    for (let n; (n = readSync(fd, buf, 0, CHUNK, null)) > 0; ) {
      hash.update(buf.subarray(0, n));
      parser.push(decoder.write(buf.subarray(0, n)));
    }
    parser.push(decoder.end());
    return { ...reader.finish(parser.end().unterminatedQuoteAt), sha256: hash.digest("hex") };
  } finally {
    closeSync(fd);
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
