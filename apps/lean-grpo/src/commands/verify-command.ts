// `lean-grpo verify FILE.jsonl`: checks each record's proof against its statement with
// the Lean verifier, prints a verdict table and writes one JSON result per record.
// The verifier is a running one (`--url`), or one started here on loopback with the
// REPL of `--repl-cmd` / `--repl-cwd` (else LEAN_REPL_CMD / LEAN_REPL_CWD): the same
// gRPC path either way.
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { localDatasetPlace, readDatasetRows } from "@lean-grpo/orchestrator";
import { positiveInteger } from "./flag-values.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import {
  LeanVerifierService,
  Verdict,
  VerdictTier,
  type VerifyRequestSchema,
  type VerifyResponse,
} from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { createServiceClient, loadConfig, serve, type RunningServer, callerAuth, envAuthToken } from "@lean-grpo/kit";
import { VerifierConfigSchema, createVerifierService } from "@lean-grpo/verifier";

export interface VerifyCommandOptions {
  url?: string;
  replCmd?: string;
  replCwd?: string;
  poolSize?: string;
  replay?: string;
  replayCmd?: string;
  replayWorkspace?: string;
  timeoutMs?: string;
  out?: string;
}

/** A record of the input file: the seed format (`statement`) or miniF2F's (`formal_statement`). */
interface ProofRecord {
  id: string;
  /** The theorem's name; "" leaves it to the statement. */
  name: string;
  /** How the table names it. */
  label: string;
  statement: string;
  proof: string;
  context: string;
  header: string;
  imports: string[];
}

/** Items per VerifyBatch call, so a large file never makes one oversized message. */
const BATCH_ITEMS = 256;

export function registerVerifyCommand(program: Command): void {
  program
    .command("verify")
    .description("check the proofs of a JSONL file (records with statement + proof) with the Lean verifier")
    .argument(
      "<file>",
      "JSONL: one record per line with statement (or formal_statement) and proof; optional id, name, context, header, imports",
    )
    .option("--repl-cmd <command>", "REPL command, e.g. 'lake env /opt/repl/.lake/build/bin/repl' (default: LEAN_REPL_CMD)")
    .option("--repl-cwd <dir>", "REPL working directory, e.g. the Mathlib project (default: LEAN_REPL_CWD, else here)")
    .option("--url <url>", "use a running verifier instead, e.g. http://127.0.0.1:50052")
    .option("--pool-size <n>", "REPL workers of the verifier started here (default: cores - 1)")
    .option("--replay <mode>", "kernel replay in a fresh process: proved (default), always, off (trust the REPL alone)")
    .option(
      "--replay-cmd <command>",
      "the replay checker, leanprover/comparator, e.g. 'lake env /opt/comparator/.lake/build/bin/comparator' (default: LEAN_REPLAY_CMD)",
    )
    .option("--replay-workspace <dir>", "Lake workspace each replay's project is made from (default: LEAN_REPLAY_WORKSPACE)")
    .option("--timeout-ms <ms>", "time limit per proof (default: the verifier's, 60000)")
    .option("-o, --out <file>", "results JSONL (default: FILE with .results.jsonl)")
    .action(async (file: string, options: VerifyCommandOptions) => {
      await verifyCommand(file, options);
    });
}

/** Checks every record; resolves with the count of each verdict once the results file is written. */
export async function verifyCommand(file: string, options: VerifyCommandOptions): Promise<Map<string, number>> {
  const records = await readRecords(file);
  const timeoutMs = options.timeoutMs === undefined ? 0 : positiveInteger("--timeout-ms", options.timeoutMs);
  const verifier = await connect(options);
  const results: (VerifyResponse | undefined)[] = new Array(records.length);
  const counts = new Map<string, number>();
  try {
    const width = Math.max(4, ...records.map((record) => record.label.length));
    process.stdout.write(
      `${"#".padStart(5)}  ${"name".padEnd(width)}  ${"verdict".padEnd(10)}  ${"decided by".padEnd(10)}  ${"ms".padStart(7)}  reason\n`,
    );
    for (let first = 0; first < records.length; first += BATCH_ITEMS) {
      const items = records.slice(first, first + BATCH_ITEMS).map((record) => toRequest(record, timeoutMs));
      for await (const { index, result } of verifier.client.verifyBatch({ items })) {
        const at = first + index;
        const record = records[at]!;
        const verdict = Verdict[result!.verdict];
        results[at] = result;
        counts.set(verdict, (counts.get(verdict) ?? 0) + 1);
        process.stdout.write(
          `${String(at + 1).padStart(5)}  ${record.label.padEnd(width)}  ${verdict.padEnd(10)}  ${tierName(result!.decidedBy).padEnd(10)}  ${(result!.timings?.totalMs ?? 0).toFixed(0).padStart(7)}  ${oneLine(result!.reason)}\n`,
        );
      }
    }
  } finally {
    await verifier.close();
  }
  const out = options.out ?? file.replace(/(\.jsonl)?$/, ".results.jsonl");
  writeFileSync(out, `${results.map((result, i) => JSON.stringify(toResultLine(records[i]!, result!))).join("\n")}\n`);
  const summary = [...counts].map(([verdict, count]) => `${verdict} ${count}`).join(", ");
  process.stdout.write(`${records.length} proofs: ${summary}\nresults: ${out}\n`);
  return counts;
}

/** The proofs file in any dataset format (JSONL, parquet, a datasets folder), read by the orchestrator's readers. */
async function readRecords(file: string): Promise<ProofRecord[]> {
  const records: ProofRecord[] = [];
  (await readDatasetRows(localDatasetPlace(), file)).forEach(({ where, record: value }) => {
    const text = (key: string, fallback = ""): string => {
      const field = value[key];
      if (field === undefined || field === null) return fallback;
      if (typeof field !== "string") throw new Error(`${where}: "${key}" must be a string`);
      return field;
    };
    const statement = text("statement", text("formal_statement"));
    const proof = text("proof");
    if (statement === "") throw new Error(`${where}: missing "statement" (or "formal_statement"): the Lean statement to prove`);
    if (proof === "") throw new Error(`${where}: missing "proof": the proof body, e.g. "by simp"`);
    const imports = value.imports ?? [];
    if (!Array.isArray(imports) || !imports.every((module) => typeof module === "string")) {
      throw new Error(`${where}: "imports" must be a list of module names, e.g. ["Mathlib"]`);
    }
    const name = text("name");
    const id = text("id", name);
    records.push({
      id,
      name,
      label: name || id || where,
      statement,
      proof,
      context: text("context"),
      header: text("header"),
      imports,
    });
  });
  if (records.length === 0) throw new Error(`${file}: no records`);
  return records;
}

function toRequest(record: ProofRecord, timeoutMs: number): MessageInitShape<typeof VerifyRequestSchema> {
  return {
    theorem: {
      id: record.id,
      name: record.name,
      statement: record.statement,
      context: record.context,
      header: record.header,
      imports: record.imports,
    },
    proof: record.proof,
    timeoutMs,
    requestId: record.id,
  };
}

function toResultLine(record: ProofRecord, result: VerifyResponse) {
  return {
    id: record.id,
    name: record.name,
    verdict: Verdict[result.verdict],
    decided_by: tierName(result.decidedBy),
    reason: result.reason,
    axioms: result.axioms,
    goals: result.goals,
    errors: result.progress?.errorCount ?? 0,
    tactics: result.progress?.tacticsTotal ?? 0,
    tactics_valid_before_first_error: result.progress?.tacticsValidBeforeFirstError ?? 0,
    lean_ms: result.timings?.leanMs ?? 0,
    replay_ms: result.timings?.replayMs ?? 0,
    total_ms: result.timings?.totalMs ?? 0,
  };
}

interface Verifier {
  client: Client<typeof LeanVerifierService>;
  close(): Promise<void>;
}

async function connect(options: VerifyCommandOptions): Promise<Verifier> {
  if (options.url !== undefined) {
    const { client, transport } = createServiceClient(LeanVerifierService, {
      endpoints: [options.url],
      interceptors: callerAuth(envAuthToken()),
    });
    return { client, close: async () => transport.close() };
  }
  const command = options.replCmd ?? process.env.LEAN_REPL_CMD ?? "";
  if (command.trim() === "") {
    throw new Error(
      "no Lean REPL: pass --repl-cmd (e.g. --repl-cmd 'lake env /opt/repl/.lake/build/bin/repl' --repl-cwd /opt/mathlib4), set LEAN_REPL_CMD, or --url of a running verifier",
    );
  }
  const overrides = [
    `repl.command=${JSON.stringify(command)}`,
    ...(options.replCwd === undefined ? [] : [`repl.cwd=${JSON.stringify(options.replCwd)}`]),
    ...(options.poolSize === undefined ? [] : [`repl.pool_size=${positiveInteger("--pool-size", options.poolSize)}`]),
    ...(options.replay === undefined ? [] : [`repl.replay=${replayMode(options.replay)}`]),
    ...(options.replayCmd === undefined ? [] : [`repl.replay_checker.command=${JSON.stringify(options.replayCmd)}`]),
    ...(options.replayWorkspace === undefined ? [] : [`repl.replay_checker.workspace=${JSON.stringify(options.replayWorkspace)}`]),
    "server.port=0",
    "server.shutdown.drain_delay_ms=0",
  ];
  // Service logs are for operators; here only warnings (e.g. no network isolation) are shown.
  process.env.LOG_LEVEL ??= "warn";
  const config = loadConfig(VerifierConfigSchema, { envPrefix: "LEANGRPO_VERIFIER_", overrides });
  const service = createVerifierService(config);
  let server: RunningServer;
  try {
    server = await serve({ name: "verifier", services: [service], config: config.server });
  } catch (error) {
    await service.close();
    throw error;
  }
  const { client, transport } = createServiceClient(LeanVerifierService, { endpoints: [server.url], retry: { maxAttempts: 1 } });
  return {
    client,
    async close() {
      transport.close();
      await server.shutdown();
      await service.close();
    },
  };
}

function replayMode(value: string): string {
  if (!["proved", "always", "off"].includes(value)) throw new Error(`--replay: "${value}" is not a mode; expected proved, always or off`);
  return value;
}

/** "screen", "repl" or "replay": the check that decided. */
function tierName(tier: VerdictTier): string {
  return tier === VerdictTier.UNSPECIFIED ? "" : VerdictTier[tier].toLowerCase();
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > 100 ? `${line.slice(0, 100)}…` : line;
}
