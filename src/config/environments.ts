import { ConfigError } from "../errors.js";

/** The service's named environments. Their base URLs come from configuration, never from code. */
export const Environments = ["production", "demo"] as const;
export type Environment = (typeof Environments)[number];

/**
 * Pick the service's base URL: an explicit `baseUrl` wins, else the URL configured for the named
 * environment. Throws a {@link ConfigError} naming the missing or bad key. The result has no
 * trailing slash, and may carry a path prefix (the spec does not say whether one precedes `/v2`).
 *
 * @example
 * resolveBaseUrl({ environment: "demo", environments: { demo: "https://demo.example.test" } })
 * // "https://demo.example.test"
 */
export function resolveBaseUrl(opts: {
  environment?: string | undefined;
  baseUrl?: string | undefined;
  environments?: Partial<Record<string, string | undefined>> | undefined;
}): string {
  if (opts.baseUrl) return checkUrl(opts.baseUrl, "baseUrl");
  const env = opts.environment ?? "production";
  const url = opts.environments?.[env];
  if (!url) {
    throw new ConfigError([
      `environments.${env}: no base URL is configured for the ${JSON.stringify(env)} environment (set it, or set baseUrl / BENEFITS_BASE_URL)`,
    ]);
  }
  return checkUrl(url, `environments.${env}`);
}

function checkUrl(raw: string, key: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError([`${key}: expected an http(s) URL`]);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError([`${key}: expected an http(s) URL, got the ${url.protocol} scheme`]);
  }
  if (url.username || url.password) {
    throw new ConfigError([`${key}: credentials in the URL are not allowed; use the API key setting`]);
  }
  if (url.search || url.hash) throw new ConfigError([`${key}: the base URL must not carry a query or fragment`]);
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}
