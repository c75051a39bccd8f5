/**
 * Configuration layers (file, environment, flags) merged in order, remembering where each value
 * came from so that a problem can say "(from BENEFITS_DB)" rather than leave the user guessing.
 */

/** One source of settings: a label for messages, and a partial configuration object. */
export interface Layer {
  readonly data: Record<string, unknown>;
  /** Where a value at `path` came from, e.g. `the config file x.json`, `BENEFITS_DB`, `--db`. */
  readonly labelOf: (path: readonly string[]) => string;
}

export interface Merged {
  readonly input: Record<string, unknown>;
  /** The source of the value at `path` (or its nearest ancestor that some layer set). */
  readonly sourceOf: (path: readonly PropertyKey[]) => string | undefined;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Deep-merge layers, later ones winning. Objects merge key by key; arrays and scalars replace;
 * `undefined` means "not set" and never overwrites.
 *
 * @example
 * mergeLayers([{ data: { db: "a" }, labelOf: () => "file" }, { data: { db: "b" }, labelOf: () => "--db" }]).input.db // "b"
 */
export function mergeLayers(layers: readonly Layer[]): Merged {
  const input: Record<string, unknown> = {};
  const sources = new Map<string, string>();
  const visit = (target: Record<string, unknown>, data: Record<string, unknown>, path: string[], layer: Layer) => {
    for (const [key, value] of Object.entries(data)) {
      if (value === undefined) continue;
      const here = [...path, key];
      sources.set(here.join("\u0000"), layer.labelOf(here));
      const existing = target[key];
      if (isPlainObject(value)) {
        const child = isPlainObject(existing) ? existing : {};
        target[key] = child;
        visit(child, value, here, layer);
      } else {
        target[key] = value;
      }
    }
  };
  for (const layer of layers) visit(input, layer.data, [], layer);
  return {
    input,
    sourceOf: (path) => {
      for (let n = path.length; n > 0; n--) {
        const hit = sources.get(path.slice(0, n).map(String).join("\u0000"));
        if (hit) return hit;
      }
      return undefined;
    },
  };
}
