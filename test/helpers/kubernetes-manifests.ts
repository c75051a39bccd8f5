/**
 * deploy/kubernetes/: every YAML document of every manifest (examples/ included), and the
 * offline schema check of one: kubernetes-models' validators, generated from the Kubernetes API's
 * OpenAPI schemas and bundled in the package, so no cluster and no network are needed.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Deployment } from "kubernetes-models/apps/v1";
import { CronJob } from "kubernetes-models/batch/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { ConfigMap, PersistentVolumeClaim, Secret, Service } from "kubernetes-models/v1";
import { parseAllDocuments } from "yaml";

export const root = fileURLToPath(new URL("../..", import.meta.url));
export const K8S_DIR = join(root, "deploy", "kubernetes");

/** A manifest document: its file (relative to deploy/kubernetes) and the object. */
export interface Manifest {
  readonly file: string;
  readonly object: Record<string, unknown>;
}

/** Every .yaml/.yml file under `dir`, sorted. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** The documents of one YAML text; a syntax error throws. */
export function parseManifests(text: string, file: string): Manifest[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join("; ")}`);
    return { file, object: doc.toJS() as Record<string, unknown> };
  });
}

/** All the manifests under deploy/kubernetes/. */
export function loadManifests(dir = K8S_DIR): Manifest[] {
  return yamlFiles(dir).flatMap((f) => parseManifests(readFileSync(f, "utf8"), relative(dir, f)));
}

interface Validatable {
  validate(): void;
}
/** The kinds the manifests may use, by `apiVersion/kind`. */
const MODELS: Record<string, new (data: never) => Validatable> = {
  "apps/v1/Deployment": Deployment,
  "batch/v1/CronJob": CronJob,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "v1/ConfigMap": ConfigMap,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "v1/Secret": Secret,
  "v1/Service": Service,
};

/** The schema's complaints about one object ([] when valid); a kind this check does not know is one. */
export function schemaProblems(object: Record<string, unknown>): string[] {
  const key = `${String(object.apiVersion)}/${String(object.kind)}`;
  const Model = MODELS[key];
  if (!Model) return [`${key}: not a kind this check knows (add its model to MODELS)`];
  try {
    new Model(object as never).validate();
    return [];
  } catch (e) {
    return [`${key}: ${(e as Error).message}`];
  }
}
