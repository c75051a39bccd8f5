/**
 * How a connection string is shown in any text we print or keep (an error, a config problem, a log
 * line, `doctor`, `--json`): with its password masked, whatever its form: a URL's userinfo
 * (`postgresql://etl:***@host/db`) and a `password=` key (libpq's `host=h password=***`,
 * `PGPASSWORD=***`, `sslpassword=***`, a URL's `?password=***`, ODBC's `PWD=***;`). The user
 * name stays (it says which account to check); the password never leaves. `redact()` calls this, so every message path gets it; a text
 * that names a warehouse on purpose (the ledger's `postgres://user@host:port/db`) carries no
 * password to begin with.
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

/**
 * A key that ends in `password`, `passwd` or `pwd`, any case (`password`, `PGPASSWORD`,
 * `sslpassword`, ODBC's `PWD`), `=` with or without spaces, then its value:
 * - quoted in `'…'` (libpq, `'se cr\'et'`): to the closing quote that ends the value, the first
 *   `'` followed by whitespace, `"`, `\`, `;`, `,`, `)`, `}` or the end; so a quote escaped inside
 *   JSON (`\\'`, where the backslash itself was escaped) does not end it early;
 * - quoted in `"…"` or in ODBC's braces `{…}` (`}}` inside is a brace): to its closing mark;
 * - bare: to whitespace or a `"` (the end of a quoted or JSON string; a `\"` inside JSON does
 *   not stop it); ODBC's `PWD=` to `;`, a `"` or the line's end, since ODBC values may hold spaces.
 * A quote or brace never closed (a text cut short) masks to the end. In a URL the bare value takes
 * the parameters after it too: the safe side. The key's own letters start each attempt, and each
 * part consumes a character, so the cost stays linear; `passwordEnv` is no key with a value.
 */
const QUOTED = String.raw`'(?:[^'\\]|\\.|'(?=[^\s"\\;,)}]))*'?|"(?:[^"\\]|\\.)*"?|\{(?:\}\}|[^}])*\}?`;
const KEY_PASSWORD = new RegExp(String.raw`(passw(?:or)?d)(\s*=\s*)(?:${QUOTED}|(?:\\.|[^\s"\\])+)`, "gi");
const ODBC_PASSWORD = new RegExp(String.raw`(pwd)(\s*=\s*)(?:${QUOTED}|[^;"\r\n]+)`, "gi");

const MASKED_PASSWORD = "***";

/**
 * Mask the password of every connection string inside a text: a URL's, and every `password=`.
 *
 * @example
 * maskConnectionPasswords('got "htps://svc:pw@host"')    // 'got "htps://svc:***@host"'
 * maskConnectionPasswords("host=h password='p w' db=x")  // "host=h password=*** db=x"
 * maskConnectionPasswords("Server=h;Uid=u;PWD={a;b};")   // "Server=h;Uid=u;PWD=***;"
 * maskConnectionPasswords("postgres://etl@wh/db")        // unchanged: no password
 */
export function maskConnectionPasswords(text: string): string {
  const out = text.includes("://") ? text.replace(URL_PASSWORD, `://$1:${MASKED_PASSWORD}@`) : text;
  const keyed = /passw/i.test(out) ? out.replace(KEY_PASSWORD, `$1$2${MASKED_PASSWORD}`) : out;
  return /pwd/i.test(keyed) ? keyed.replace(ODBC_PASSWORD, `$1$2${MASKED_PASSWORD}`) : keyed;
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
