// How an inference replica says which adapter it lacks when it refuses a Generate (NOT_FOUND):
// this header in the error's metadata names it, so a caller that holds that adapter's files
// (the orchestrator, for every version it synced) loads it into that replica and asks again,
// instead of reading the message or sampling from another policy.
export const MISSING_ADAPTER_HEADER = "leangrpo-missing-adapter";
