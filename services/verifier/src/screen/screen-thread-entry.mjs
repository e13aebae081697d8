// Worker-thread entry of screen-threads.ts. A worker starts without the main thread's
// module hooks, so it registers tsx's loader before importing the TypeScript sources.
import { register } from "tsx/esm/api";

register();
await import("./screen-thread-main.ts");
