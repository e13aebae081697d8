// The logger type of the kit's createLogger (pino), without depending on pino directly.
import type { createLogger } from "@lean-grpo/kit";

export type Logger = ReturnType<typeof createLogger>;
