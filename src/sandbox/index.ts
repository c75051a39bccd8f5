/** The sandbox: a local, seeded, faithful copy of the service. */
export { startSandbox } from "./sandbox.js";
export type { Sandbox, SandboxOptions, IterableResource } from "./sandbox.js";
export type { SandboxKeys } from "./api-routes.js";
export { Resources, canonicalJson, splitMember, splitGroup } from "./changes.js";
export type { ChangeSet, Resource, ResourceChanges } from "./changes.js";
export { ListResources } from "./faults.js";
export type { FaultPlan, FaultRate, ListResource } from "./faults.js";
export { signBody } from "./webhooks.js";
export type { WebhookAuth, WebhookConfig, WebhookConfigInput, DeliveryRecord, WebhookEventRec } from "./webhooks.js";
export type { MemberRec, CoverageRec, GroupRec, PlanRec, DesignRec, ClaimRec } from "./records.js";
export type { PlantedInconsistencies } from "./inconsistencies.js";
