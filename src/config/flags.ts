/** Command-line flags as a configuration layer. */
import type { Layer } from "./layers.js";

/**
 * The configuration a flag can set. Values stay `unknown` until validation: a flag's value is
 * whatever the user typed, and the schema decides whether it is acceptable.
 */
export interface ConfigFlags {
  readonly environment?: unknown;
  readonly baseUrl?: unknown;
  readonly db?: unknown;
  readonly pii?: unknown;
  /** Anything else in the shape of the config file (for commands that add their own flags). */
  readonly [key: string]: unknown;
}

/** The spelling of the flag that sets a configuration key, for messages. */
const FLAG_NAMES: Record<string, string> = { environment: "--env", baseUrl: "--base-url", db: "--db", pii: "--pii" };

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** @example flagLayer({ db: "x.db" }).labelOf(["db"]) // "--db" */
export function flagLayer(flags: ConfigFlags): Layer {
  return {
    data: { ...flags },
    labelOf: (path) => {
      const top = path[0] ?? "";
      return FLAG_NAMES[top] ?? (path.length === 1 ? `--${kebab(top)}` : "a command-line flag");
    },
  };
}
