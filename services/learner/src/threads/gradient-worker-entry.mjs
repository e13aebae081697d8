// Worker-thread entry of a gradient thread when the learner runs from its TypeScript sources:
// a worker starts without the parent's module hooks, so it registers tsx's loader first.
// (The service's esbuild bundle starts dist/gradient-worker.mjs instead.)
import { register } from "tsx/esm/api";

register();
await import("./gradient-worker.ts");
