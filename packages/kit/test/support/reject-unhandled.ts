// A process that leaves two promise rejections unhandled after installing the guard,
// then reports what it survived. Exits 0 only if it is still alive to do so.
import { pino } from "pino";
import { surviveUnhandledRejections, unhandledRejectionCount } from "../../src/server/unhandled-rejections.js";

surviveUnhandledRejections(pino({ level: "error" }, process.stderr));
void Promise.reject(new Error("first rejection nobody handled"));
void Promise.reject(new Error("second rejection nobody handled"));
setTimeout(() => {
  process.stdout.write(`${JSON.stringify({ survived: unhandledRejectionCount() })}\n`);
}, 100);
