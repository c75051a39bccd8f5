/** Which service a command talks to: a base URL with a key, or the embedded sandbox. */
import { resolveBaseUrl } from "../api/environments.js";
import { ConfigError } from "../errors.js";
import type { Config } from "./schema.js";

export type ServiceTarget =
  | { readonly kind: "remote"; readonly baseUrl: string; readonly apiKey: string }
  | { readonly kind: "sandbox"; readonly embeddedSandbox: true };

/**
 * Resolve the target service. `baseUrl` wins over `environment`; the `sandbox` environment means
 * the embedded sandbox (no key needed). A remote target without a key, or a named environment
 * without a base URL, is one {@link ConfigError} naming both problems (exit 2).
 *
 * @example
 * resolveService(loadConfig({ env: {} })) // { kind: "sandbox", embeddedSandbox: true }
 * resolveService(loadConfig({ env: { BENEFITS_BASE_URL: "https://x.test", BENEFITS_API_KEY: "k" } }))
 * // { kind: "remote", baseUrl: "https://x.test", apiKey: "k" }
 */
export function resolveService(config: Config): ServiceTarget {
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
  return { kind: "remote", baseUrl, apiKey: config.apiKey };
}
