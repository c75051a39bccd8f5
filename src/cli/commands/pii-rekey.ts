/**
 * `benefits-sync pii rekey [--old-key-env NAME] [--dry-run] [--exhaustive] [--drop-unrecoverable]`:
 * re-tokenise the snapshot under a new PII key (docs/pii-key.md). The old key comes from the
 * variable NAME names, else from the key file beside the snapshot; the new one is BENEFITS_PII_KEY,
 * else a new key file. Exit 0 done (or nothing to do), 2 refused (wrong old key, tokens whose digits
 * were not found, a census apply left open), 75 a run holds the snapshot, 1 it failed.
 */
import { existsSync } from "node:fs";
import { journalsWithOpenWrites } from "../../eligibility/apply-journal.js";
import { registerSecret, SnapshotBusyError } from "../../errors.js";
import { readKeyFile } from "../../store/pii/pii.js";
import { RekeyRefusedError, rekeySnapshot, type RekeyProgress, type RekeyReport } from "../../store/pii/rekey.js";
import { requireSnapshot } from "../snapshot-to-read.js";
import type { CommandContext, Output } from "../context.js";
import { ExitCode } from "../exit-codes.js";

interface Options {
  readonly oldKeyEnv?: string;
  readonly dryRun?: boolean;
  readonly exhaustive?: boolean;
  readonly dropUnrecoverable?: boolean;
}

export async function run(ctx: CommandContext): Promise<number> {
  const o = ctx.options as Options;
  const config = ctx.config();
  requireSnapshot(config.db);
  const keyFile = `${config.db}.pii-key`;
  let oldKey: Buffer;
  let oldSource: string;
  if (o.oldKeyEnv !== undefined) {
    const value = ctx.env[o.oldKeyEnv];
    if (!value) return refuse(ctx, `--old-key-env ${o.oldKeyEnv}: that variable is not set (or is empty); set it to the key the snapshot was tokenised with`);
    registerSecret(value);
    [oldKey, oldSource] = [Buffer.from(value, "utf8"), o.oldKeyEnv];
  } else if (existsSync(keyFile)) {
    [oldKey, oldSource] = [readKeyFile(keyFile), `the key file ${keyFile}`];
  } else {
    return refuse(ctx, `no old key: ${keyFile} is missing; give --old-key-env NAME, naming the variable that holds the key the snapshot was tokenised with`);
  }
  const progress = terminal(ctx.stderr);
  try {
    const report = await rekeySnapshot({
      dbPath: config.db,
      oldKey,
      oldSource,
      newKey: config.piiKey ? Buffer.from(config.piiKey, "utf8") : undefined,
      dropUnrecoverable: o.dropUnrecoverable === true,
      exhaustive: o.exhaustive === true,
      dryRun: o.dryRun === true,
      progress,
      unsettledWrites: journalsWithOpenWrites,
    });
    progress.done();
    if (ctx.globals.json) ctx.stdout.write(`${JSON.stringify({ command: "pii rekey", ...report })}\n`);
    else if (!ctx.globals.quiet) ctx.stdout.write(describe(report, config.db, config.piiKey !== undefined));
    if (report.fileNote) ctx.stderr.write(`benefits-sync pii rekey: ${report.fileNote}\n`);
    if (report.walEmptied === false) ctx.stderr.write("benefits-sync pii rekey: another connection held the snapshot's WAL (-wal file), which may still hold old tokens until the next checkpoint (every run's end)\n");
    return ExitCode.OK;
  } catch (e) {
    progress.done();
    if (e instanceof RekeyRefusedError) return refuse(ctx, e.message);
    if (e instanceof SnapshotBusyError) {
      ctx.stderr.write(`benefits-sync pii rekey: ${e.message}\n`);
      return ExitCode.BUSY;
    }
    throw e;
  }
}

function refuse(ctx: CommandContext, message: string): number {
  ctx.stderr.write(`benefits-sync pii rekey: ${message.replace(/^pii rekey: /, "")}\n`);
  return ExitCode.USAGE;
}

const n = (x: number) => x.toLocaleString("en-US");

/** What was done, and what the outputs delivered before must do. */
export function describe(r: RekeyReport, db: string, configured: boolean): string {
  if (r.completedPending) {
    return `An earlier pii rekey had committed but not renamed its new key file: ${r.keyFile} now holds the snapshot's key. Nothing else was done.\n`;
  }
  const search = `${n(r.last4s)} last4 searched`;
  if (r.dryRun) {
    return (
      `Dry run: ${n(r.tokens)} distinct tokens in ${n(r.places)} places (${search}; ${n(r.bare)} in free text only, ` +
      `${r.bare > 0 ? "found by a key field's token or --exhaustive" : "none"}). The search: ${n(r.tries)} tries at ${r.usPerTry.toFixed(2)} µs each on ` +
      `${r.threads} thread${r.threads === 1 ? "" : "s"}, about ${Math.ceil(r.estimateSeconds ?? 0)} s. Nothing was changed.\n`
    );
  }
  const key = configured ? "BENEFITS_PII_KEY (keep it set for every run; the old key no longer opens this snapshot)" : `the new key file ${r.keyFile} (mode 0600: back it up with the snapshot; the old key is gone)`;
  return [
    `Re-keyed ${db}: ${n(r.tokens)} tokens (${n(r.places)} places, ${search}, ${n(r.tries)} tries at ${r.usPerTry.toFixed(2)} µs each on ${r.threads} thread${r.threads === 1 ? "" : "s"}) ` +
      `rewritten in ${n(r.versionsRewritten)} versions, current and history, in ${r.seconds.toFixed(1)} s; no run and no change recorded.` +
      (r.unrecoverable > 0 ? ` ${n(r.unrecoverable)} tokens whose digits were not found are now null.` : ""),
    `The new key: ${key}.`,
    "Outputs delivered before (sync --out folders, sinks, exports, census result files) hold ssn_token values and [ssn:…] of the old key: they no longer join the " +
      "snapshot's or any later delivery's. Re-export every run into a new folder or schema and move consumers there: " +
      "`benefits-sync export --from-run 1 --run N --out NEW_DIR` (N: the last run, see `benefits-sync runs`), or " +
      "`benefits-sync export --from-run 1 --run N --sink postgres://…?schema=NEW_SCHEMA`; then retire the old ones.",
    "",
  ].join("\n");
}

/** Progress on a terminal (one line redrawn, at most five times a second); nothing elsewhere. */
function terminal(out: Output & { isTTY?: boolean }): RekeyProgress & { done(): void } {
  if (out.isTTY !== true) return { step: () => {}, done: () => {} };
  let last = 0;
  let drawn = false;
  return {
    step(what, done, total) {
      const counted = done !== undefined && total !== undefined && total > 0;
      if (counted && done < total && Date.now() - last < 200) return;
      last = Date.now();
      out.write(`\r\x1b[2Kpii rekey: ${what}${counted ? `: ${n(done)} of ${n(total)} (${Math.floor((100 * done) / total)}%)` : ""}`);
      drawn = true;
    },
    done() {
      if (drawn) out.write("\r\x1b[2K");
      drawn = false;
    },
  };
}
