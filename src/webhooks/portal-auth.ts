/**
 * The Auth the portal sends with each delivery (spec: Webhook authentication: an API key header,
 * basic or bearer), checked as configured in `webhooks.auth`. The expected value never sits in the
 * config file: the file names the environment variable that holds it (as a Postgres sink's
 * `urlEnv`), and the value is registered so no message or log line can carry it.
 *
 * Comparisons are constant-time whatever the lengths: both sides are hashed with a key made at
 * start, and the digests compared with `timingSafeEqual`.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { ConfigError, registerSecret } from "../errors.js";

export type PortalAuthConfig =
  | { readonly type: "apiKey"; readonly header: string; readonly keyEnv: string }
  | { readonly type: "basic"; readonly username: string; readonly passwordEnv: string }
  | { readonly type: "bearer"; readonly tokenEnv: string };

/** Checks one request's headers; `what` names the scheme for the start-up line (never the value). */
export interface PortalAuth {
  readonly what: string;
  check(headers: IncomingHttpHeaders): boolean;
}

const compareKey = randomBytes(32);
const digest = (s: string) => createHmac("sha256", compareKey).update(s, "utf8").digest();

/** Equal strings, in a time that depends on neither. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** `Basic dXNlcjpwYXNz` → ["user", "pass"]; null for anything else (strictly decoded, as signatures are). */
function basicPair(header: string): [string, string] | null {
  const m = /^basic +(\S+)$/i.exec(header);
  if (!m || !BASE64.test(m[1]!) || m[1]!.length % 4 !== 0) return null;
  const raw = Buffer.from(m[1]!, "base64");
  if (raw.toString("base64") !== m[1]) return null;
  const text = raw.toString("utf8");
  const colon = text.indexOf(":");
  return colon < 0 ? null : [text.slice(0, colon), text.slice(colon + 1)];
}

function one(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return typeof v === "string" ? v : undefined;
}

/**
 * The check for `webhooks.auth`, with its secret read from `env` now: a variable that is unset is a
 * ConfigError naming it, so the receiver does not start and then refuse every delivery.
 *
 * @example
 * const auth = portalAuthFrom({ type: "bearer", tokenEnv: "PORTAL_TOKEN" }, process.env);
 * auth.check(req.headers); // true when `Authorization: Bearer <PORTAL_TOKEN>`
 */
export function portalAuthFrom(config: PortalAuthConfig, env: Readonly<Record<string, string | undefined>>): PortalAuth {
  const variable = config.type === "apiKey" ? config.keyEnv : config.type === "basic" ? config.passwordEnv : config.tokenEnv;
  const key = config.type === "apiKey" ? "keyEnv" : config.type === "basic" ? "passwordEnv" : "tokenEnv";
  const secret = env[variable];
  if (secret === undefined || secret === "") {
    throw new ConfigError([`webhooks.auth.${key}: the environment variable ${variable} is not set; set it to the ${config.type === "apiKey" ? "API key" : config.type === "basic" ? "password" : "token"} of the Auth chosen for the portal's event configuration`]);
  }
  registerSecret(secret);
  if (config.type === "apiKey") {
    return { what: `API key in ${config.header}`, check: (h) => sameSecret(one(h, config.header) ?? "", secret) };
  }
  if (config.type === "bearer") {
    return {
      what: "bearer token",
      check: (h) => {
        const m = /^bearer +(\S+)$/i.exec(one(h, "authorization") ?? "");
        return sameSecret(m?.[1] ?? "", secret);
      },
    };
  }
  return {
    what: `basic, user ${config.username}`,
    check: (h) => {
      // No header, or one that is not strict base64 of user:password, compares as empty: refused (the secret is not empty).
      const pair = basicPair(one(h, "authorization") ?? "") ?? ["", ""];
      // Both compared every time: a wrong user name takes as long as a wrong password.
      const user = sameSecret(pair[0], config.username);
      const pass = sameSecret(pair[1], secret);
      return user && pass;
    },
  };
}
