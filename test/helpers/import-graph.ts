/**
 * The import graph of a source folder, drawn by the TypeScript compiler's own scanner
 * (`ts.preProcessFile`), and its cycles, each printed as a path (`a.ts -> b.ts -> a.ts`).
 *
 * Every relative import counts: `import type` (a cycle over types is still a circle a reader
 * walks), `export ... from`, and `import("...")` (a lazy import is still a dependency). A package
 * or `node:` import is no edge. `./x.js` names `x.ts` (NodeNext), a folder its `index.ts`.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

/** Module (path relative to the root, `/`-separated) to the modules it imports, sorted. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sourceFiles(path);
      return /\.(c|m)?ts$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
    });
}

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [base.replace(/\.(c|m)?js$/, (ext) => ext.replace("js", "ts")), base, `${base}.ts`, join(base, "index.ts")];
  return candidates.find((c) => /\.(c|m)?ts$/.test(c) && existsSync(c) && statSync(c).isFile());
}

/** The graph of every `.ts` file under `root/dir`, keyed by its path relative to `root`. */
export function importGraph(root: string, dir: string): ImportGraph {
  const key = (path: string) => relative(root, path).split(sep).join("/");
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(join(root, dir))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles.flatMap((i) => {
      const target = resolveImport(file, i.fileName);
      return target ? [key(target)] : [];
    });
    graph.set(key(file), [...new Set(targets)].sort());
  }
  return graph;
}

/** Tarjan's strongly connected components: the sets of modules that reach each other. */
function components(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    out.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** The shortest way from `start` back to itself inside `within`, as the modules on it. */
function shortestCycle(graph: ImportGraph, start: string, within: ReadonlySet<string>): string[] | undefined {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of graph.get(v) ?? []) {
      if (!within.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return path;
      }
      if (cameFrom.has(w)) continue;
      cameFrom.set(w, v);
      queue.push(w);
    }
  }
  return undefined;
}

/**
 * The graph's cycles, each as a path that ends where it starts. Per set of modules that reach each
 * other, the shortest cycle through each of them, so that every module of a circle is named on
 * one path at least; a cycle found from two of its modules is printed once.
 */
export function importCycles(graph: ImportGraph): string[] {
  const cycles = new Set<string>();
  for (const component of components(graph)) {
    const within = new Set(component);
    for (const start of component) {
      const cycle = shortestCycle(graph, start, within);
      if (!cycle) continue;
      // One rotation per cycle: start at its first module in sort order.
      const first = cycle.indexOf([...cycle].sort()[0]!);
      const rotated = [...cycle.slice(first), ...cycle.slice(0, first)];
      cycles.add([...rotated, rotated[0]].join(" -> "));
    }
  }
  return [...cycles].sort();
}
