/**
 * `benefits-sync doctor`: check the key and each read endpoint once, against the configured
 * service, or the embedded sandbox when asked for by name (`--env sandbox`). No service
 * configured is a ConfigError (exit 2). Exit 0 when every check passes, 1 otherwise. Then the
 * field paths the service added without notice, as the snapshot recorded them (doctor/new-fields.ts),
 * and whether the configured PII key is the snapshot's (doctor/pii-key.ts: a mismatch exits 1).
 */
import { clientOptionsFromConfig } from "../../api/client-tuning.js";
import { resolveService } from "../../config/index.js";
import type { CommandContext } from "../context.js";
import { runDoctorChecks } from "../doctor/checks.js";
import { readNewFieldsSeen } from "../doctor/new-fields.js";
import { failsDoctor, piiKeyLine, renderPiiKeyLine } from "../doctor/pii-key.js";
import { renderJson, renderTable } from "../doctor/render.js";
import { ExitCode } from "../exit-codes.js";

/** Doctor must answer quickly: one retry at most, and a Retry-After is not waited out for long. */
const DOCTOR_RETRY = { maxAttempts: 2, retryAfterCapMs: 5_000 } as const;
/** The embedded sandbox only needs to be big enough to have a member. */
const EMBEDDED_SANDBOX_MEMBERS = 50;

export function run(ctx: CommandContext): Promise<number> {
  return runDoctor(ctx, { newFields: true });
}

/** `newFields: false` for `init`, whose folder has no snapshot to look at yet. */
export async function runDoctor(ctx: CommandContext, show: { readonly newFields: boolean }): Promise<number> {
  const config = ctx.config();
  const target = resolveService(config);
  let baseUrl: string;
  let apiKey: string;
  let service: string;
  let day = new Date().toISOString().slice(0, 10);
  let closeSandbox: (() => Promise<void>) | undefined;
  if (target.kind === "sandbox") {
    // Imported lazily: the sandbox's generator is not needed for a remote service.
    const { startSandbox } = await import("../../sandbox/index.js");
    const sandbox = await startSandbox({ members: EMBEDDED_SANDBOX_MEMBERS });
    closeSandbox = () => sandbox.close();
    ({ baseUrl } = sandbox);
    apiKey = sandbox.keys.full;
    day = sandbox.today;
    service = `embedded sandbox (${baseUrl})`;
  } else {
    ({ baseUrl, apiKey } = target);
    service = baseUrl;
  }
  try {
    const { createClient } = await import("../../api/client.js");
    const tuning = clientOptionsFromConfig(config);
    const client = createClient({
      ...tuning,
      retry: { ...tuning.retry, maxAttempts: DOCTOR_RETRY.maxAttempts, retryAfterCapMs: Math.min(tuning.retry?.retryAfterCapMs ?? Infinity, DOCTOR_RETRY.retryAfterCapMs) },
      baseUrl,
      apiKey,
    });
    try {
      const report = await runDoctorChecks(client, {
        claimDateParams: config.resources.claims.dateParams,
        memberIdField: config.resources.members.idField,
        day,
      });
      const seen = show.newFields ? readNewFieldsSeen(config.db) : undefined;
      // A key the snapshot would refuse fails doctor: every sync would exit 2.
      const pii = show.newFields ? piiKeyLine(config.db, config.piiKey) : undefined;
      const ok = report.ok && !failsDoctor(pii);
      if (ctx.globals.json) ctx.stdout.write(renderJson(report, service, seen, pii));
      else if (!ctx.globals.quiet || !ok) ctx.stdout.write(renderTable(report, service, seen) + (pii ? renderPiiKeyLine(pii) : ""));
      return ok ? ExitCode.OK : ExitCode.RUN_FAILED;
    } finally {
      await client.close();
    }
  } finally {
    await closeSandbox?.();
  }
}
