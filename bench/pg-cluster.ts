/**
 * A throwaway PostgreSQL cluster for the tests and the benchmark: initdb in a temp directory,
 * started on a unix socket in that directory (no TCP port), stopped and removed by `stop()`.
 * PostgreSQL refuses to run as root: as root, initdb and pg_ctl run as the `postgres` user.
 *
 * @example const pg = await startPgCluster(); ... postgres://postgres@/postgres?host=${pg.socketDir} ... await pg.stop();
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PgCluster {
  /** The socket directory (also the cluster's home). */
  readonly socketDir: string;
  /** A URL for the `postgres` database as the `postgres` superuser. */
  readonly url: string;
  stop(): Promise<void>;
}

/** The directory holding initdb and pg_ctl: `PG_BIN`, else the newest /usr/lib/postgresql/N/bin. */
export function pgBinDir(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

/**
 * Start a cluster. `durable: false` (the tests) turns fsync off for speed; the benchmark keeps
 * PostgreSQL's defaults. Throws with the reason when PostgreSQL is missing or does not start.
 */
export async function startPgCluster(opts: { durable?: boolean } = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb; apt-get install postgresql, or set PG_BIN)");
  const dir = mkdtempSync(join(tmpdir(), "bsync-pg-"));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    execFileSync(asRoot ? "runuser" : join(bin, cmd), asRoot ? ["-u", "postgres", "--", join(bin, cmd), ...args] : args, { stdio: "pipe", cwd: "/" });
  try {
    if (asRoot) {
      const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
      const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
      chownSync(dir, uid, gid);
    }
    const data = join(dir, "data");
    run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"]);
    const settings = [`-k ${dir}`, "-c listen_addresses=''", ...(opts.durable ? [] : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"])];
    run("pg_ctl", ["-D", data, "-o", settings.join(" "), "-w", "-t", "60", "-l", join(dir, "server.log"), "start"]);
    return {
      socketDir: dir,
      url: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(dir)}`,
      async stop() {
        try {
          run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
        } catch {
          /* already stopped */
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    const err = e as { stderr?: Buffer; message?: string };
    throw new Error(`PostgreSQL did not start: ${err.stderr?.toString().trim() || err.message}`);
  }
}
