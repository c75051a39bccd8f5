/**
 * Who may read a run folder. By default only its owner: the folder is 0700 and its files 0600
 * whatever the umask (they hold PHI). A folder sink's config may choose a group-readable mode
 * (`"mode": "0640"`: files 0640, folders the matching execute bits, 0750) and a `group` (a name
 * or a gid), so a loader running as another user can read it; both are set on the hidden folder
 * before its rename, so the folder never appears with other permissions.
 *
 * A loader must also list and enter the output directory (DIR) that holds the run folders, which
 * a umask of 0077 (the systemd units') would leave 0700. So with a mode or a group set, DIR gets
 * them too, before any run folder appears in it: a DIR the sink creates gets exactly a run
 * folder's mode and group; a DIR that was already there (the user's, or ours from a run before
 * the mode was set) only gains: the read and search bits the mode gives the group and others
 * (0640: g+rx), and the configured group. Nothing is taken from it (no bit is cleared, no write
 * bit added), and a DIR owned by another user is left as it is: its owner decides who enters.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../errors.js";

export interface FolderPermissions {
  /** The files' mode (0o640); folders get the execute bit wherever a file has the read bit. */
  readonly mode?: number;
  readonly gid?: number;
}

/** A folder's mode for files of mode `fileMode`: 0640 -> 0750. */
export const folderMode = (fileMode: number): number => fileMode | ((fileMode & 0o444) >> 2);

/**
 * A configured sink's `mode` and `group`, read: the mode from its octal text (the schema checked
 * it), the group from its name (looked up with `getent group`) or gid. A ConfigError naming the
 * key when the group does not exist.
 */
export function folderPermissions(sink: string, mode: string | undefined, group: string | number | undefined): FolderPermissions {
  const out: { mode?: number; gid?: number } = {};
  if (mode !== undefined) out.mode = parseInt(mode, 8);
  if (group !== undefined) out.gid = typeof group === "number" || /^\d+$/.test(group) ? Number(group) : gidOf(sink, group);
  return out;
}

function gidOf(sink: string, name: string): number {
  let line = "";
  try {
    line = execFileSync("getent", ["group", name], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    // getent exits 2 for a group it does not know.
  }
  const gid = Number(line.split(":")[2]);
  if (!line || !Number.isInteger(gid)) {
    throw new ConfigError([`sinks.${sink}.group: no group named ${name} on this machine (getent group ${name} finds none); give an existing group's name or its gid`]);
  }
  return gid;
}

/** Set `dir`'s files and `dir` itself to `p` (nothing to do for the private default). */
export function applyPermissions(dir: string, p: FolderPermissions | undefined): void {
  if (!p || (p.mode === undefined && p.gid === undefined)) return;
  for (const name of readdirSync(dir)) setOne(join(dir, name), p.mode, p.gid);
  setOne(dir, p.mode === undefined ? undefined : folderMode(p.mode), p.gid);
}

/**
 * Make the output directory `dir` reachable as `p` says (see the file's comment): `created` when
 * this delivery made it. Nothing to do for the private default.
 *
 * @example applyToOutputDir("/data/lake", { mode: 0o640, gid: 1001 }, false) // an existing 0700 DIR -> 0750, group 1001
 */
export function applyToOutputDir(dir: string, p: FolderPermissions | undefined, created: boolean): void {
  if (!p || (p.mode === undefined && p.gid === undefined)) return;
  if (created) return setOne(dir, p.mode === undefined ? undefined : folderMode(p.mode), p.gid);
  const st = statSync(dir);
  if (process.getuid !== undefined && st.uid !== process.getuid()) return;
  const mode = st.mode & 0o7777;
  // Read and search for the group and others, as far as the mode lets them read the files.
  const wanted = p.mode === undefined ? 0 : folderMode(p.mode) & 0o055;
  const gid = p.gid !== undefined && p.gid !== st.gid ? p.gid : undefined;
  if (gid === undefined && (mode & wanted) === wanted) return;
  // The mode is set again after a group change, which may clear a set-id bit the DIR had.
  setOne(dir, mode | wanted, gid);
}

function setOne(path: string, mode: number | undefined, gid: number | undefined): void {
  if (gid !== undefined) chownSync(path, -1, gid);
  // After the chown: changing the group may clear set-id bits, never the mode's read bits.
  if (mode !== undefined) chmodSync(path, mode);
}

/** {@link applyPermissions} through a tree (the table layout's staged `members/run_id=…/` folders): every file, every folder. */
export function applyPermissionsTree(dir: string, p: FolderPermissions | undefined): void {
  if (!p || (p.mode === undefined && p.gid === undefined)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) applyPermissionsTree(join(dir, e.name), p);
    else setOne(join(dir, e.name), p.mode, p.gid);
  }
  setOne(dir, p.mode === undefined ? undefined : folderMode(p.mode), p.gid);
}
