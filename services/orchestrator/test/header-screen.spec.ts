// StartRun and Evaluate refuse a dataset (a file or inline theorems) holding a header
// the verifier's header check refuses, before the run or the evaluation starts, naming
// the record and the field; honest dataset headers load.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { EvaluateRequestSchema, StartRunRequestSchema } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { EVAL_HEADER, HONEST_HEADERS, HOSTILE_HEADERS } from "../../../tests/security/header-attacks.js";
import { OrchestratorConfigSchema } from "../src/config.js";
import { parseDataset } from "../src/data/load-dataset.js";
import { createOrchestratorService } from "../src/service.js";

const dir = mkdtempSync(join(tmpdir(), "orchestrator-headers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// No service URL is set: a call that got past the dataset would fail connecting, with another code.
const service = createOrchestratorService(OrchestratorConfigSchema.parse({ runs_dir: join(dir, "runs") }));
const context = { signal: new AbortController().signal } as HandlerContext;

const record = (header: string) => ({ name: "t", formal_statement: "theorem t : True := by sorry", header });
const theorem = (header: string) => ({ id: "t", name: "t", statement: "theorem t : True", header, kind: TaskKind.LEAN_PROOF });

async function refusal(call: () => unknown): Promise<ConnectError> {
  try {
    await call();
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected the call to fail");
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) {
    // The refusal comes before the first event.
  }
}

describe("the header check in the orchestrator", () => {
  it.each(Object.entries(HOSTILE_HEADERS))("StartRun and Evaluate refuse a dataset with %s", async (name, header) => {
    const file = join(dir, `${name.replace(/[^A-Za-z0-9]+/g, "-")}.jsonl`);
    writeFileSync(file, `${JSON.stringify(record("import Mathlib"))}\n${JSON.stringify(record(header))}\n`);
    const calls: Record<string, () => unknown> = {
      "StartRun (file)": () => service.impl.startRun!(create(StartRunRequestSchema, { datasetPath: file }), context),
      "StartRun (inline)": () =>
        service.impl.startRun!(
          create(StartRunRequestSchema, { theorems: [theorem("import Mathlib"), { ...theorem(header), id: "u" }] }),
          context,
        ),
      "Evaluate (file)": () =>
        drain(service.impl.evaluate!(create(EvaluateRequestSchema, { datasetPath: file }), context) as AsyncIterable<unknown>),
      "Evaluate (inline)": () =>
        drain(service.impl.evaluate!(create(EvaluateRequestSchema, { theorems: [theorem(header)] }), context) as AsyncIterable<unknown>),
    };
    for (const [entry, call] of Object.entries(calls)) {
      const error = await refusal(call);
      expect(error.code, entry).toBe(Code.InvalidArgument);
      expect(error.rawMessage, entry).toMatch(/line [12], field "header": line \d+ /);
    }
  });

  it("names the record of a dataset file and refuses nothing else", () => {
    expect(() => parseDataset(`${JSON.stringify(record("import Mathlib"))}\n${JSON.stringify(record(EVAL_HEADER))}`, "d.jsonl")).toThrow(
      /^dataset d\.jsonl, line 2, field "header": line 2 holds `#eval`/,
    );
  });

  it("loads every honest dataset header", () => {
    const theorems = parseDataset(
      Object.values(HONEST_HEADERS)
        .map((header, i) => JSON.stringify({ ...record(header), name: `t${i}` }))
        .join("\n"),
      "ok.jsonl",
    );
    expect(theorems.map((t) => t.header)).toEqual(Object.values(HONEST_HEADERS));
  });
});
