/**
 * `benefits-sync config check [FILE]`: the check every command makes at load (checked-config.ts),
 * on its own, so a file can be tried before cron or the scheduler meets it. Each problem on one
 * line, with the file and the key; exit 2 when there is one, else a short summary and exit 0.
 * The API key is only said to be set or not, never shown.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { DEFAULT_CONFIG_FILE, resolveService, type Config } from "../../config/index.js";
import { ConfigError } from "../../errors.js";
import { notifyUrl } from "../../jobs/notify.js";
import { effectiveJobs } from "../../jobs/registry.js";
import { hostAndPort } from "../../url-display.js";
import { checkReceiverSetup, type ReceiverSetup } from "../../webhooks/receiver.js";
import { checkConfig } from "../checked-config.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

export async function run(ctx: CommandContext): Promise<number> {
  const file = (ctx.options.file as string | undefined) ?? ctx.globals.config ?? DEFAULT_CONFIG_FILE;
  if (!existsSync(path.resolve(ctx.cwd, file))) {
    ctx.stderr.write(`benefits-sync config check: no config file at ${file}; write one with \`benefits-sync init\`, or name it: benefits-sync config check FILE\n`);
    return ExitCode.USAGE;
  }
  const g = ctx.globals;
  const check = checkConfig({ flags: { db: g.db, baseUrl: g.baseUrl, environment: g.env }, env: ctx.env, cwd: ctx.cwd, configPath: file });
  if (!check.ok) {
    const suffix = ` (from the config file ${file})`;
    // A problem with a key the file sets leads with the file: `FILE: jobs.x.schedule: ...`.
    for (const p of check.problems) ctx.stderr.write(`${p.endsWith(suffix) ? `${file}: ${p.slice(0, -suffix.length)}` : p}\n`);
    ctx.stderr.write(`${file}: ${check.problems.length} problem${check.problems.length === 1 ? "" : "s"}; sync, jobs and schedule refuse it as it is\n`);
    return ExitCode.USAGE;
  }
  // The receiver's own checks, when the file or the environment sets it up: `webhooks serve` would refuse what fails them.
  const w = check.config.webhooks;
  let receiver: ReceiverSetup | undefined;
  if (check.config.webhookSecrets.length > 0 || w.auth || w.tls) {
    try {
      receiver = checkReceiverSetup(check.config, { env: ctx.env, cwd: ctx.cwd });
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      for (const p of e.problems) ctx.stderr.write(`${file}: webhooks serve would refuse to start: ${p}\n`);
      ctx.stderr.write(`${file}: ${e.problems.length} problem${e.problems.length === 1 ? "" : "s"} for the webhook receiver; sync and jobs are not affected\n`);
      return ExitCode.USAGE;
    }
  }
  if (!ctx.globals.quiet) ctx.stdout.write(summary(file, check.config, ctx.env, receiver));
  return ExitCode.OK;
}

/** The receiver as `webhooks serve` would start it; secrets are counted, never shown. */
function webhooksLine(config: Config, setup: ReceiverSetup | undefined): string {
  if (!setup) return "not set up (no BENEFITS_WEBHOOK_SECRET; webhooks serve needs one, or --insecure-no-signature)";
  const w = config.webhooks;
  const n = setup.secrets.length;
  return [`${setup.tls ? "https" : "http"}://${w.host}:${w.port}${w.path}`, `${n} secret${n === 1 ? "" : "s"}`, setup.auth ? `Auth: ${setup.auth.what}` : "no Auth header checked"].join(", ");
}

function summary(file: string, config: Config, env: Readonly<Record<string, string | undefined>>, receiver: ReceiverSetup | undefined): string {
  const jobs = effectiveJobs(config);
  const on = jobs.filter((j) => j.enabled).map((j) => `${j.name} (${j.schedule} ${j.timezone})`);
  const off = jobs.filter((j) => !j.enabled).map((j) => j.name);
  const sinks = Object.entries(config.sinks).map(([name, s]) => (s.type === "folder" ? `${name} (folder ${s.dir}, ${s.format})` : `${name} (postgres)`));
  return [
    `${file}: OK`,
    `  service:  ${service(config)}`,
    `  key:      BENEFITS_API_KEY is ${env["BENEFITS_API_KEY"]?.trim() ? "set" : "not set (sync, doctor and schedule need it)"}`,
    `  snapshot: ${config.db}`,
    `  sinks:    ${sinks.length ? sinks.join(", ") : "none"}`,
    `  jobs:     ${on.length ? on.join(", ") : "none enabled"}${off.length ? `; disabled: ${off.join(", ")}` : ""}`,
    ...(config.notify ? [`  notify:   ${notifyTarget(config.notify, env)}, on a failed run or new fields`] : []),
    `  webhooks: ${webhooksLine(config, receiver)}`,
    "",
  ].join("\n");
}

/** Where notify goes, by host and port only: a chat webhook's path is its token. */
function notifyTarget(notify: NonNullable<Config["notify"]>, env: Readonly<Record<string, string | undefined>>): string {
  const url = notifyUrl(notify, env);
  return `${(url && hostAndPort(url)) ?? "?"}${notify.urlEnv ? ` (from ${notify.urlEnv})` : ""}`;
}

function service(config: Config): string {
  if (!config.baseUrl && config.environment === undefined) return "none configured (set baseUrl in the file, or BENEFITS_BASE_URL)";
  try {
    const target = resolveService(config);
    return target.kind === "sandbox" ? "the embedded sandbox" : target.baseUrl;
  } catch (err) {
    // Without a key resolveService refuses; the base URL still is what the file says.
    if (err instanceof ConfigError) return config.baseUrl ?? `environment ${config.environment}`;
    throw err;
  }
}
