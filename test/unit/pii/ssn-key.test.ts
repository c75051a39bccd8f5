import { describe, expect, it } from "vitest";
import { isSsnKey } from "../../../src/pii/ssn-key.js";

/** The one rule: which key names hold a social security number. Written out by hand, not derived. */
const SSN_KEYS = [
  "ssn", "SSN", "Ssn", "dependentSsn", "dependent_ssn", "ssnNumber", "ssn_number", "SSN-No", "socialSecurityNumber",
  "social_security_no", "SocialSecurityNo", "spouseSSN", "memberSSNs", "ssns", "SSNumber", "ss_number", "social-security",
  "spouse.ssn", "SOCIAL_SECURITY_NUMBER", "ssn2", "primary ssn",
];
const OTHER_KEYS = [
  "ssn_token", "ssn_last4", "dependentSsn_token", "socialSecurityNumber_last4", "SSN_token", "lesson", "classname", "session",
  "assnId", "password", "id", "firstName", "socialMedia", "security", "ssId", "mission", "Lessons", "passNo", "", "sn",
];

describe("isSsnKey", () => {
  it.each(SSN_KEYS)("%s names an SSN", (k) => expect(isSsnKey(k)).toBe(true));
  it.each(OTHER_KEYS)("%s does not", (k) => expect(isSsnKey(k)).toBe(false));
  it("gives the same answer the second time (the memo)", () => {
    for (const k of [...SSN_KEYS, ...OTHER_KEYS]) expect(isSsnKey(k)).toBe(SSN_KEYS.includes(k));
  });
});
