/**
 * `benefits-sync census apply FILE --group G`: make the service match the census. The work is in
 * src/eligibility/apply-census.ts; this file checks what must hold before anything is sent (a
 * clean file, a real service, `--yes` for production, the group's journal free) and writes the
 * result file. Exit 0 when every request succeeded, 1 when one failed, 2 for bad input, 75 when
 * another apply holds the group.
 */
import { join } from "node:path";
import { resolveBaseUrl } from "../../config/environments.js";
import { clientOptionsFromConfig } from "../../api/client-tuning.js";
import { resolveService } from "../../config/index.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

const NAME = "benefits-sync census apply";

export async function run(ctx: CommandContext): Promise<number> {
  const config = ctx.config();
  const file = String(ctx.options.file);
  const group = ctx.options.group;
  if (typeof group !== "string" || group === "") return usage(ctx, "--group G is required (the group number or its policy id)");
  const target = resolveService(config);
  if (target.kind === "sandbox")
    return usage(ctx, "the embedded sandbox would vanish with this command: run `benefits-sync sandbox` and point BENEFITS_BASE_URL at it");
  let production = target.environment === "production";
  if (!production && config.environments.production) production = resolveBaseUrl({ environment: "production", environments: config.environments }) === target.baseUrl;
  if (production && ctx.options.yes !== true) return usage(ctx, `this writes to the production environment (${target.baseUrl}): run \`benefits-sync census plan\` first, then apply with --yes`);

  const { resolveSnapshotPiiKey } = await import("../../store/pii/pii-key-identity.js");
  const { loadCensus } = await import("../../eligibility/census-input.js");
  const { CensusFileError } = await import("../../eligibility/read-census.js");
  const key = resolveSnapshotPiiKey(config.db, config.piiKey, { record: false }).key;
  let census;
  try {
    census = loadCensus(file, key);
  } catch (e) {
    if (e instanceof CensusFileError) return usage(ctx, e.message);
    throw e;
  }
  if (census.problems.length > 0) {
    const lines = census.problems.map((p) => `  line ${p.line}, ${p.field}: ${p.message}`);
    return usage(ctx, `${file}: ${census.problems.length} problem(s); nothing was sent. Fix them (see docs/census.md) and apply again:\n${lines.join("\n")}`);
  }

  const { createClient } = await import("../../api/client.js");
  const { findServiceGroup } = await import("../../eligibility/service-group.js");
  const { ApplyJournal, JournalBusyError } = await import("../../eligibility/apply-journal.js");
  const { applyCensus } = await import("../../eligibility/apply-census.js");
  const { defaultResultPath, writeResultFile } = await import("../../eligibility/result-file.js");
  const { defaultSleep } = await import("../../api/sleep.js");
  const client = createClient({ ...clientOptionsFromConfig(config), baseUrl: target.baseUrl, apiKey: target.apiKey });
  try {
    const found = await findServiceGroup(client, group);
    let journal;
    try {
      journal = ApplyJournal.open(join(`${config.db}.census`, `${found.groupPolicyId.replace(/[^A-Za-z0-9_.-]/g, "_")}.journal.jsonl`), { dbPath: config.db, key });
    } catch (e) {
      if (!(e instanceof JournalBusyError)) throw e;
      ctx.stderr.write(`${NAME}: ${e.message}\n`);
      return ExitCode.BUSY;
    }
    const started = new Date();
    try {
      const log = (line: string) => void (ctx.globals.quiet ? undefined : ctx.stderr.write(`census apply: ${line}\n`));
      const report = await applyCensus(client, found, census, key, journal, {
        batchSize: typeof ctx.options.batchSize === "number" ? ctx.options.batchSize : 50,
        settleMs: (typeof ctx.options.settleSeconds === "number" ? ctx.options.settleSeconds : 30) * 1000,
        pollTimeoutMs: 120_000,
        sleep: (ms) => defaultSleep(ms),
        log,
      });
      const path = typeof ctx.options.result === "string" ? ctx.options.result : defaultResultPath(config.db, found.groupPolicyId, started);
      writeResultFile(path, report, { file, fileSha256: census.sha256, service: target.baseUrl, groupPolicyId: found.groupPolicyId, groupNumber: found.groupNumber, startedAt: started.toISOString(), finishedAt: new Date().toISOString() }, census.rows);
      const sent = report.requests.length;
      if (ctx.globals.json) {
        ctx.stdout.write(`${JSON.stringify({ status: report.status, sent, requests: report.requests.map(({ body: _b, ...r }) => r), settledFromEarlier: report.settledFromEarlier.length, learned: report.learned.length, resultFile: path, ...(report.stoppedBy ? { stoppedBy: report.stoppedBy } : {}) })}\n`);
      } else {
        const failed = report.requests.filter((r) => r.outcome !== "succeeded" && r.outcome !== "found-applied" && r.outcome !== "accepted-listed");
        const lines = [
          sent === 0 ? "Nothing to send: the service already matches the file." : `Sent ${sent} request(s); ${sent - failed.length} succeeded${failed.length ? `, ${failed.length} did not:` : "."}`,
          ...failed.map((r) => `  ${r.kind} (lines ${r.lines.join(", ")}): ${r.outcome}${r.message ? `: ${r.message}` : ""}`),
          ...(report.stoppedBy ? [`Stopped: ${report.stoppedBy}`] : []),
          `Learned the member and coverage UUIDs of ${report.learned.length} row(s).`,
          `Result file: ${path}`,
        ];
        ctx.stdout.write(`${lines.join("\n")}\n`);
      }
      return report.status === "succeeded" ? ExitCode.OK : ExitCode.RUN_FAILED;
    } finally {
      journal.close();
    }
  } finally {
    await client.close();
  }
}

function usage(ctx: CommandContext, message: string): number {
  ctx.stderr.write(`${NAME}: ${message}\n`);
  return ExitCode.USAGE;
}
