/**
 * `benefits-sync init [PATH]`: set-up in one command. Writes a commented config file (never over
 * an existing one: exit 2, the file untouched), checks it as every command will (checked-config.ts),
 * then runs doctor's checks against the service it names. The command's own work is the file, so
 * it exits 0 once the file is written and checked; what the service said, or what is still to do
 * before it can be asked (a URL, the key), is printed as the last lines rather than as a failure
 * that would make one think the file was not written.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEFAULT_CONFIG_FILE } from "../../config/index.js";
import { BenefitsSyncError } from "../../errors.js";
import { checkConfig, loadCheckedConfig } from "../checked-config.js";
import { PLACEHOLDER_URL, configTemplate } from "../config-template.js";
import type { CommandContext } from "../context.js";
import { ExitCode } from "../exit-codes.js";

export async function run(ctx: CommandContext): Promise<number> {
  const file = (ctx.options.path as string | undefined) ?? ctx.globals.config ?? DEFAULT_CONFIG_FILE;
  const abs = path.resolve(ctx.cwd, file);
  const baseUrl = ctx.globals.baseUrl ?? ctx.env["BENEFITS_BASE_URL"]?.trim() ?? PLACEHOLDER_URL;
  const text = configTemplate({ baseUrl: baseUrl || PLACEHOLDER_URL, db: ctx.globals.db ?? "./benefits-sync.db" });
  if (existsSync(abs)) {
    ctx.stderr.write(`benefits-sync init: ${writeProblem(file, Object.assign(new Error("exists"), { code: "EEXIST" }))}\n`);
    return ExitCode.USAGE;
  }
  const problems = problemsOf(text, abs, file, ctx);
  if (problems.length > 0) {
    for (const p of problems) ctx.stderr.write(`${p}\n`);
    ctx.stderr.write(`benefits-sync init: nothing was written to ${file}\n`);
    return ExitCode.USAGE;
  }
  try {
    // "wx": created here or not at all, so an existing file (or one made meanwhile) is never replaced.
    writeFileSync(abs, text, { flag: "wx", mode: 0o644 });
  } catch (err) {
    ctx.stderr.write(`benefits-sync init: ${writeProblem(file, err)}\n`);
    return ExitCode.USAGE;
  }
  const say = (line: string) => void ctx.stdout.write(`${line}\n`);
  say(`Wrote ${file}: the service URL, the snapshot, one folder sink (./deltas) and the jobs, each explained in a comment.`);
  const left: string[] = [];
  if (baseUrl === PLACEHOLDER_URL || !baseUrl) left.push(`set "baseUrl" in ${file} to your service's URL (or pass --base-url to init)`);
  if (!ctx.env["BENEFITS_API_KEY"]?.trim()) left.push("set BENEFITS_API_KEY to your service key in the environment that runs benefits-sync (never in the file)");
  if (left.length > 0) {
    say(`Left to do before the first sync: ${left.join("; ")}. Then check the service with: benefits-sync doctor${configFlag(file)}`);
    return ExitCode.OK;
  }
  say(`Checking the service with doctor:`);
  const doctor = await import("./doctor.js");
  let code: number;
  try {
    code = await doctor.runDoctor({ ...ctx, globals: { ...ctx.globals, config: file }, config: () => loadCheckedConfig({ env: ctx.env, cwd: ctx.cwd, configPath: file }) }, { newFields: false });
  } catch (err) {
    if (!(err instanceof BenefitsSyncError)) throw err;
    ctx.stderr.write(`benefits-sync doctor: ${err.message}\n`);
    code = ExitCode.RUN_FAILED;
  }
  if (code === ExitCode.OK) say(`Ready: run benefits-sync sync${configFlag(file)} (or benefits-sync schedule to run the jobs).`);
  else say(`Left to do: the service did not pass every check above; fix "baseUrl" in ${file} or BENEFITS_API_KEY, then run benefits-sync doctor${configFlag(file)}.`);
  return ExitCode.OK;
}

/**
 * The file as every command will check it, tried beside its final place before that place is
 * taken: a bad --base-url (or a BENEFITS_* variable the file cannot work with) writes nothing.
 */
function problemsOf(text: string, abs: string, file: string, ctx: CommandContext): string[] {
  const trial = path.join(path.dirname(abs), `.${path.basename(abs)}.init-${process.pid}`);
  try {
    writeFileSync(trial, text, { flag: "wx" });
  } catch (err) {
    return [`benefits-sync init: ${writeProblem(file, err)}`];
  }
  try {
    const check = checkConfig({ env: ctx.env, cwd: ctx.cwd, configPath: trial });
    // The trial file is named as the file it stands for; a URL given to init, as the flag.
    const named = (p: string) => (ctx.globals.baseUrl !== undefined && p.startsWith("baseUrl:") ? p.split(`the config file ${trial}`).join("--base-url") : p.split(trial).join(file));
    return check.ok ? [] : check.problems.map(named);
  } finally {
    rmSync(trial, { force: true });
  }
}

const configFlag = (file: string) => (file === DEFAULT_CONFIG_FILE ? "" : ` --config ${file}`);

function writeProblem(file: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EEXIST") return `${file} already exists; nothing was written. Check it with \`benefits-sync config check${file === DEFAULT_CONFIG_FILE ? "" : ` ${file}`}\`, edit it, or give init another path`;
  if (code === "ENOENT") return `cannot write ${file}: its directory ${path.dirname(file)} does not exist; create it, or give init another path`;
  if (code === "EISDIR") return `${file} is a directory; give init a file path`;
  return `cannot write ${file} (${code ?? "error"}); give init a path in a directory you can write`;
}
