/** The environment variables of the contract, mapped onto configuration keys. */
import type { Layer } from "./layers.js";

/** Variable name -> configuration key. */
export const ENV_VARS = {
  BENEFITS_ENV: "environment",
  BENEFITS_BASE_URL: "baseUrl",
  BENEFITS_API_KEY: "apiKey",
  BENEFITS_DB: "db",
  BENEFITS_PII_KEY: "piiKey",
  BENEFITS_WEBHOOK_SECRET: "webhookSecrets",
} as const;

/**
 * The environment as a configuration layer. An empty variable counts as unset (a shell's
 * `BENEFITS_DB= cmd` should not become an empty path); the webhook secret is a comma-separated list
 * because two secrets are valid during a rotation.
 *
 * @example
 * envLayer({ BENEFITS_WEBHOOK_SECRET: "old,new" }).data // { webhookSecrets: ["old", "new"] }
 */
export function envLayer(env: Readonly<Record<string, string | undefined>>): Layer {
  const data: Record<string, unknown> = {};
  const varOf = new Map<string, string>();
  for (const [variable, key] of Object.entries(ENV_VARS)) {
    const raw = env[variable];
    if (raw === undefined || raw.trim() === "") continue;
    data[key] =
      key === "webhookSecrets"
        ? raw.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
        : raw.trim();
    varOf.set(key, variable);
  }
  return { data, labelOf: (path) => varOf.get(path[0] ?? "") ?? "the environment" };
}
