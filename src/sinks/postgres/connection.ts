/**
 * A Postgres warehouse named by URL: `postgres://user:password@host:5432/db?schema=benefits_sync`
 * (a unix socket: `postgres://user@/db?host=/run/postgresql`). `schema` is ours (default
 * `benefits_sync`) and is taken out before the URL reaches the driver; every other parameter is
 * the driver's (`sslmode`, `host`, ...). The password never appears in the ledger, a message or
 * an error: {@link WarehouseTarget.output} and `describe` leave it out.
 */
import pg from "pg";
import { ConfigError } from "../../errors.js";

export const DEFAULT_SCHEMA = "benefits_sync";

export interface WarehouseTarget {
  /** For the driver: the URL less our own `schema` parameter. */
  readonly connectionString: string;
  readonly schema: string;
  /** The ledger's name for it: `postgres://user@host:port/db#schema`, no password. */
  readonly output: string;
  readonly describe: string;
}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

export function parseWarehouseUrl(url: string): WarehouseTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError([`--sink: not a URL (expected postgres://user@host:5432/database?schema=${DEFAULT_SCHEMA})`]);
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw new ConfigError([`--sink: ${u.protocol}// is not a sink this version knows; expected postgres://user@host:5432/database`]);
  }
  const schema = u.searchParams.get("schema") ?? DEFAULT_SCHEMA;
  if (!IDENT.test(schema)) throw new ConfigError([`--sink: schema=${schema}: expected a lower-case identifier (letters, digits, _), e.g. ${DEFAULT_SCHEMA}`]);
  u.searchParams.delete("schema");
  const database = decodeURIComponent(u.pathname.replace(/^\//, "")) || "postgres";
  const host = u.searchParams.get("host") ?? (u.hostname || "localhost");
  const port = u.port || "5432";
  const user = decodeURIComponent(u.username) || "(default user)";
  const output = `postgres://${user}@${host}:${port}/${database}#${schema}`;
  return { connectionString: u.toString(), schema, output, describe: `${output.replace(/#.*$/, "")} (schema ${schema})` };
}

/** A connected client; a connection failure is an error that names the warehouse (no password) and what to check. */
export async function connectWarehouse(t: WarehouseTarget): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: t.connectionString, application_name: "benefits-sync" });
  // An error on an idle client (the server went away) must not crash the process: the next query fails instead.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => {});
    const err = e as { code?: string; message?: string };
    throw Object.assign(new Error(`cannot connect to the warehouse ${t.describe}: ${err.message ?? String(e)}; check the URL, that the server is up, and the user's rights`), {
      code: "WAREHOUSE_CONNECT",
    });
  }
  return client;
}
