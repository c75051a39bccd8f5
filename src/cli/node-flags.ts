/**
 * The flags node runs the `benefits-sync` command with (the second line of main.ts starts it so;
 * a unit test holds the two equal). The benchmark starts its sync workers with them too, as the
 * command runs.
 *
 * `--max-semi-space-size=4`: the main thread's young generation grew to V8's default (16 MB semi
 * spaces), and the walk's garbage kept it there. Measured with `/usr/bin/time -v benefits-sync sync`
 * against a 1M-member sandbox (2026-11-28, with the 8 MB cache of a first load, LoadCacheSize):
 * 289 MB maximum resident in 148 s without the flag, 251 MB in 150 s with it.
 */
export const NodeFlags: readonly string[] = ["--max-semi-space-size=4"];
