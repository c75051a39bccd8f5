/**
 * The end of `sync` and `run JOB` on the command line: the configured chat webhook hears of a
 * failed run or new fields (src/jobs/notify.ts), and a message that did not land is a warning on
 * stderr, even under --quiet (cron mails it), never a change of the exit status.
 */
import type { Config } from "../config/schema.js";
import type { JobReport } from "../jobs/run-job.js";
import type { CommandContext } from "./context.js";

export async function notifyRunEnd(ctx: Pick<CommandContext, "stderr" | "env">, config: Config, job: string, report: JobReport): Promise<void> {
  if (!config.notify) return;
  const { notifyJob, notifyUrl } = await import("../jobs/notify.js");
  const problem = await notifyJob(notifyUrl(config.notify, ctx.env), job, report);
  if (problem) ctx.stderr.write(`${problem}\n`);
}
