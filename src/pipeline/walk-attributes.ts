/**
 * What a walk's span says of its scope: the resource, whether it looks records up, and the group
 * a listing is fanned out to. Never the rest of a scope's filters: a lookup's filters are a
 * member's id (`id`, `memberId`), which is a person's.
 */
import type { Attributes } from "@opentelemetry/api";
import { isLookup, type Scope } from "../store/walk/scopes.js";
import { Attr } from "../telemetry/spans.js";

/**
 * @example
 * walkAttributes(scopeOf("members", { groupId: "G1" }))
 * // { "benefits_sync.resource": "members", "benefits_sync.walk.lookup": false, "benefits_sync.group.id": "G1" }
 */
export function walkAttributes(scope: Scope): Attributes {
  const group = scope.filters.groupId;
  return { [Attr.resource]: scope.resource, [Attr.lookup]: isLookup(scope), ...(group !== undefined ? { [Attr.groupId]: group } : {}) };
}
