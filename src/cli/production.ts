/**
 * Whether a command is about to write to the production service: named (`--env production`,
 * BENEFITS_ENV) or reached by its URL (`environments.production` given as the base URL). A command
 * that changes the service's data there asks for `--yes` first.
 */
import type { Config } from "../config/index.js";
import type { ServiceTarget } from "../config/resolve-service.js";
import { UsageError } from "../input-errors.js";

/**
 * @example
 * targetsProduction(config, { kind: "remote", environment: "production", baseUrl, apiKey }) // true
 */
export function targetsProduction(config: Config, target: ServiceTarget): boolean {
  if (target.kind !== "remote") return false;
  if (target.environment === "production") return true;
  const prod = config.environments.production;
  return prod !== undefined && prod.replace(/\/+$/, "") === target.baseUrl;
}

/** Throw a usage error (exit 2, nothing sent) unless `--yes` was given for a production write. */
export function requireYesForProduction(config: Config, target: ServiceTarget, yes: unknown, what: string): void {
  if (yes === true || !targetsProduction(config, target)) return;
  throw new UsageError([`--yes: ${what} writes to the production service (${target.kind === "remote" ? target.baseUrl : ""}); nothing was sent. Check the file, then run again with --yes`]);
}
