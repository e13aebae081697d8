// `lean-grpo verify FILE.jsonl`: checks each record's proof against its statement with
// the Lean verifier, prints a verdict table and writes one JSON result per record.
// The verifier is a running one (`--url`), or one started here on loopback with the
// REPL of `--repl-cmd` / `--repl-cwd` (else LEAN_REPL_CMD / LEAN_REPL_CWD): the same
// gRPC path either way. It answers per record: a record the verifier cannot take (its
// theorem refused by the screen, a field missing) gets its own REJECTED line with the
// reason, and every other record is checked (VerifyBatch's invalid_items_as_results).
// A proof is a body or a whole Lean file (`proof_format` per record, else
// --proof-format, `auto` by default: a proof that begins with a declaration is a file).
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { localDatasetPlace, readDatasetRows } from "@lean-grpo/orchestrator";
import { positiveInteger } from "./flag-values.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { ProofFormat } from "@lean-grpo/gen/leangrpo/v1/common_pb";
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
  proofFormat?: string;
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
  proofFormat: ProofFormat;
  /** Where it is in the file ("FILE:LINE"), for reasons that name the record. */
  where: string;
}

/** A line of the input: a record to check, or why it cannot be checked (its own result line). */
type InputLine = { record: ProofRecord } | { label: string; id: string; name: string; problem: string };

const PROOF_FORMATS: Readonly<Record<string, ProofFormat>> = {
  body: ProofFormat.BODY,
  whole_file: ProofFormat.WHOLE_FILE,
  auto: ProofFormat.AUTO,
};

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
    .option(
      "--proof-format <format>",
      "what a proof is where a record has no proof_format: body, whole_file, or auto (default: a proof beginning with a declaration is a whole file)",
    )
    .action(async (file: string, options: VerifyCommandOptions) => {
      await verifyCommand(file, options);
    });
}

/** Checks every record; resolves with the count of each verdict once the results file is written. */
export async function verifyCommand(file: string, options: VerifyCommandOptions): Promise<Map<string, number>> {
  const defaultFormat = proofFormatFlag(options.proofFormat);
  const lines = await readLines(file, defaultFormat);
  const timeoutMs = options.timeoutMs === undefined ? 0 : positiveInteger("--timeout-ms", options.timeoutMs);
  const verifier = await connect(options);
  const results: ResultLine[] = new Array(lines.length);
  const counts = new Map<string, number>();
  try {
    const width = Math.max(4, ...lines.map((line) => labelOf(line).length));
    process.stdout.write(
      `${"#".padStart(5)}  ${"name".padEnd(width)}  ${"verdict".padEnd(10)}  ${"decided by".padEnd(10)}  ${"ms".padStart(7)}  reason\n`,
    );
    const report = (at: number, result: ResultLine) => {
      results[at] = result;
      counts.set(result.verdict, (counts.get(result.verdict) ?? 0) + 1);
      const reason = result.theorem_error ? `the theorem does not elaborate under its header: ${result.theorem_error}` : result.reason;
      process.stdout.write(
        `${String(at + 1).padStart(5)}  ${labelOf(lines[at]!).padEnd(width)}  ${result.verdict.padEnd(10)}  ${result.decided_by.padEnd(10)}  ${result.total_ms.toFixed(0).padStart(7)}  ${oneLine(reason)}\n`,
      );
    };
    lines.forEach((line, at) => {
      if ("problem" in line) report(at, refusedLine(line));
    });
    const checked = lines.flatMap((line, at) => ("record" in line ? [{ at, record: line.record }] : []));
    for (let first = 0; first < checked.length; first += BATCH_ITEMS) {
      const batch = checked.slice(first, first + BATCH_ITEMS);
      const items = batch.map(({ record }) => toRequest(record, timeoutMs));
      for await (const { index, result } of verifier.client.verifyBatch({ items, invalidItemsAsResults: true })) {
        const { at, record } = batch[index]!;
        report(at, toResultLine(record, result!));
      }
    }
  } finally {
    await verifier.close();
  }
  const out = options.out ?? file.replace(/(\.jsonl)?$/, ".results.jsonl");
  writeFileSync(out, `${results.map((result) => JSON.stringify(result)).join("\n")}\n`);
  const summary = [...counts].map(([verdict, count]) => `${verdict} ${count}`).join(", ");
  process.stdout.write(`${lines.length} proofs: ${summary}\n${theoremErrorsSummary(lines, results)}results: ${out}\n`);
  return counts;
}

/** A line naming the records whose theorem Lean could not read, with the first one's error; "" when there are none. */
function theoremErrorsSummary(lines: readonly InputLine[], results: readonly ResultLine[]): string {
  const broken = results.flatMap((result, at) =>
    result.theorem_error ? [{ label: labelOf(lines[at]!), error: result.theorem_error }] : [],
  );
  if (broken.length === 0) return "";
  return (
    `${broken.length} record(s) state a theorem that does not elaborate under its header (first: ${broken[0]!.label}: ` +
    `${broken[0]!.error}): no proof of them can be PROVED; give them the header or imports their statements need\n`
  );
}

function proofFormatFlag(value: string | undefined): ProofFormat {
  if (value === undefined) return ProofFormat.AUTO;
  const format = PROOF_FORMATS[value];
  if (format === undefined) throw new Error(`--proof-format: "${value}" is not a format; expected body, whole_file or auto`);
  return format;
}

function labelOf(line: InputLine): string {
  return "record" in line ? line.record.label : line.label;
}

/**
 * Every record of the proofs file (JSONL, parquet, a datasets folder, read by the orchestrator's
 * readers), each a record or the reason it is not one; a file with no record at all is an error.
 */
async function readLines(file: string, defaultFormat: ProofFormat): Promise<InputLine[]> {
  const lines: InputLine[] = [];
  (await readDatasetRows(localDatasetPlace(), file)).forEach(({ where, record: value }) => {
    const problems: string[] = [];
    const text = (key: string, fallback = ""): string => {
      const field = value[key];
      if (field === undefined || field === null) return fallback;
      if (typeof field !== "string") {
        problems.push(`"${key}" must be a string`);
        return fallback;
      }
      return field;
    };
    const name = text("name");
    const id = text("id", name);
    const label = name || id || where;
    const statement = text("statement", text("formal_statement"));
    const proof = text("proof");
    if (statement === "") problems.push('missing "statement" (or "formal_statement"): the Lean statement to prove');
    if (proof === "") problems.push('missing "proof": the proof body, e.g. "by simp", or a whole Lean file');
    const imports = value.imports ?? [];
    if (!Array.isArray(imports) || !imports.every((module) => typeof module === "string")) {
      problems.push('"imports" must be a list of module names, e.g. ["Mathlib"]');
    }
    const formatName = text("proof_format");
    const proofFormat = formatName === "" ? defaultFormat : PROOF_FORMATS[formatName];
    if (proofFormat === undefined) problems.push(`"proof_format" is "${formatName}"; expected body, whole_file or auto`);
    if (problems.length > 0) {
      lines.push({ label, id, name, problem: `${where}: ${problems.join("; ")}` });
      return;
    }
    lines.push({
      record: {
        id,
        name,
        label,
        statement,
        proof,
        context: text("context"),
        header: text("header"),
        imports: imports as string[],
        proofFormat: proofFormat!,
        where,
      },
    });
  });
  if (lines.length === 0) throw new Error(`${file}: no records`);
  return lines;
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
      proofFormat: record.proofFormat,
    },
    proof: record.proof,
    timeoutMs,
    requestId: record.id,
  };
}

type ResultLine = ReturnType<typeof toResultLine>;

/** The result line of a record the file itself got wrong: REJECTED before any check, the reason naming the field. */
function refusedLine(line: Extract<InputLine, { problem: string }>): ResultLine {
  return {
    id: line.id,
    name: line.name,
    verdict: Verdict[Verdict.REJECTED],
    decided_by: "input",
    reason: `invalid record: ${line.problem}`,
    theorem_error: "",
    axioms: [],
    goals: [],
    errors: 0,
    tactics: 0,
    tactics_valid_before_first_error: 0,
    lean_ms: 0,
    replay_ms: 0,
    total_ms: 0,
  };
}

/** The batch names an invalid item by its index in the call; the file's user knows it by its line. */
function reasonFor(record: ProofRecord, reason: string): string {
  const item = /^invalid item: items\[\d+\]\./u.exec(reason);
  return item ? `invalid record: ${record.where}: ${reason.slice(item[0].length)}` : reason;
}

function toResultLine(record: ProofRecord, result: VerifyResponse) {
  return {
    id: record.id,
    name: record.name,
    verdict: Verdict[result.verdict],
    decided_by: tierName(result.decidedBy),
    reason: reasonFor(record, result.reason),
    // Lean refused the theorem's own text (often a header without the imports it needs): no proof can be PROVED.
    theorem_error: result.theoremError,
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
