/**
 * deploy/kubernetes/ holds the rules of this deployment: every container runs as a non-root user
 * (the image's), every secret comes from a Secret by secretKeyRef (never a literal value), the
 * jobs are scheduled by one `benefits-sync schedule` (one replica, Recreate; no CronJob beside it,
 * or each job would run twice), all pods share the one snapshot volume on one node, and the
 * receiver's probes ask the path and port it really serves: a real receiver is asked the probe's
 * path; a NetworkPolicy lets only Prometheus reach /metrics and only the ingress controller the
 * receiver, and the pods out to DNS, the service, S3 and Postgres only; no pod is given a
 * service-account token (none calls the Kubernetes API); S3 deliveries stage member data in a
 * size-limited emptyDir (TMPDIR, test/e2e/s3-staging.test.ts). Each rule is a function of the
 * manifests, shown to bite on a copy that breaks it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { request } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { ReceiverCounters } from "../../src/webhooks/counters.js";
import { Inbox } from "../../src/webhooks/inbox.js";
import { createReceiver } from "../../src/webhooks/server.js";
import { SignatureVerifier } from "../../src/webhooks/verify.js";
import { loadManifests, root, type Manifest } from "../helpers/kubernetes-manifests.js";

// Manifests are plain YAML objects: read loosely here, their shape is the schema test's job.
type Obj = any;
const manifests = loadManifests();
const copy = (ms: readonly Manifest[]): Manifest[] => structuredClone(ms) as Manifest[];
const deployments = (ms: readonly Manifest[]) => ms.filter((m) => m.object.kind === "Deployment").map((m) => m.object as Obj);
const podSpecs = (ms: readonly Manifest[]) => deployments(ms).map((d) => d.spec.template.spec as Obj);
const containers = (ms: readonly Manifest[]) => podSpecs(ms).flatMap((p) => (p.containers as Obj[]).map((c) => ({ pod: p, c })));
const byArgs = (ms: readonly Manifest[], first: string) => deployments(ms).filter((d) => d.spec.template.spec.containers[0].args[0] === first);

/** The Dockerfile's value of one instruction (the last one wins, as in docker). */
const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
const instruction = (name: string) => [...dockerfile.matchAll(new RegExp(`^${name}\\s+(.+)$`, "gm"))].at(-1)?.[1]?.trim();
const SECRET_NAME = /KEY|SECRET|PASSWORD|TOKEN/i;

function nonRootProblems(ms: readonly Manifest[]): string[] {
  const [uid, gid] = instruction("USER")!.split(":").map(Number);
  return containers(ms).flatMap(({ pod, c }) => {
    const sc = { ...pod.securityContext, ...c.securityContext };
    const p: string[] = [];
    if (sc.runAsNonRoot !== true) p.push(`${c.name}: runAsNonRoot is not true`);
    if (sc.runAsUser !== uid || sc.runAsGroup !== gid) p.push(`${c.name}: runs as ${sc.runAsUser}:${sc.runAsGroup}, the image's user is ${uid}:${gid}`);
    if (sc.allowPrivilegeEscalation !== false) p.push(`${c.name}: allowPrivilegeEscalation is not false`);
    return p;
  });
}

function secretProblems(ms: readonly Manifest[]): string[] {
  const secret = ms.find((m) => m.object.kind === "Secret")!.object as Obj;
  const p = Object.entries(secret.stringData ?? {}).filter(([, v]) => !/^REPLACE-ME-/.test(String(v))).map(([k]) => `the example Secret's ${k} is not a placeholder`);
  if (secret.data) p.push("the example Secret has data: placeholders go in stringData");
  for (const { c } of containers(ms))
    for (const e of c.env ?? []) {
      if (!SECRET_NAME.test(e.name)) continue;
      const ref = e.valueFrom?.secretKeyRef;
      if (e.value !== undefined || !ref) p.push(`${c.name}: ${e.name} is not from a secretKeyRef`);
      else if (ref.name !== secret.metadata.name || !(ref.key in secret.stringData)) p.push(`${c.name}: ${e.name} names ${ref.name}/${ref.key}, not a key of the Secret`);
    }
  return p;
}

function scheduleProblems(ms: readonly Manifest[]): string[] {
  const p = ms.filter((m) => m.object.kind === "CronJob").map((m) => `${m.file}: a CronJob beside \`schedule\` runs its job twice`);
  const s = byArgs(ms, "schedule");
  if (s.length !== 1) return [...p, `${s.length} Deployments run \`schedule\``];
  if (s[0].spec.replicas !== 1) p.push(`schedule has ${s[0].spec.replicas} replicas`);
  if (s[0].spec.strategy?.type !== "Recreate") p.push("schedule's strategy is not Recreate");
  return p;
}

/** One volume, mounted where the image keeps the snapshot, and its pods on one node. */
function volumeProblems(ms: readonly Manifest[]): string[] {
  const claim = (ms.find((m) => m.object.kind === "PersistentVolumeClaim")!.object as Obj).metadata.name;
  const p: string[] = [];
  for (const pod of podSpecs(ms)) {
    const vol = (pod.volumes as Obj[]).find((v) => v.persistentVolumeClaim?.claimName === claim);
    const c = pod.containers[0];
    const mount = (c.volumeMounts as Obj[]).find((m) => m.name === vol?.name);
    if (!vol || mount?.mountPath !== instruction("WORKDIR") || mount?.mountPath !== instruction("VOLUME")) p.push(`${c.name}: ${claim} is not mounted at the image's WORKDIR`);
    const db = (c.env as Obj[]).find((e) => e.name === "BENEFITS_DB")?.value;
    if (dirname(String(db)) !== mount?.mountPath) p.push(`${c.name}: BENEFITS_DB ${db} is not on the volume`);
    const aff = pod.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0];
    if (aff?.topologyKey !== "kubernetes.io/hostname" || !Object.entries(aff.labelSelector.matchLabels).every(([k, v]) => deployments(ms).every((d) => d.spec.template.metadata.labels[k] === v)))
      p.push(`${c.name}: not held to the node of the other pods of the snapshot`);
  }
  return p;
}

const policies = (ms: readonly Manifest[]) => ms.filter((m) => m.object.kind === "NetworkPolicy").map((m) => m.object as Obj);
const selects = (selector: Obj, labels: Obj) => Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
const OPEN_PEER = (peer: Obj) => Object.keys(peer).length === 0 || peer.ipBlock?.cidr === "0.0.0.0/0" || (peer.namespaceSelector && Object.keys(peer.namespaceSelector).length === 0 && !peer.podSelector);

/** Each pod behind a NetworkPolicy: in, only chosen peers to the ports it listens on; out, named ports only, DNS and the service's among them. */
function networkProblems(ms: readonly Manifest[]): string[] {
  const url = new URL(String((ms.find((m) => m.object.kind === "ConfigMap")!.object as Obj).data.BENEFITS_BASE_URL));
  const servicePort = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const p: string[] = [];
  for (const d of deployments(ms)) {
    const name = d.metadata.name;
    const c = d.spec.template.spec.containers[0];
    const mine = policies(ms).filter((np) => selects(np.spec.podSelector, d.spec.template.metadata.labels));
    if (mine.length === 0) {
      p.push(`${name}: no NetworkPolicy selects its pods`);
      continue;
    }
    const types = new Set(mine.flatMap((np) => np.spec.policyTypes ?? []));
    for (const t of ["Ingress", "Egress"]) if (!types.has(t)) p.push(`${name}: no ${t} policy (everything is allowed)`);
    const listens = new Map((c.ports as Obj[]).map((x) => [x.name, x.containerPort]));
    const opened = new Set<number>();
    for (const rule of mine.flatMap((np) => np.spec.ingress ?? [])) {
      if (!rule.from?.length || rule.from.some(OPEN_PEER)) p.push(`${name}: an ingress rule lets every peer in`);
      if (!rule.ports?.length) p.push(`${name}: an ingress rule opens every port`);
      for (const { port } of rule.ports ?? []) {
        const n = typeof port === "string" ? listens.get(port) : port;
        if (n === undefined || ![...listens.values()].includes(n)) p.push(`${name}: ingress to ${port}, a port it does not listen on`);
        else opened.add(n);
      }
    }
    for (const [portName, n] of listens) if (!opened.has(n)) p.push(`${name}: nothing may reach its ${portName} port`);
    const out = mine.flatMap((np) => np.spec.egress ?? []);
    if (out.some((rule: Obj) => !rule.ports?.length)) p.push(`${name}: an egress rule opens every port`);
    const outPorts = out.flatMap((rule: Obj) => (rule.ports ?? []).map((x: Obj) => `${x.port}/${x.protocol ?? "TCP"}`));
    for (const need of ["53/UDP", `${servicePort}/TCP`]) if (!outPorts.includes(need)) p.push(`${name}: no egress to ${need}`);
  }
  return p;
}

/** No pod calls the Kubernetes API, so none is given a service-account token. */
function tokenProblems(ms: readonly Manifest[]): string[] {
  return deployments(ms)
    .filter((d) => d.spec.template.spec.automountServiceAccountToken !== false)
    .map((d) => `${d.metadata.name}: automountServiceAccountToken is not false (a token for an API it never calls)`);
}

/** S3 deliveries stage in TMPDIR (or /tmp): a mounted emptyDir with a sizeLimit, as every emptyDir has. */
function stagingProblems(ms: readonly Manifest[]): string[] {
  const p: string[] = [];
  for (const pod of podSpecs(ms)) {
    for (const v of (pod.volumes as Obj[]).filter((x) => x.emptyDir)) if (!v.emptyDir.sizeLimit) p.push(`${pod.containers[0].name}: the emptyDir ${v.name} has no sizeLimit`);
    for (const c of pod.containers as Obj[]) {
      const stage = String((c.env as Obj[]).find((e) => e.name === "TMPDIR")?.value ?? "/tmp");
      const mount = (c.volumeMounts as Obj[]).find((m) => stage === m.mountPath || stage.startsWith(`${m.mountPath}/`));
      const vol = (pod.volumes as Obj[]).find((x) => x.name === mount?.name);
      if (!vol?.emptyDir) p.push(`${c.name}: S3 deliveries stage in ${stage}, which is not on an emptyDir`);
    }
  }
  return p;
}

/** The README's Apply names the image by digest: the digest printed by the push, set as `image:` in every Deployment. */
function digestProblems(readme: string, ms: readonly Manifest[]): string[] {
  const p: string[] = [];
  const apply = /## Apply\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? "";
  const repo = /docker push (\S+):\S+/.exec(apply)?.[1];
  if (!repo) p.push("Apply pushes no image");
  else if (!apply.includes(`docker inspect --format '{{index .RepoDigests 0}}' ${repo}:`)) p.push("Apply does not print the pushed image's digest");
  if (!/`image:` in both Deployments to the pushed image \*\*by digest\*\*/.test(apply) || !apply.includes("@sha256:")) p.push("Apply does not say to set image: by digest");
  if (deployments(ms).length !== 2) p.push("not two Deployments");
  return p;
}

describe("deploy/kubernetes/ holds the deployment's rules", () => {
  it("every container runs as the image's non-root user", () => {
    expect(containers(manifests).length).toBe(2);
    expect(nonRootProblems(manifests)).toEqual([]);
    const broken = copy(manifests);
    delete podSpecs(broken)[0].securityContext.runAsNonRoot;
    podSpecs(broken)[1].securityContext.runAsUser = 0;
    expect(nonRootProblems(broken)).toHaveLength(2);
  });

  it("every secret comes from the Secret by secretKeyRef, and the example Secret holds placeholders only", () => {
    const names = containers(manifests).flatMap(({ c }) => (c.env as Obj[]).filter((e) => SECRET_NAME.test(e.name)).map((e) => `${c.name} ${e.name}`));
    expect(names.sort()).toEqual(["schedule BENEFITS_API_KEY", "schedule BENEFITS_PII_KEY", "webhooks BENEFITS_API_KEY", "webhooks BENEFITS_PII_KEY", "webhooks BENEFITS_WEBHOOK_SECRET"]);
    expect(secretProblems(manifests)).toEqual([]);
    const literal = copy(manifests);
    const env = containers(literal)[0]!.c.env.find((e: Obj) => e.name === "BENEFITS_API_KEY");
    delete env.valueFrom;
    env.value = "sk-live-123";
    (literal.find((m) => m.object.kind === "Secret")!.object as Obj).stringData["pii-key"] = "0123456789abcdef";
    expect(secretProblems(literal)).toEqual([expect.stringMatching(/pii-key is not a placeholder/), expect.stringMatching(/BENEFITS_API_KEY is not from a secretKeyRef/)]);
  });

  it("the jobs run in one `benefits-sync schedule`: one replica, Recreate, no CronJob beside it", () => {
    const args = byArgs(manifests, "schedule")[0]?.spec.template.spec.containers[0].args as string[];
    const schedule = COMMANDS.find((c) => c.name === args[0])!;
    expect(schedule.name).toBe("schedule");
    expect(args.filter((a) => a.startsWith("--")).filter((f) => !schedule.options.some((o) => o.flags.split(/[ ,]/)[0] === f))).toEqual([]);
    expect(scheduleProblems(manifests)).toEqual([]);
    const two = copy(manifests);
    byArgs(two, "schedule")[0].spec.replicas = 2;
    byArgs(two, "schedule")[0].spec.strategy = { type: "RollingUpdate" };
    two.push({ file: "cron.yaml", object: { apiVersion: "batch/v1", kind: "CronJob" } });
    expect(scheduleProblems(two)).toHaveLength(3);
  });

  it("both pods mount the one snapshot volume where the image keeps it, held to one node", () => {
    expect(volumeProblems(manifests)).toEqual([]);
    const apart = copy(manifests);
    delete podSpecs(apart)[1].affinity;
    podSpecs(apart)[0].containers[0].env.find((e: Obj) => e.name === "BENEFITS_DB").value = "/tmp/benefits-sync.db";
    expect(volumeProblems(apart)).toHaveLength(2);
  });

  it("a NetworkPolicy per pod: /metrics and the receiver from chosen peers only; out to DNS and the service's port, named ports only", () => {
    expect(policies(manifests)).toHaveLength(2);
    expect(networkProblems(manifests)).toEqual([]);
    const open = copy(manifests);
    const [schedule, receiver] = policies(open).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    delete receiver.spec.ingress[0].from; // the receiver's port open to every pod
    receiver.spec.ingress[1].ports[0].port = 9999; // /metrics unreachable, a port nobody listens on opened
    schedule.spec.egress.push({ to: [{ ipBlock: { cidr: "0.0.0.0/0" } }] }); // out anywhere
    expect(networkProblems(open)).toEqual([
      "benefits-sync-schedule: an egress rule opens every port",
      "benefits-sync-webhooks: an ingress rule lets every peer in",
      "benefits-sync-webhooks: ingress to 9999, a port it does not listen on",
      "benefits-sync-webhooks: nothing may reach its metrics port",
    ]);
    const none = copy(manifests).filter((m) => !(m.object.kind === "NetworkPolicy" && (m.object as Obj).metadata.name === "benefits-sync-schedule"));
    policies(none)[0].spec.policyTypes = ["Ingress"];
    policies(none)[0].spec.egress[0].ports = [{ port: 5353, protocol: "UDP" }];
    expect(networkProblems(none)).toEqual([
      "benefits-sync-schedule: no NetworkPolicy selects its pods",
      "benefits-sync-webhooks: no Egress policy (everything is allowed)",
      "benefits-sync-webhooks: no egress to 53/UDP",
    ]);
  });

  it("no pod is given a service-account token: none calls the Kubernetes API", () => {
    expect(tokenProblems(manifests)).toEqual([]);
    const mounted = copy(manifests);
    delete podSpecs(mounted)[0].automountServiceAccountToken;
    podSpecs(mounted)[1].automountServiceAccountToken = true;
    expect(tokenProblems(mounted)).toHaveLength(2);
  });

  it("S3 deliveries stage member data in TMPDIR, a size-limited emptyDir in every pod", () => {
    expect(containers(manifests).map(({ c }) => (c.env as Obj[]).find((e) => e.name === "TMPDIR")?.value)).toEqual(["/tmp", "/tmp"]);
    expect(stagingProblems(manifests)).toEqual([]);
    const unbounded = copy(manifests);
    delete podSpecs(unbounded)[0].volumes.find((v: Obj) => v.emptyDir).emptyDir.sizeLimit;
    podSpecs(unbounded)[1].containers[0].env.find((e: Obj) => e.name === "TMPDIR").value = "/var/tmp";
    expect(stagingProblems(unbounded)).toEqual(["schedule: the emptyDir tmp has no sizeLimit", "webhooks: S3 deliveries stage in /var/tmp, which is not on an emptyDir"]);
  });
});

describe("the image by digest", () => {
  it("deploy/kubernetes/README.md's Apply prints the pushed image's digest and says to set image: by it", () => {
    const readme = readFileSync(join(root, "deploy", "kubernetes", "README.md"), "utf8");
    expect(digestProblems(readme, manifests)).toEqual([]);
    expect(digestProblems(readme.replace("**by digest**", "by tag").replace(/docker inspect [^\n]*\n/, ""), manifests)).toEqual([
      "Apply does not print the pushed image's digest",
      "Apply does not say to set image: by digest",
    ]);
  });
});

describe("the receiver's probes ask what `webhooks serve` serves", () => {
  const [receiver] = byArgs(manifests, "webhooks");
  const c = receiver.spec.template.spec.containers[0];
  const dir = mkdtempSync(join(tmpdir(), "bs-k8s-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("its flags are `webhooks serve`'s, and the probes' port is the one it is told to listen on", () => {
    const spec = COMMANDS.find((x) => x.name === "webhooks serve")!;
    expect(c.args.slice(0, 2)).toEqual(["webhooks", "serve"]);
    const flags = (c.args as string[]).filter((a) => a.startsWith("--"));
    expect(flags.filter((f) => !spec.options.some((o) => o.flags.split(/[ ,]/)[0] === f))).toEqual([]);
    const port = Number(c.args[c.args.indexOf("--port") + 1]);
    const named = (c.ports as Obj[]).find((p) => p.containerPort === port);
    for (const probe of [c.readinessProbe, c.livenessProbe]) expect([named?.name, port]).toContain(probe.httpGet.port);
    const service = manifests.find((m) => m.object.kind === "Service")!.object as Obj;
    expect(service.spec.selector).toEqual(receiver.spec.selector.matchLabels);
    expect([named?.name, port]).toContain(service.spec.ports[0].targetPort);
  });

  it("both pods serve GET /metrics on the port their annotations and container ports name, never the webhook port", () => {
    for (const d of deployments(manifests)) {
      const k = d.spec.template.spec.containers[0];
      const port = Number(k.args[k.args.indexOf("--metrics-port") + 1]);
      expect(k.args[k.args.indexOf("--metrics-host") + 1]).toBe("0.0.0.0");
      expect((k.ports as Obj[]).find((p) => p.name === "metrics")?.containerPort).toBe(port);
      expect(Number(d.spec.template.metadata.annotations["prometheus.io/port"])).toBe(port);
      if (k.args.includes("--port")) expect(port).not.toBe(Number(k.args[k.args.indexOf("--port") + 1]));
    }
  });

  it("a real receiver answers the probes' path 200 (and another path 404)", async () => {
    const inbox = Inbox.open(join(dir, "benefits-sync.inbox.db"));
    const r = createReceiver({ path: "/webhooks", maxBodyBytes: 65_536, verifier: new SignatureVerifier(["whsec-test-0123456789abcdef"]), auth: null, inbox, counters: new ReceiverCounters(1) });
    try {
      const { port } = await r.listen(0, "127.0.0.1");
      const ask = async (path: string) => (await request(`http://127.0.0.1:${port}${path}`)).statusCode;
      expect(c.readinessProbe.httpGet.path).toBe(c.livenessProbe.httpGet.path);
      expect(await ask(c.readinessProbe.httpGet.path)).toBe(200);
      expect(await ask(`${c.readinessProbe.httpGet.path}x`)).toBe(404);
    } finally {
      await r.stop(100);
      inbox.close();
    }
  });
});
