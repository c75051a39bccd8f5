/**
 * deploy/kubernetes/: every manifest is valid against the Kubernetes API's schemas, checked offline
 * (kubernetes-models' bundled validators: no cluster, no network). The check is shown to bite: a
 * copy of a manifest with a field of the wrong type, or without a required one, is refused.
 */
import { describe, expect, it } from "vitest";
import { loadManifests, parseManifests, schemaProblems, type Manifest } from "../helpers/kubernetes-manifests.js";

const manifests = loadManifests();
const copy = <T>(v: T): T => structuredClone(v);
const deployment = (): Manifest => manifests.find((m) => m.object.kind === "Deployment")!;

describe("deploy/kubernetes/ against the Kubernetes API schemas, offline", () => {
  it("holds the manifests this deployment needs", () => {
    expect(manifests.map((m) => `${m.file}: ${String(m.object.kind)}`).sort()).toEqual([
      "configmap.yaml: ConfigMap",
      "examples/secret.example.yaml: Secret",
      "networkpolicy.yaml: NetworkPolicy",
      "networkpolicy.yaml: NetworkPolicy",
      "pvc.yaml: PersistentVolumeClaim",
      "schedule.yaml: Deployment",
      "webhooks.yaml: Deployment",
      "webhooks.yaml: Service",
    ]);
  });

  it.each(manifests.map((m) => [`${m.file} ${String(m.object.kind)}`, m] as const))("%s is valid", (_, m) => {
    expect(schemaProblems(m.object)).toEqual([]);
  });

  it("refuses a Deployment whose replicas is a string", () => {
    const bad = copy(deployment().object) as { spec: { replicas: unknown } };
    bad.spec.replicas = "one";
    expect(schemaProblems(bad as never).join("\n")).toMatch(/replicas must be integer/);
  });

  it("refuses a Deployment whose container has no name, or whose runAsNonRoot is a string", () => {
    const unnamed = copy(deployment().object) as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
    delete unnamed.spec.template.spec.containers[0]!.name;
    expect(schemaProblems(unnamed as never).join("\n")).toMatch(/containers\/0 must have required property name/);
    const stringly = copy(deployment().object) as { spec: { template: { spec: { securityContext: Record<string, unknown> } } } };
    stringly.spec.template.spec.securityContext.runAsNonRoot = "true";
    expect(schemaProblems(stringly as never).join("\n")).toMatch(/runAsNonRoot must be boolean/);
  });

  it("refuses a NetworkPolicy whose port is an object, or whose policyTypes is a string", () => {
    const policy = copy(manifests.find((m) => m.object.kind === "NetworkPolicy")!.object) as { spec: { policyTypes: unknown; ingress: { ports: { port: unknown }[] }[] } };
    policy.spec.ingress[0]!.ports[0]!.port = { name: "metrics" };
    expect(schemaProblems(policy as never).join("\n")).toMatch(/ingress\/0\/ports\/0\/port must be/);
    policy.spec.ingress[0]!.ports[0]!.port = "metrics";
    policy.spec.policyTypes = "Ingress";
    expect(schemaProblems(policy as never).join("\n")).toMatch(/policyTypes must be array/);
  });

  it("refuses a kind it has no schema for, and YAML that does not parse", () => {
    expect(schemaProblems({ apiVersion: "apps/v1", kind: "Deplyment" })).toEqual([expect.stringMatching(/not a kind this check knows/)]);
    expect(() => parseManifests("kind: [unclosed\n", "bad.yaml")).toThrow(/bad\.yaml/);
  });
});
