/**
 * File permissions by choice: a run folder is private (0700, files 0600) whatever the umask,
 * unless its configured sink says `mode` (files; folders get the matching execute bits) and
 * `group`, which are set before the folder's rename, so a loader never sees it otherwise. The
 * output directory holding the run folders is made reachable the same way (a loader must enter it
 * first), even under the systemd units' umask 0077, without taking anything from a directory that
 * was already there.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { exportFolder } from "../../../src/sinks/files/formats.js";
import { configuredOutputs, deliverAll } from "../../../src/sinks/outputs.js";
import { loadConfig } from "../../../src/config/index.js";
import { runDir } from "../../helpers/run-folders.js";
import { useTempStores } from "../../helpers/temp-store.js";
import { baseData, runSync } from "./fixtures.js";

const setup = useTempStores();
const bits = (p: string) => statSync(p).mode & 0o777;
const myGroup = execFileSync("id", ["-gn"], { encoding: "utf8" }).trim();
const myGid = Number(execFileSync("id", ["-g"], { encoding: "utf8" }).trim());
/** A group to give the output: as root another one than ours (so a change is seen), else ours. */
const asRoot = process.getuid?.() === 0;
const otherGid = asRoot ? Number(execFileSync("getent", ["group", "daemon"], { encoding: "utf8" }).split(":")[2]) : myGid;

/** Run `f` under `mask`, as a service with UMask= runs. */
async function underUmask<T>(mask: number, f: () => Promise<T>): Promise<T> {
  const old = process.umask(mask);
  try {
    return await f();
  } finally {
    process.umask(old);
  }
}

describe("run folder permissions", () => {
  it("by default a folder is 0700 and its files 0600, even under umask 000", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const old = process.umask(0);
    try {
      const f = await exportFolder(t.db, r.runId, join(t.dir, "out"), "parquet");
      expect(bits(f.dir)).toBe(0o700);
      for (const name of readdirSync(f.dir)) expect(bits(join(f.dir, name)), name).toBe(0o600);
    } finally {
      process.umask(old);
    }
  });

  it('a folder sink with mode "0640" and a group: files 0640, folders 0750, owned by that group', async () => {
    for (const [format, group] of [["csv", myGroup], ["parquet", myGid]] as const) {
      const t = setup();
      const r = await runSync(t, baseData());
      const dir = join(t.dir, "shared");
      const specs = configuredOutputs({ lake: { type: "folder", dir, format, mode: "0640", group } }, {}, t.dir);
      const [d] = await deliverAll(t.db, Object.values(specs), r.runId);
      expect(d!.outcome.status).toBe("delivered");
      const folder = join(dir, runDir(r.runId));
      expect(bits(folder)).toBe(0o750);
      expect(statSync(folder).gid).toBe(myGid);
      const names = readdirSync(folder);
      expect(names).toContain("manifest.json");
      for (const name of names) {
        expect(bits(join(folder, name)), name).toBe(0o640);
        expect(statSync(join(folder, name)).gid).toBe(myGid);
      }
    }
  });

  it('under umask 0077, a DIR the sink creates gets the folders\' mode and group ("0640": 0750), so a loader can enter it', async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const dir = join(t.dir, "shared");
    const specs = configuredOutputs({ lake: { type: "folder", dir, format: "csv", mode: "0640", group: otherGid } }, {}, t.dir);
    const [d] = await underUmask(0o077, () => deliverAll(t.db, Object.values(specs), r.runId));
    expect(d!.outcome.status).toBe("delivered");
    expect(bits(dir)).toBe(0o750);
    expect(statSync(dir).gid).toBe(otherGid);
    expect(bits(join(dir, runDir(r.runId)))).toBe(0o750);
    // Without a mode or a group, DIR stays as the umask makes it: private.
    const quiet = join(t.dir, "private");
    const plain = configuredOutputs({ own: { type: "folder", dir: quiet, format: "csv" } }, {}, t.dir);
    expect((await underUmask(0o077, () => deliverAll(t.db, Object.values(plain), r.runId)))[0]!.outcome.status).toBe("delivered");
    expect(bits(quiet)).toBe(0o700);
  });

  it("a DIR that was already there only gains the read and search bits the mode gives, and the group: no bit is taken", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const cases: [string, number, number][] = [
      // [name, DIR's mode before, after] for mode "0640"
      ["tight", 0o700, 0o750],
      ["odd", 0o701, 0o751],
      ["setgid", 0o2700, 0o2750],
      ["open", 0o775, 0o775],
    ];
    for (const [name, before, after] of cases) {
      const dir = join(t.dir, name);
      mkdirSync(dir);
      chmodSync(dir, before);
      const specs = configuredOutputs({ lake: { type: "folder", dir, format: "jsonl", mode: "0640", group: otherGid } }, {}, t.dir);
      const [d] = await underUmask(0o077, () => deliverAll(t.db, Object.values(specs), r.runId));
      expect(d!.outcome.status, name).toBe("delivered");
      expect((statSync(dir).mode & 0o7777).toString(8), name).toBe(after.toString(8));
      expect(statSync(dir).gid, name).toBe(otherGid);
    }
    // "0644" lets others read the files: others may then list and enter DIR too.
    const wide = join(t.dir, "wide");
    mkdirSync(wide, { mode: 0o700 });
    const specs = configuredOutputs({ lake: { type: "folder", dir: wide, format: "csv", mode: "0644" } }, {}, t.dir);
    expect((await deliverAll(t.db, Object.values(specs), r.runId))[0]!.outcome.status).toBe("delivered");
    expect(bits(wide)).toBe(0o755);
  });

  // Only root can make a directory another user's and still write into it.
  it.runIf(asRoot)("as root, a DIR owned by another user is left as it is: its owner decides who enters", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const dir = join(t.dir, "theirs");
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 65534, 65534);
    const specs = configuredOutputs({ lake: { type: "folder", dir, format: "csv", mode: "0640", group: otherGid } }, {}, t.dir);
    expect((await deliverAll(t.db, Object.values(specs), r.runId))[0]!.outcome.status).toBe("delivered");
    expect(bits(dir)).toBe(0o700);
    expect(statSync(dir).gid).toBe(65534);
    expect(bits(join(dir, runDir(r.runId)))).toBe(0o750);
  });

  it("a mode that is not octal, gives the group or others write, or takes the owner's read/write is refused, naming the key", () => {
    const t = setup();
    const cfg = (mode: unknown) => () => {
      writeFileSync(join(t.dir, "config.json"), JSON.stringify({ sinks: { lake: { type: "folder", dir: "x", mode } } }));
      return loadConfig({ configPath: "config.json", cwd: t.dir, env: {} });
    };
    for (const bad of ["640x", "0666", "0700", "0440", "0646", 640]) expect(cfg(bad), String(bad)).toThrow(/sinks\.lake\.mode/);
    expect(cfg("0640")).not.toThrow();
    expect(cfg("0600")).not.toThrow();
  });

  it("a group that does not exist is a configuration error naming it, and nothing is written", () => {
    const t = setup();
    const dir = join(t.dir, "shared");
    const call = () => configuredOutputs({ lake: { type: "folder", dir, format: "csv", mode: "0640", group: "no-such-group-7f3a" } }, {}, t.dir);
    expect(call).toThrow(ConfigError);
    expect(call).toThrow(/sinks\.lake\.group: no group named no-such-group-7f3a/);
    expect(existsSync(dir)).toBe(false);
  });

  // Only root may give a file to a group it is not in: there, the group is seen to change.
  it.runIf(process.getuid?.() === 0)("as root, a group other than the primary one is set on the folder and every file", async () => {
    const t = setup();
    const r = await runSync(t, baseData());
    const dir = join(t.dir, "shared");
    const specs = configuredOutputs({ lake: { type: "folder", dir, format: "jsonl", group: "daemon" } }, {}, t.dir);
    expect((await deliverAll(t.db, Object.values(specs), r.runId))[0]!.outcome.status).toBe("delivered");
    const folder = join(dir, runDir(r.runId));
    const daemon = Number(execFileSync("getent", ["group", "daemon"], { encoding: "utf8" }).split(":")[2]);
    expect(daemon).not.toBe(myGid);
    for (const p of [folder, ...readdirSync(folder).map((n) => join(folder, n))]) expect(statSync(p).gid, p).toBe(daemon);
    // No mode asked for: still private.
    expect(bits(folder)).toBe(0o700);
  });
});
