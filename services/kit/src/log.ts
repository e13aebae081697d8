// pino JSON logs to stderr; LOG_LEVEL picks the level (default info, "silent" in tests).
import { pino, type Logger } from "pino";

export function createLogger(name: string): Logger {
  return pino({ name, level: process.env.LOG_LEVEL ?? (process.env.VITEST ? "silent" : "info") }, pino.destination(2));
}
