/**
 * Preloaded into a CLI process (`NODE_OPTIONS=--require <this file>`, with KILL_MID_PRUNE=WHERE:N):
 * the process kills itself (SIGKILL, as `kill -9`) at the Nth SQLite statement of a prune's step
 * named WHERE, right after SQLite ran it and before its transaction commits (`runs`: the step that
 * records and removes the runs; `versions`: a batch of closed versions; `vacuum`: a slice of the
 * incremental vacuum, which commits by itself), or with `:after` right after that transaction
 * committed (the next statement of the prune never runs). Only better-sqlite3's statements are
 * wrapped; the process is the real CLI.
 */
const Database = require("better-sqlite3");

const [where, count, after] = (process.env.KILL_MID_PRUNE ?? "").split(":");
const n = Number(count);
const PATTERNS = {
  runs: /^\s*INSERT OR REPLACE INTO _pruned_runs/,
  versions: /^DELETE FROM _\w+_v WHERE vid IN/,
  vacuum: /^PRAGMA incremental_vacuum/,
};
let seen = 0;
let armed = false;
const die = () => process.kill(process.pid, "SIGKILL");

const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (sql, ...rest) {
  const stmt = prepare.call(this, sql, ...rest);
  if (armed) die();
  if (!PATTERNS[where]?.test(sql)) return stmt;
  const run = stmt.run;
  stmt.run = function (...args) {
    const r = run.apply(this, args);
    if (++seen === n) {
      if (after === "after") armed = true;
      else die();
    }
    return r;
  };
  return stmt;
};
const pragma = Database.prototype.pragma;
Database.prototype.pragma = function (source, ...rest) {
  if (armed && !/^wal_checkpoint/.test(source)) die();
  const r = pragma.call(this, source, ...rest);
  if (PATTERNS[where]?.test(`PRAGMA ${source}`) && ++seen === n) {
    if (after === "after") armed = true;
    else die();
  }
  return r;
};
const transaction = Database.prototype.transaction;
Database.prototype.transaction = function (fn) {
  const t = transaction.call(this, fn);
  const wrap = (variant) =>
    function (...args) {
      const r = variant.apply(this, args);
      if (armed) die();
      return r;
    };
  const out = wrap(t);
  for (const k of ["deferred", "immediate", "exclusive"]) out[k] = wrap(t[k]);
  out.default = out;
  return out;
};
