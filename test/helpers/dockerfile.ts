/**
 * A Dockerfile read as docker reads it, for a test that performs its instructions without docker:
 * comments and blank lines dropped, backslash continuations joined, each instruction split into
 * its name and the rest.
 */

export interface Instruction {
  readonly op: string;
  readonly args: string;
}

/** The instructions of a Dockerfile, in order. */
export function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = "";
  for (const line of text.split("\n")) {
    if (!pending && (line.trim() === "" || line.trimStart().startsWith("#"))) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = "";
    const m = /^([A-Za-z]+)\s+(.*)$/.exec(whole);
    if (!m) throw new Error(`not a Dockerfile instruction: ${whole}`);
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return out;
}

/** `K=V K2=V2` (ENV's form with `=`; quotes not supported: the test refuses them). */
export function envPairs(args: string): [string, string][] {
  if (/["']/.test(args) || !args.includes("=")) throw new Error(`ENV form this test does not read: ${args}`);
  return args.split(/\s+/).map((kv) => {
    const i = kv.indexOf("=");
    return [kv.slice(0, i), kv.slice(i + 1)];
  });
}

/** A COPY source's wildcard as a regular expression of file names. */
export function globRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")}$`);
}
