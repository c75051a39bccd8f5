/**
 * Preloaded into a CLI process (`NODE_OPTIONS=--require <this file>`): every write into a file
 * whose name holds `.pii-key` (the key file, a new key file, a temp file beside either) waits
 * SLOW_KEY_WRITE_MS (default 300) before it writes, as a loaded disk would between a file's
 * creation and its bytes. A second command started beside this one then looks in that window.
 * Only node:fs is wrapped; the process is the real CLI.
 */
const fs = require("node:fs");
const { syncBuiltinESMExports } = require("node:module");

const ms = Number(process.env.SLOW_KEY_WRITE_MS ?? 300);
const keyFds = new Set();
const open = fs.openSync;
const write = fs.writeSync;
const close = fs.closeSync;
fs.openSync = function (p, ...rest) {
  const fd = open.call(this, p, ...rest);
  if (typeof p === "string" && /\.pii-key/.test(p.split("/").pop() ?? "")) keyFds.add(fd);
  return fd;
};
fs.writeSync = function (fd, ...rest) {
  if (keyFds.has(fd)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  return write.call(this, fd, ...rest);
};
fs.closeSync = function (fd) {
  keyFds.delete(fd);
  return close.call(this, fd);
};
syncBuiltinESMExports();
