/**
 * The data dictionary of the folder outputs (docs/outputs.md), built from the definitions the
 * writers use (files/layout.ts, the Parquet columns, the documented fields and their types), so
 * that it cannot drift from the files: `npm run docs:outputs` writes it, and a test regenerates it
 * and compares. Its version (a hash of the columns, their types, units and nullability) is in
 * every folder's manifest.
 */
import { createHash } from "node:crypto";
import { StoredResources, ViewColumns, columnName, type StoredResource } from "../store/resources.js";
import { csvChildRow, csvMainRow } from "./csv/csv-format.js";
import { flatten } from "./csv/flatten.js";
import { Examples } from "./dictionary-examples.js";
import { ChildLists, LINE_BASE, LeadColumns, childLeadColumns, type ChildList } from "./files/layout.js";
import { LAYOUT_VERSION, ManifestKeys } from "./files/manifest-keys.js";
import { jsonlLine } from "./jsonl/jsonl-format.js";
import { childParquetColumns, parquetColumns, type ParquetColumn } from "./parquet/parquet-columns.js";
import type { Delta } from "./run-deltas.js";
import { DECIMAL_PRECISION, DECIMAL_SCALE } from "./typed-fields.js";

export interface DictionaryColumn {
  /** Its name in CSV (null: not in CSV). */
  readonly csv: string | null;
  /** Its name in Parquet (null: not in Parquet; JSONL has `op, run_id, id, changed_fields, data`). */
  readonly parquet: string | null;
  readonly type: string;
  readonly parquetType: string | null;
  readonly unit: string;
  readonly nullable: string;
}

export interface DictionaryFile {
  /** The file's name without its extension (`members`, `claim_lines`). */
  readonly name: string;
  readonly columns: readonly DictionaryColumn[];
}

/** The list files' own columns (`claim_id`, `line_no`), from their definitions in files/layout.ts. */
const childMeaning = (): [string, { unit: string; nullable: string }][] =>
  StoredResources.flatMap((r) => {
    const c = ChildLists[r];
    if (!c) return [];
    return [
      [c.parentColumn, { unit: `its parent record's \`id\` (in \`${r}\`)`, nullable: "never" }],
      [c.numberColumn, { unit: `the item's place in its \`${c.field}\` list, counted from ${LINE_BASE} (the first item is ${LINE_BASE}), as in the snapshot's and the warehouse's \`${c.file}.${c.numberColumn}\``, nullable: "never" }],
    ];
  });

const Meaning: Readonly<Record<string, { unit?: string; nullable: string }>> = {
  op: { unit: "`insert`, `update` or `delete`", nullable: "never" },
  run_id: { unit: "the run that recorded the change", nullable: "never" },
  id: { unit: "the record's id", nullable: "never" },
  changed_fields: { unit: "JSON array of the changed field paths, named as this format names its columns, in column order (see [changed_fields](#changed_fields))", nullable: "empty (null) except on updates" },
  data: { unit: "the whole record (item) as stored, JSON", nullable: "never" },
  ...Object.fromEntries(childMeaning()),
};

function parquetType(c: ParquetColumn): string {
  switch (c.type) {
    case "int64":
      return "INT64";
    case "date":
      return "INT32 (DATE)";
    case "timestamp":
      return "INT64 (TIMESTAMP(MICROS, UTC))";
    case "decimal":
      return `INT64 (DECIMAL(${DECIMAL_PRECISION},${DECIMAL_SCALE}))`;
    case "json":
      return "BYTE_ARRAY (JSON)";
    default:
      return "BYTE_ARRAY (UTF8)";
  }
}

function logical(c: ParquetColumn): string {
  if (c.name === "changed_fields") return "list of text";
  if (c.type === "int64") return "integer";
  if (c.type === "string") return "text";
  return c.type;
}

function unitOf(c: ParquetColumn): string {
  if (c.type === "date") return "calendar date, `YYYY-MM-DD` in CSV";
  if (c.type === "decimal") return "dollars, 2 decimals, exact (CSV: the decimal text as sent, `1234.50`)";
  if (c.type === "timestamp") return "an instant, microseconds, UTC (CSV: the text as sent, `2026-01-05T14:03:00Z`)";
  return "";
}

/** One file's columns: the CSV ones in order, each beside its Parquet column, then those of one format only. */
function fileColumns(csvColumns: readonly string[], pq: readonly ParquetColumn[], csvRest: string): DictionaryColumn[] {
  const byName = new Map(pq.map((c) => [c.name, c]));
  const out: DictionaryColumn[] = [];
  for (const name of csvColumns) {
    const c = byName.get(columnName(name));
    if (!c) throw new Error(`dictionary: CSV column ${name} has no Parquet column`);
    byName.delete(c.name);
    const m = Meaning[c.name];
    out.push({ csv: name, parquet: c.name, type: logical(c), parquetType: parquetType(c), unit: m?.unit ?? unitOf(c), nullable: m?.nullable ?? (c.required ? "never" : "when absent") });
  }
  out.push({ csv: csvRest, parquet: null, type: "text", parquetType: null, unit: "as sent (nested with dots; a list as JSON)", nullable: "when absent" });
  for (const c of byName.values()) {
    const m = Meaning[c.name];
    out.push({ csv: null, parquet: c.name, type: logical(c), parquetType: parquetType(c), unit: m?.unit ?? "", nullable: m?.nullable ?? "when absent" });
  }
  return out;
}

/** Every file of a folder, in the order a run applies its resources. */
export function dictionaryFiles(): DictionaryFile[] {
  const files: DictionaryFile[] = [];
  for (const r of StoredResources) {
    files.push({ name: r, columns: fileColumns([...LeadColumns, ...ViewColumns[r]], parquetColumns(r), "(any other field, sorted)") });
    const child = ChildLists[r];
    if (child) files.push({ name: child.file, columns: fileColumns([...childLeadColumns(child), ...child.fields], childParquetColumns(child), "(any other field of the item, sorted)") });
  }
  return files;
}

/** The dictionary's version: it changes whenever a file, column, type, unit or nullability does. */
export const DICTIONARY_VERSION = createHash("sha256").update(JSON.stringify(dictionaryFiles())).digest("hex").slice(0, 12);

function exampleDelta(r: StoredResource): Delta {
  const e = Examples[r];
  return { op: "update", runId: 7, id: e.id, data: e.record, changedFields: e.changed };
}

function exampleRows(file: DictionaryFile): string[] {
  const resource = (StoredResources as readonly string[]).includes(file.name) ? (file.name as StoredResource) : parentOf(file.name);
  const d = exampleDelta(resource);
  const child = ChildLists[resource];
  if (child && child.file === file.name) {
    const lead = childLeadColumns(child);
    const items = (d.data[child.field] as Record<string, unknown>[]).map((item) => flatten(item));
    return ["```csv", [...lead, ...child.fields].join(","), ...items.map((f, i) => csvChildRow(d, i, f, child.fields).trimEnd()), "```"];
  }
  const header = [...LeadColumns, ...ViewColumns[resource]];
  const row = csvMainRow(resource, d, flatten(d.data, new Set(child ? [child.field] : [])), ViewColumns[resource]).trimEnd();
  return ["```csv", header.join(","), row, "```", "", "```json", jsonlLine(resource, d).trimEnd(), "```"];
}

function parentOf(file: string): StoredResource {
  const r = StoredResources.find((x) => ChildLists[x]?.file === file);
  if (!r) throw new Error(`dictionary: no resource has the list file ${file}`);
  return r;
}

const cell = (v: string | null): string => (v === null ? "—" : v === "" ? "" : v.startsWith("(") ? v : `\`${v}\``);

/** docs/outputs.md. */
export function dictionaryMarkdown(): string {
  const lines = [
    "# The folder outputs: a data dictionary",
    "",
    "<!-- Generated by `npm run docs:outputs` from src/sinks/dictionary.ts: do not edit by hand. -->",
    "",
    `Dictionary version \`${DICTIONARY_VERSION}\`, layout version ${LAYOUT_VERSION}. Both are in every folder's`,
    "`manifest.json`: a loader refuses a layout it does not know.",
    "",
    ...FolderText,
    "",
    "## manifest.json",
    "",
    "| key | meaning |",
    "|---|---|",
    ...ManifestKeys.map((k) => `| \`${k.key}\` | ${k.meaning} |`),
    "",
    ...FormatText,
    "",
    ...changedFieldsText(),
  ];
  for (const f of dictionaryFiles()) {
    const child = Object.values(ChildLists).find((c): c is ChildList => c?.file === f.name);
    lines.push("", `## ${f.name}`, "");
    lines.push(
      ...wrap(
        child
          ? `\`${f.name}.csv\`, \`${f.name}.parquet\`: one row per item of a \`${child.field}\` list, in list order (JSONL keeps the list inside \`data\`). ` +
            `Every change of a parent record (in \`${parentOf(f.name)}\`) writes all its items, with its \`op\` and \`run_id\` (a delete, its last ones): replace the parent's items, never merge them. An item has no \`changed_fields\`.`
          : `\`${f.name}.csv\`, \`${f.name}.jsonl\`, \`${f.name}.parquet\`: one row per change.`,
        "",
      ),
    );
    lines.push("", "| CSV column | Parquet column | type | Parquet type | unit | null |", "|---|---|---|---|---|---|");
    for (const c of f.columns) lines.push(`| ${cell(c.csv)} | ${cell(c.parquet)} | ${c.type} | ${c.parquetType ?? "—"} | ${c.unit} | ${c.nullable} |`);
    lines.push("", "Example (an update in run 7):", "", ...exampleRows(f));
  }
  return `${lines.join("\n")}\n`;
}

const FolderText = [
  "## Folders",
  "",
  "`sync --out DIR` and `export --run N --out DIR` write one folder per run, named by the run id",
  "zero-padded to 8 digits (`DIR/00000010/`), so text order is run order; run ids inside files and",
  "manifests are plain integers. A folder appears whole or not at all (written under a hidden name,",
  "fsynced, renamed). Read folders in name order; apply each file's rows in file order: inserts,",
  "updates and deletes of one run, then the next run's. Skip hidden entries: a hidden folder a killed",
  "writer left (`.10.tmp-…`) is removed by the next `sync` or `export` to the folder once its writer",
  "is gone (another process still writing there keeps its own).",
  "",
  "One folder, one snapshot: run ids start at 1 in every snapshot, so a folder takes the runs of the",
  "snapshot that first delivered to it (the `snapshotId` its manifests carry). A `sync` or `export`",
  "of another snapshot into it exits 2, naming both snapshots, and writes nothing there: give each",
  "snapshot its own folder (with `--from-run N` to start a new one at a later run). A loader checks",
  "that every manifest it reads carries the `snapshotId` it loads, and stops at one that does not.",
  "",
  "Permissions: a folder is 0700 and its files 0600 whatever the umask (they hold PHI). A folder",
  "sink in the config file may set `\"mode\": \"0640\"` (files; folders get the matching execute bits,",
  "0750) and `\"group\"` (a group name or a gid) so a loader running as another user can read them;",
  "both are set before the folder's rename. With either set, DIR itself is made reachable before any",
  "run folder appears in it, whatever the umask: a DIR the sink creates gets the folders' mode and",
  "group; one that already exists only gains the read and search bits the mode gives the group and",
  "others, and the group (nothing is taken from it, and another user's DIR is left as it is).",
];

/** What an update's `changed_fields` names: the rule of store/field-diff.ts, as a loader needs it. */
function changedFieldsText(): string[] {
  const lists = StoredResources.flatMap((r) => {
    const c = ChildLists[r];
    return c ? [`\`${c.field}\` (${r}: the list as a whole, when an item was added, removed, reordered or changed; the items are in \`${c.file}\`)`] : [];
  });
  return [
    "## changed_fields",
    "",
    "An update's `changed_fields` lists each field whose value differs from the record's previous",
    "version, as its path in the record (`data`): an object's fields one by one (`address.city`), a",
    "list or any other value as a whole. The names are those of the file's columns (CSV and JSONL",
    "`address.city`, Parquet `address_city`), the documented fields first in column order, then the",
    "others sorted. Besides the documented columns it may name:",
    "",
    ...wrap(`- ${lists.join("; ")}, which no column of the record's own file holds;`, "  "),
    "- a field no column documents (one the service added, `preferredLanguage`): in CSV one of the",
    "  sorted extra columns; in Parquet it has no column and is found in `data` (its name's dots written",
    "  `_` there too); when the update removed it and no other row of the file carries it, the CSV file",
    "  has no column for it at all;",
    "- an object as a whole (`address`, `processing`) when it appeared, disappeared or stopped being an",
    "  object, rather than each field inside it.",
    "",
    "A field that went from null to absent (or back) has not changed. Inserts and deletes name none",
    "(an empty cell in CSV, null in JSONL and Parquet).",
  ];
}

/** `text` in lines of at most 100 characters, the lines after the first indented by `indent`. */
function wrap(text: string, indent: string): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > 100) {
      out.push(line);
      line = indent + word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...out, line];
}

const FormatText = [
  "## Formats",
  "",
  "- **CSV**: RFC 4180, UTF-8, CRLF, a header; every file present, only its header when nothing changed;",
  "  values verbatim (decimal text as sent, a leading `=` unescaped); an empty cell is an absent value.",
  "  They stay byte-faithful for loaders: a name such as `=HYPERLINK(…)` is written as sent (the",
  "  reconciliation's CSV files, meant for spreadsheets, start such a cell with `'`).",
  "- **JSONL**: one line per change, LF, UTF-8: `op`, `run_id`, `id`, `changed_fields` (null except on",
  "  updates; the CSV's names), `data` (the whole record as stored, lists nested); no list files.",
  "- **Parquet**: the columns below typed; `data` holds the whole record, so no field is lost. A value",
  "  that does not fit its type (a date the calendar does not have) is null there and kept in `data`.",
  "",
  "A deleted record's row carries its last known values. No plain SSN is in any file: a field the SSN",
  "rule names becomes `<key>_token` (an HMAC of it) and `<key>_last4` (`ssn_token`, `ssn_last4`), an",
  "SSN in free text `[ssn:<token>]`; under `--pii keep` the fields are left out and the text shows",
  "`[ssn]`. The rule, and what it leaves alone: [phi.md](phi.md).",
];
