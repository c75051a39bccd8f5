/**
 * How a URL is shown in any text we print or keep (an error, a config problem, a log line, `doctor`,
 * `--json`): with the password of its userinfo masked, `postgresql://etl:***@host/db`. The user
 * name stays (it says which account to check); the password never leaves. `redact()` calls this,
 * so every message path gets it; a text that names a warehouse on purpose (the ledger's
 * `postgres://user@host:port/db`) carries no password to begin with.
 */

/**
 * `://`, a user name, then `:password@`, whatever comes before the `://` (a mistyped `htps`, no
 * scheme at all): the scheme does not matter to a password. The password runs to the LAST `@`
 * before whitespace, a quote or the next `://`: a raw `@` inside a password (`p@ss@host`, which URL
 * parsers accept) must not leave its tail visible. Masking too much in a rare text
 * (`http://h:80/x?mail=a@b`) is the safe side of that trade. Each `://` starts one attempt that
 * stops at the next, so a long hostile text costs linear time.
 */
const URL_PASSWORD = /:\/\/([^\s/?#@:"'<>]*):(?:(?!:\/\/)[^\s"'<>])*@/g;

const MASKED_PASSWORD = "***";

/**
 * Mask the password of every URL inside a text.
 *
 * @example
 * maskUrlPasswords('got "htps://svc:pw@host"') // 'got "htps://svc:***@host"'
 * maskUrlPasswords("postgres://etl@wh/db")     // unchanged: no password
 */
export function maskUrlPasswords(text: string): string {
  if (!text.includes("://")) return text;
  return text.replace(URL_PASSWORD, `://$1:${MASKED_PASSWORD}@`);
}

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443" };

/**
 * Where a URL points, as `host:port` (the scheme's port when none is given; undefined for a text that is no URL): what a connection
 * error names, so that a mistyped host or port shows at once. No user name, password or path.
 *
 * @example hostAndPort("https://svc:pw@api.example.com/v") // "api.example.com:443"
 */
export function hostAndPort(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  return `${u.hostname}:${u.port || DEFAULT_PORTS[u.protocol] || "?"}`;
}
