/**
 * Who may read a run folder. By default only its owner: the folder is 0700 and its files 0600
 * whatever the umask (they hold PHI). A folder sink's config may choose a group-readable mode
 * (`"mode": "0640"`: files 0640, folders the matching execute bits, 0750) and a `group` (a name
 * or a gid), so a loader running as another user can read it; both are set on the hidden folder
 * before its rename, so the folder never appears with other permissions.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, readdirSync } from "node:fs";
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

function setOne(path: string, mode: number | undefined, gid: number | undefined): void {
  if (gid !== undefined) chownSync(path, -1, gid);
  // After the chown: changing the group may clear set-id bits, never the mode's read bits.
  if (mode !== undefined) chmodSync(path, mode);
}
