// Config loading for every service of the mesh.
export { loadConfig, type ConfigSources } from "./load-config.js";
export { listGroups, listOptions, splitGroupChoices, type ConfigGroups, type GroupChoice } from "./config-groups.js";
export { CONFIG_LAYERS, parseOverride, type ConfigLayer, type SourceEntry } from "./sources.js";
export { describeConfigKeys } from "./schema-walk.js";
export { schemaKeys, typeText, type SchemaKey } from "./schema-reference.js";
export { ConfigError, type ConfigIssue } from "./errors.js";
export { deepMerge, isPlainObject, type PlainObject } from "./merge.js";
