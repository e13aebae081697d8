// The logger type of the kit's createLogger (pino), without depending on pino directly.
import type { createLogger } from "@lean-grpo/kit";

/** What the service logs through: the kit's logger, or any with the same two methods. */
export type Logger = Pick<ReturnType<typeof createLogger>, "info" | "warn">;
