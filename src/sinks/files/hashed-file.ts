import { createHash } from "node:crypto";
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { ManifestFile } from "./manifest.js";

/**
 * A text file written in 64 KB chunks, hashed as it goes, fsynced on close; created new (`wx`,
 * mode 0600). What the CSV and JSONL formats write through.
 */
export class HashedFile {
  private fd: number | undefined;
  private readonly hash = createHash("sha256");
  private buffered: string[] = [];
  private size = 0;
  private rows = 0;
  private readonly path: string;
  constructor(
    dir: string,
    private readonly name: string,
  ) {
    this.path = join(dir, name);
    this.fd = openSync(this.path, "wx", 0o600);
  }

  /** Delete the file (after `abandon`): a write given up, to be made again. */
  remove(): void {
    this.abandon();
    rmSync(this.path, { force: true });
  }

  /** Text that is not a row (a header). */
  text(s: string): void {
    this.buffered.push(s);
    this.size += s.length;
    if (this.size >= 1 << 16) this.flush();
  }

  row(s: string): void {
    this.rows++;
    this.text(s);
  }

  close(): ManifestFile {
    this.flush();
    fsyncSync(this.fd!);
    closeSync(this.fd!);
    this.fd = undefined;
    return { file: this.name, rows: this.rows, sha256: this.hash.digest("hex") };
  }

  /** Close the descriptor if `close` did not (an error on the way). */
  abandon(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private flush(): void {
    if (this.buffered.length === 0) return;
    const chunk = Buffer.from(this.buffered.join(""), "utf8");
    this.buffered = [];
    this.size = 0;
    this.hash.update(chunk);
    for (let off = 0; off < chunk.length; ) off += writeSync(this.fd!, chunk, off);
  }
}
