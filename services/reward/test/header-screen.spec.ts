// Score and ScoreGroup refuse a theorem whose header the verifier's header check
// refuses, before any verification is asked for (the verifier refuses it too; the
// reward service says so first, naming the field), and pass honest headers on.
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { HONEST_HEADERS, HOSTILE_HEADERS } from "../../../tests/security/header-attacks.js";
import { completion, leanAnswer, leanTheorem, proved } from "./messages.js";
import { failure } from "./support/failure.js";
import { startRewardServer, type RewardServer } from "./support/server.js";

describe("the header check in the reward service", () => {
  let reward: RewardServer;
  let verifier: Server;
  let verifierCalls = 0;
  beforeAll(async () => {
    // A "verifier" that only counts connections: a refused header must never get there.
    verifier = createServer((socket) => {
      verifierCalls++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => verifier.listen(0, "127.0.0.1", resolve));
    const { port } = verifier.address() as { port: number };
    reward = await startRewardServer([`verifier.url=http://127.0.0.1:${port}`]);
  });
  afterAll(async () => {
    await reward.stop();
    await new Promise((resolve) => verifier.close(resolve));
  });

  const proof = completion(leanAnswer("by simp"));

  it.each(Object.entries(HOSTILE_HEADERS))("Score and ScoreGroup refuse %s", async (_name, header) => {
    const theorem = leanTheorem({ header });
    for (const call of [
      reward.client.score({ theorem, completion: proof }),
      reward.client.scoreGroup({ theorem, completions: [proof, proof] }),
    ]) {
      const error = await failure(call);
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(/^theorem\.header: line \d+ /);
    }
    expect(verifierCalls).toBe(0);
  });

  it("refuses a module of theorem.imports that carries a command", async () => {
    const error = await failure(reward.client.score({ theorem: leanTheorem({ imports: ["Lean\n#eval 1"] }), completion: proof }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/^theorem\.imports: line 2 holds `#eval`/);
  });

  it.each(Object.entries(HONEST_HEADERS))("scores a theorem with the honest header %s", async (_name, header) => {
    const { result } = await reward.client.score({ theorem: leanTheorem({ header }), completion: proof, verification: proved() });
    expect(result!.solved).toBe(true);
  });
});
