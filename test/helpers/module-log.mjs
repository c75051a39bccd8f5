// Preloaded with `node --import` (NODE_OPTIONS) by a test: every module the process loads is
// appended, as its URL, to the file named by MODULE_LOG, so the test can tell which were loaded.
import { register } from "node:module";

if (process.env.MODULE_LOG) register(new URL("./module-log-hooks.mjs", import.meta.url), { data: { log: process.env.MODULE_LOG } });
