/**
 * The table layout (files/table-layout.ts) on S3: `s3://bucket/prefix/members/run_id=00000010/part-00000.parquet`
 * for every table, and `prefix/_manifests/00000010.json` uploaded last as the run's commit marker.
 * The run is staged whole by the local table sink (the same writers, the same bytes and manifest)
 * in a folder of its own, then its files are uploaded, the manifest after all of them
 * (publish-folder.ts). The crash rule reads the uploaded manifest back.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import type { Sink, SinkSession } from "../sink.js";
import type { DeltaFolder, FileFormat } from "../files/folder-sink.js";
import { sameRuns } from "../files/manifest.js";
import { tableManifest } from "../files/table-layout.js";
import { tablesSink } from "../files/tables-sink.js";
import { publishFiles, readS3Manifest } from "./publish-folder.js";
import { clearDeadStages, prefixChecks, STAGE, type S3SinkOptions } from "./s3-sink.js";
import { s3Client } from "./s3-client.js";
import { s3Output, s3Url, type S3Target } from "./s3-target.js";

/**
 * @example await deliverToSink(db, s3TablesSink(parseS3Url("s3://lake/benefits", "--out"), await tablesFormat()), runId)
 */
export function s3TablesSink(t: S3Target, format: FileFormat, opts: S3SinkOptions = {}): Sink<DeltaFolder> {
  let client: Promise<S3Client> | undefined;
  const clientOf = (): Promise<S3Client> => (client ??= s3Client(opts, { signal: opts.signal }));
  const checks = prefixChecks(t, opts, "tables");
  return {
    output: s3Output(format.name, t, "tables"),
    describe: `${s3Url(t)} (${format.name} tables)`,
    perRun: true,
    prepare: async (id) => checks.prepare(await clientOf(), id),
    async arrived(d) {
      const name = tableManifest(d.forRun);
      const m = await readS3Manifest(await clientOf(), t, name.slice(0, name.lastIndexOf("/")), name.slice(name.lastIndexOf("/") + 1));
      return m !== undefined && m.runId === d.forRun && sameRuns(m.runs, d.runs) && m.format === format.name;
    },
    async open(plan) {
      const c = await clientOf();
      // Made in prepare, unless the store could not be reached then (or no prepare: an export).
      await checks.open(c, plan.facts?.snapshotId);
      clearDeadStages();
      let stage: string | undefined = mkdtempSync(join(tmpdir(), `${STAGE}${process.pid}-`));
      const inner = (await tablesSink(stage, format).open(plan)) as SinkSession<DeltaFolder>;
      const session: SinkSession<DeltaFolder> = {
        write: (resource, deltas) => inner.write(resource, deltas),
        async commit() {
          const local = await inner.commit();
          await publishFiles(c, t, stage!, local.files.map((f) => f.file), tableManifest(local.runId), opts);
          return { ...local, dir: s3Url(t) };
        },
        async close() {
          await inner.close();
          if (stage) rmSync(stage, { recursive: true, force: true });
          stage = undefined;
        },
      };
      return session;
    },
  };
}
