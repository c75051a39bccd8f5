/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for the tests that
 * scrape `/metrics`: every sample line must parse, every sample's family must have a `# TYPE`,
 * or it throws, naming the line.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;

function parseLabels(text: string, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    if (!m) throw new Error(`bad labels in: ${line}`);
    out[m[1]!] = m[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  }
  return out;
}

const numberOf = (v: string, line: string): number => {
  if (v === "+Inf") return Infinity;
  if (v === "-Inf") return -Infinity;
  if (v === "NaN") return NaN;
  const n = Number(v);
  if (Number.isNaN(n)) throw new Error(`bad value in: ${line}`);
  return n;
};

/** The samples of `text`; throws on a line that is not a comment, blank or a well-formed sample. */
export function parsePrometheusText(text: string): Sample[] {
  const typed = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const t = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (t) typed.set(t[1]!, t[2]!);
      else if (!/^# HELP \S+ /.test(line)) throw new Error(`bad comment: ${line}`);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`bad sample: ${line}`);
    const family = [...typed.keys()].find((f) => m[1] === f || (typed.get(f) === "histogram" && /^(.*)_(bucket|sum|count)$/.exec(m[1]!)?.[1] === f));
    if (!family) throw new Error(`a sample with no # TYPE: ${line}`);
    samples.push({ name: m[1]!, labels: m[2] ? parseLabels(m[2], line) : {}, value: numberOf(m[3]!, line) });
  }
  return samples;
}
