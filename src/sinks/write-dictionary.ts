/**
 * `npm run docs:outputs`: write docs/outputs.md from the data dictionary (dictionary.ts), so the
 * document changes only with the definitions the writers use. Run from the repository's root.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { dictionaryMarkdown } from "./dictionary.js";

const target = resolve(process.argv[2] ?? "docs/outputs.md");
writeFileSync(target, dictionaryMarkdown());
process.stdout.write(`wrote ${target}\n`);
