/**
 * Preloaded into a CLI process (`NODE_OPTIONS=--require <this file>`, with STOP_AFTER_FILE=NAME):
 * the process stops itself (SIGSTOP) right after it has written and fsynced a file NAME inside a
 * hidden run folder (`.N.tmp-...`) or state export folder (`.state-00000010.tmp-...`), so a test can act while a delivery is mid-write, at a point
 * seen in the file system rather than at a moment: kill it there (SIGKILL), or let another
 * process run and then continue it (SIGCONT). Only node:fs is wrapped; the process is the real CLI.
 */
const fs = require("node:fs");
const { syncBuiltinESMExports } = require("node:module");

const name = process.env.STOP_AFTER_FILE;
const paths = new Map();
const open = fs.openSync;
const fsync = fs.fsyncSync;
fs.openSync = function (p, ...rest) {
  const fd = open.call(this, p, ...rest);
  if (typeof p === "string") paths.set(fd, p);
  return fd;
};
fs.fsyncSync = function (fd) {
  fsync.call(this, fd);
  const p = paths.get(fd);
  if (name && p && /\/\.(?:\d+|(?:state|history)-\d+)\.tmp-[^/]+\//.test(p) && p.endsWith(`/${name}`)) process.kill(process.pid, "SIGSTOP");
};
syncBuiltinESMExports();
