import { describe, expect, it } from "vitest";
import { bodyView, describeBody } from "../../../src/api/body-view.js";
import { carriesPeople } from "../../../src/api/people-endpoints.js";

describe("carriesPeople", () => {
  it.each([
    "GET /v2/members",
    "/v2/members?status=active&limit=100",
    "GET /v1/members/m%201",
    "PATCH /v2/members/m1",
    "GET /v1/claims/medical?memberId=m1",
    "POST /v2/groups/g1/enroll/initial-enrollment",
    "POST /v3/groups/g1/enroll/add-subscriber",
    "POST /v3/groups/g1/enroll/c1/add-dependent",
    "POST /v3/groups/g1/enroll/terminate",
    "GET /v1/enrollmentRequests/er1",
    "GET /v4/members",
  ])("%s carries people", (endpoint) => expect(carriesPeople(endpoint)).toBe(true));

  it.each(["GET /v2/designs", "POST /v2/groups", "GET /v2/groups?limit=5", "GET /v2/groups/g1"])("%s does not", (endpoint) =>
    expect(carriesPeople(endpoint)).toBe(false),
  );
});

describe("describeBody", () => {
  it.each([
    ["<!DOCTYPE html><html><body>Jane</body></html>", "an HTML page"],
    ["  <html lang=en>Jane</html>", "an HTML page"],
    ['<?xml version="1.0"?><e>Jane</e>', "an XML document"],
    ["<div>Jane</div>", "markup"],
    ['{"data":[{"id":"m1","firstName":"Ja', "truncated JSON"],
    ['[{"id":"m1"},{"id":', "truncated JSON"],
    ['{"a":1}}', "malformed JSON"],
    ["{'a': 1}", "malformed JSON"],
    ["Jane Roe", "text starting with a letter"],
    ["123456789", "text starting with a digit"],
    ["", "an empty body"],
  ])("%j is %s, with its byte length, and nothing of its text", (text, kind) => {
    const d = describeBody(text);
    expect(d).toBe(`${kind} (${Buffer.byteLength(text)} bytes)`);
    expect(d).not.toMatch(/Jane|Roe|m1|123456789/);
  });

  it("counts bytes, not characters", () => {
    expect(describeBody("José")).toBe("text starting with a letter (5 bytes)");
  });
});

describe("bodyView", () => {
  it("gives an excerpt for an endpoint without people, the shape for one with", () => {
    expect(bodyView("<html>down</html>", "GET /v2/designs")).toEqual({ excerpt: "<html>down</html>" });
    expect(bodyView("<html>down</html>", "GET /v2/members")).toEqual({
      shape: "an HTML page (17 bytes), not quoted: this endpoint's answers carry member data",
    });
  });
});
