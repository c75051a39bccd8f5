/** Which service a command talks to: a base URL with a key, or the embedded sandbox when named. */
import { resolveBaseUrl } from "./environments.js";
import { ConfigError } from "../errors.js";
import type { Config, EnvironmentName } from "./schema.js";

export type ServiceTarget =
  | {
      readonly kind: "remote";
      /** The environment named by `environment` / BENEFITS_ENV / --env; absent for a bare base URL. */
      readonly environment?: EnvironmentName;
      readonly baseUrl: string;
      readonly apiKey: string;
    }
  | { readonly kind: "sandbox"; readonly embeddedSandbox: true };

/**
 * What to set when no service is configured. A missing setting once meant the embedded sandbox,
 * and a cron job that lost BENEFITS_BASE_URL synced synthetic members into a real snapshot.
 */
export const NO_SERVICE_PROBLEM =
  "baseUrl: no service is configured. Set BENEFITS_BASE_URL and BENEFITS_API_KEY " +
  '(or "environment" and "environments" in the config file, with BENEFITS_API_KEY), ' +
  "or pass --env sandbox to use the embedded sandbox";

/**
 * Resolve the target service. Nothing is guessed: `baseUrl` wins over `environment`; the
 * `sandbox` environment, named, means the embedded sandbox (no key needed); with neither, a
 * {@link ConfigError} says what to set. A remote target without a key, or a named environment
 * without a base URL, is one ConfigError naming both problems (exit 2).
 *
 * @example
 * resolveService(loadConfig({ env: { BENEFITS_ENV: "sandbox" } })) // { kind: "sandbox", embeddedSandbox: true }
 * resolveService(loadConfig({ env: { BENEFITS_BASE_URL: "https://x.test", BENEFITS_API_KEY: "k" } }))
 * // { kind: "remote", baseUrl: "https://x.test", apiKey: "k" }
 * resolveService(loadConfig({ env: {} })) // throws ConfigError: no service is configured ...
 */
export function resolveService(config: Config): ServiceTarget {
  if (!config.baseUrl && config.environment === undefined) throw new ConfigError([NO_SERVICE_PROBLEM]);
  if (!config.baseUrl && config.environment === "sandbox") return { kind: "sandbox", embeddedSandbox: true };
  const problems: string[] = [];
  let baseUrl: string | undefined;
  try {
    baseUrl = resolveBaseUrl({ environment: config.environment, baseUrl: config.baseUrl, environments: config.environments });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  if (!config.apiKey) problems.push("apiKey: no API key is set; set BENEFITS_API_KEY (keys are per environment)");
  if (problems.length > 0 || baseUrl === undefined || !config.apiKey) throw new ConfigError(problems);
  return { kind: "remote", ...(config.environment ? { environment: config.environment } : {}), baseUrl, apiKey: config.apiKey };
}
