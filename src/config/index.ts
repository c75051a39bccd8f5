export { Config, ENVIRONMENTS, PII_MODES, RESOURCE_NAMES } from "./schema.js";
export type { ConfigInput, EnvironmentName, PiiMode, ConfiguredResource } from "./schema.js";
export { loadConfig, readConfig, DEFAULT_CONFIG_FILE } from "./load.js";
export type { LoadConfigOptions } from "./load.js";
export type { ConfigFlags } from "./flags.js";
export { ENV_VARS } from "./env.js";
export { resolveService } from "./resolve-service.js";
export type { ServiceTarget } from "./resolve-service.js";
