import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));

// Runs in a child process: what is checked is that nothing left behind by the
// client (HTTP/2 sessions, DNS refresh timer) keeps a process alive.
const script = `
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { createServiceClient } from "${here}index.ts";
import { startReplica } from "${here}../../test/support/replicas.ts";
const replica = await startReplica("r0");
const { client, transport } = createServiceClient(InferenceService, {
  target: "dns:///localhost:" + replica.port,
  dnsRefreshMs: 10,
});
const { templatedText } = await client.tokenize({});
transport.close();
await replica.close();
console.log("served by " + templatedText);
`;

describe("createServiceClient", () => {
  it("lets the process exit once the transport is closed", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", script], {
      cwd: here,
      timeout: 15_000,
    });
    expect(stdout.trim()).toBe("served by r0");
  });
});
