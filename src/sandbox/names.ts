/** Word lists for believable people, places and companies. Some names carry unicode on purpose. */

export const FEMALE_FIRST = [
  "Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Barbara", "Susan", "Jessica", "Sarah", "Karen",
  "Lisa", "Nancy", "Betty", "Sandra", "Ashley", "Emily", "Michelle", "Amanda", "Melissa", "Stephanie",
  "Rebecca", "Laura", "Olivia", "Emma", "Ava", "Sophia", "Isabella", "Mia", "Grace", "Hannah",
] as const;
export const MALE_FIRST = [
  "James", "Robert", "John", "Michael", "David", "William", "Richard", "Joseph", "Thomas", "Charles",
  "Christopher", "Daniel", "Matthew", "Anthony", "Mark", "Steven", "Paul", "Andrew", "Joshua", "Kevin",
  "Brian", "George", "Timothy", "Ryan", "Jacob", "Noah", "Liam", "Ethan", "Lucas", "Henry",
] as const;
/** Unicode and punctuation in first names: parsers, CSV writers and collations must cope. */
export const FEMALE_FIRST_UNICODE = ["Zoë", "Chloé", "Renée", "Maëlle", "Åsa", "Małgorzata", "Zsófia", "美咲", "Ана", "Sinéad"] as const;
export const MALE_FIRST_UNICODE = ["José", "François", "Jürgen", "Søren", "Łukasz", "Ñico", "Dương", "Björn", "伟", "Óscar"] as const;

export const LAST = [
  "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
  "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin",
  "Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson",
  "Walker", "Young", "Allen", "King", "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores",
] as const;
export const LAST_UNICODE = ["Nguyễn", "O'Brien", "Müller", "Ñúñez", "李", "D'Angelo", "Łukasiewicz", "Ødegaard", "García-Márquez", "Çelik", "Van der Berg", "佐藤"] as const;

export const STREETS = ["Main", "Oak", "Pine", "Maple", "Cedar", "Elm", "Washington", "Lake", "Hill", "Park", "Sunset", "Ridge", "Church", "Mill", "River"] as const;
export const STREET_SUFFIX = ["St", "Ave", "Blvd", "Rd", "Ln", "Dr", "Ct", "Way"] as const;

/** City, state, zip prefix (3 digits). */
export const CITIES: readonly (readonly [string, string, string])[] = [
  ["Springfield", "IL", "627"], ["Columbus", "OH", "432"], ["Austin", "TX", "787"], ["Denver", "CO", "802"],
  ["Portland", "OR", "972"], ["Raleigh", "NC", "276"], ["Madison", "WI", "537"], ["Boise", "ID", "837"],
  ["Tampa", "FL", "336"], ["Albany", "NY", "122"], ["Phoenix", "AZ", "850"], ["Nashville", "TN", "372"],
  ["Richmond", "VA", "232"], ["Omaha", "NE", "681"], ["Tucson", "AZ", "857"], ["Fresno", "CA", "937"],
  ["San José", "CA", "951"], ["Santa Fe", "NM", "875"], ["Salt Lake City", "UT", "841"], ["Burlington", "VT", "054"],
];

export const COMPANY_A = ["Acme", "Blue Ridge", "Summit", "Harbor", "Pioneer", "Evergreen", "Keystone", "Redwood", "Silverline", "Northwind", "Crescent", "Granite", "Lakeside", "Beacon", "Meridian", "Cascade"] as const;
export const COMPANY_B = ["Manufacturing", "Logistics", "Health Partners", "Foods", "Software", "Construction", "Dental Group", "Credit Union", "Schools", "Hospitality", "Energy", "Labs"] as const;
export const COMPANY_C = ["Inc.", "LLC", "Co.", "Corp.", "Group", "Ltd."] as const;

export const CPT_CODES = ["99213", "99214", "99203", "80053", "85025", "36415", "71046", "93000", "97110", "90686", "81001", "99395", "G0439", "J3490"] as const;
export const DENIAL_REASONS = ["not_covered", "duplicate_claim", "eligibility_terminated", "prior_authorization_missing", "out_of_network", "timely_filing"] as const;

/** ASCII-fold a name for an email local part. */
const emailCache = new Map<string, string>();
export function emailSafe(s: string): string {
  const hit = emailCache.get(s);
  if (hit !== undefined) return hit;
  const out = emailFold(s);
  if (emailCache.size < 10_000) emailCache.set(s, out);
  return out;
}

function emailFold(s: string): string {
  const folded = s.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "");
  return folded || "member";
}
