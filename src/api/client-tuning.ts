/** The client's tuning, taken from the configuration. */
import type { ClientOptions } from "./client-options.js";
import { RESOURCE_NAMES } from "../config/schema.js";
import type { Config } from "../config/schema.js";

/** The part of `ClientOptions` the configuration decides; base URL and key come from `resolveService`. */
export type ClientTuning = Omit<ClientOptions, "baseUrl" | "apiKey">;

/**
 * Map configuration onto client options: concurrency, rate, deadlines, retries, per-resource page
 * size and id field, and the claim date parameter names.
 *
 * @example
 * const target = resolveService(config);
 * if (target.kind === "remote") createClient({ ...clientOptionsFromConfig(config), ...target });
 */
export function clientOptionsFromConfig(config: Config): ClientTuning {
  const { http, resources } = config;
  const pageSize: NonNullable<ClientOptions["pageSize"]> = {};
  const idFields: NonNullable<ClientOptions["idFields"]> = {};
  for (const name of RESOURCE_NAMES) {
    if (resources[name].pageSize !== undefined) pageSize[name] = resources[name].pageSize;
    idFields[name] = resources[name].idField;
  }
  return {
    concurrency: http.concurrency,
    requestsPerSecond: http.requestsPerSecond,
    deadlines: { connectMs: http.connectTimeoutMs, headersMs: http.headersTimeoutMs, bodyMs: http.bodyTimeoutMs },
    retry: { ...http.retry },
    pageSize,
    idFields,
    claimDateParams: { ...resources.claims.dateParams },
  };
}
