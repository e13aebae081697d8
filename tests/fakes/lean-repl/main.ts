// A stand-in for leanprover-community/repl, for tests and benchmarks: a separate
// process speaking the REPL's protocol on stdin/stdout (a request is JSON followed
// by a blank line; an answer is JSON followed by a blank line; unparsable input is
// fatal, with a message on stderr, as in the real REPL).
//
//   node --import tsx tests/fakes/lean-repl/main.ts --replay transcripts/NAME.in [--replay ...]
//     answers each request with the transcript's recorded answer, verbatim, after
//     checking that the request is the recorded one;
//   node --import tsx tests/fakes/lean-repl/main.ts --rules rules.json [--log requests.jsonl]
//     answers by rules (rules.ts) with env and proof-state ids kept as the REPL keeps
//     them, and misbehaves on request (slow, hang, crash, garbage, grow, stderr).
// Without a matching rule, a command with no env (a header) gets a fresh env and
// `#print axioms NAME` is answered from the theorems rules declared; anything else
// is a script error: a message on stderr and exit 1.
import { appendFileSync, readFileSync } from "node:fs";
import { isDeepStrictEqual, parseArgs } from "node:util";
import { findRule, type Fault, type ParsedRequest, type Rule, type RulesFile } from "./rules.js";
import { ReplState } from "./repl-state.js";
import { DEFAULT_TOKEN_TABLE } from "./token-table.js";
import { splitRequests, splitResponses, TRANSCRIPTS_DIR, transcriptResponse } from "./transcripts.js";

const { values } = parseArgs({
  options: {
    replay: { type: "string", multiple: true },
    rules: { type: "string" },
    log: { type: "string" },
    transcripts: { type: "string", default: TRANSCRIPTS_DIR },
  },
});

/** What the real REPL does with input it cannot use: an uncaught exception on stderr, and exit. */
function fatal(message: string): never {
  process.stderr.write(`uncaught exception: ${message}\n`);
  process.exit(1);
}

function write(text: string): Promise<void> {
  return new Promise((resolve) => process.stdout.write(text, () => resolve()));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers one query (the text the REPL assembled); resolves when the answer is written. */
type Responder = (query: string) => Promise<void>;

function replayResponder(files: readonly string[]): Responder {
  const script = files.flatMap((file) => {
    const requests = splitRequests(readFileSync(file, "utf8"));
    const responses = splitResponses(readFileSync(file.replace(/\.in$/, ".expected.out"), "utf8"));
    return requests.map((request, i) => ({ file, request: JSON.parse(request) as unknown, response: responses[i]! }));
  });
  let next = 0;
  return async (query) => {
    const step = script[next++] ?? fatal(`stand-in: request #${next} is past the end of the replayed transcripts`);
    if (!isDeepStrictEqual(parseQuery(query), step.request)) {
      fatal(
        `stand-in: request #${next} is not the one recorded in ${step.file}:\n  got      ${query}\n  expected ${JSON.stringify(step.request)}`,
      );
    }
    await write(`${step.response}\n\n`);
  };
}

function rulesResponder(file: string, transcriptsDir: string, logFile: string | undefined): Responder {
  const script = JSON.parse(readFileSync(file, "utf8")) as RulesFile;
  const state = new ReplState();
  const retained: Buffer[] = [];
  return async (query) => {
    const request = readRequest(parseQuery(query));
    if (logFile) appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, request })}\n`);
    const rule = findRule(script.rules, request);
    const answer = answerFor(request, rule, state, transcriptsDir, script.tokenTable);
    if (script.delayMs) await sleep(script.delayMs);
    await deliver(JSON.stringify(answer, null, 1), rule?.fault, retained);
  };
}

function answerFor(
  request: ParsedRequest,
  rule: Rule | undefined,
  state: ReplState,
  transcriptsDir: string,
  tokenTable: RulesFile["tokenTable"],
): Record<string, unknown> {
  if (request.kind === "command") {
    if (request.env !== undefined && !state.knowsEnv(request.env)) return { message: "Unknown environment." };
    const tableAnswer = request.env !== undefined ? tokenTableAnswer(request.cmd, tokenTable) : undefined;
    if (tableAnswer) return state.commandResponse(tableAnswer, request.env, request.cmd);
    if (!rule) {
      const axioms = state.printAxioms(request.cmd, request.env);
      if (axioms) return axioms;
      if (request.env === undefined) return state.commandResponse({}, undefined, request.cmd);
      fatal(`stand-in: no rule matches the command ${JSON.stringify(request.cmd)}`);
    }
    const declares = rule.declares === undefined ? undefined : [rule.declares].flat();
    return state.commandResponse(replyBody(rule, transcriptsDir) ?? {}, request.env, request.cmd, declares);
  }
  if (!state.knowsProofState(request.proofState)) return { message: "Unknown proof state." };
  if (!rule) fatal(`stand-in: no rule matches the tactic ${JSON.stringify(request.tactic)}`);
  const body = replyBody(rule, transcriptsDir) ?? fatal(`stand-in: the rule for tactic ${JSON.stringify(request.tactic)} has no reply`);
  // A REPL error answer ({"message": ...}) creates no proof state.
  return "message" in body ? body : state.proofStepResponse(body);
}

/**
 * Lean evaluating the verifier's token-table query (`#eval` of getTokenTable and the
 * command category's leading table): an info message with what the query logs — its
 * `logInfo m!"PREFIX{answer.compress}"` prefix, then the table as JSON — or, where
 * the rules say this Lean lacks that API, the elaboration error Lean would give.
 */
function tokenTableAnswer(cmd: string, table: RulesFile["tokenTable"]): Record<string, unknown> | undefined {
  if (!cmd.startsWith("#eval") || !cmd.includes("getTokenTable")) return undefined;
  const pos = { line: 1, column: 0 };
  if (table === false) {
    return { messages: [{ severity: "error", pos, endPos: pos, data: "unknown constant 'Lean.Parser.getTokenTable'" }] };
  }
  const prefix = /logInfo m!"([^"{]*)\{answer\.compress\}"/u.exec(cmd)?.[1];
  if (prefix === undefined) return { messages: [{ severity: "error", pos, endPos: pos, data: "stand-in: the query logs no answer" }] };
  const { tokens, commands } = table ?? DEFAULT_TOKEN_TABLE;
  return { messages: [{ severity: "info", pos, endPos: pos, data: `${prefix}${JSON.stringify({ tokens, commands })}` }] };
}

function replyBody(rule: Rule, transcriptsDir: string): Record<string, unknown> | undefined {
  if (!rule.reply) return undefined;
  if ("json" in rule.reply) return rule.reply.json;
  return transcriptResponse(rule.reply.transcript, rule.reply.response, transcriptsDir) as Record<string, unknown>;
}

async function deliver(text: string, faults: Fault | Fault[] | undefined, retained: Buffer[]): Promise<void> {
  for (const fault of [faults ?? []].flat()) {
    if (!(await misbehave(text, fault, retained))) return;
  }
  await write(`${text}\n\n`);
}

/** Applies one fault; false when it took the place of the answer. */
async function misbehave(text: string, fault: Fault, retained: Buffer[]): Promise<boolean> {
  switch (fault.kind) {
    case "slow":
      await sleep(fault.ms);
      break;
    case "hang":
      hanging = true;
      // At EOF (the client is gone) a hung REPL is abandoned.
      if (stdinEnded) process.exit(0);
      return new Promise(() => {});
    case "crash":
      await write(text.slice(0, Math.floor(text.length / 2)));
      return process.exit(1);
    case "garbage":
      await write(`${fault.text ?? "\u0007PANIC: stand-in garbage, not JSON {"}\n\n`);
      return false;
    case "grow":
      // Filled, so the pages are resident, not just reserved.
      retained.push(Buffer.alloc(fault.mb * 1024 * 1024, 1));
      break;
    case "stderr":
      process.stderr.write(`${fault.text}\n`);
      break;
  }
  return true;
}

function parseQuery(query: string): unknown {
  try {
    return JSON.parse(query);
  } catch (error) {
    fatal(`{"message": "Could not parse JSON:\\n${String(error)}"}`);
  }
}

function readRequest(value: unknown): ParsedRequest {
  const request = value as Record<string, unknown>;
  if (typeof request.tactic === "string" && Number.isInteger(request.proofState)) {
    return { kind: "tactic", tactic: request.tactic, proofState: request.proofState as number };
  }
  if (typeof request.cmd === "string" && (request.env === undefined || Number.isInteger(request.env))) {
    return { kind: "command", cmd: request.cmd, env: request.env as number | undefined };
  }
  fatal(`{"message": "Could not parse as a valid JSON command:\\n${JSON.stringify(value)}"}`);
}

const responder = values.replay
  ? replayResponder(values.replay)
  : values.rules
    ? rulesResponder(values.rules, values.transcripts, values.log)
    : fatal("stand-in: give --replay FILE.in (repeatable) or --rules RULES.json");

let hanging = false;
let stdinEnded = false;
let queue = Promise.resolve();
let lines: string[] = [];
let partial = "";

// The REPL reads lines until a blank one, right-trims each, and joins them.
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  const parts = (partial + chunk).split("\n");
  partial = parts.pop()!;
  for (const line of parts) {
    if (line.trim() !== "") {
      lines.push(line.trimEnd());
      continue;
    }
    if (lines.length === 0) continue;
    const query = lines.join("");
    lines = [];
    // The REPL skips queries that start like a comment, without answering.
    if (query.startsWith("#") || query.startsWith("--")) continue;
    queue = queue.then(() => responder(query));
  }
});
process.stdin.on("end", () => {
  stdinEnded = true;
  if (partial.trim() !== "") lines.push(partial.trimEnd());
  if (lines.length > 0) {
    const query = lines.join("");
    queue = queue.then(() => responder(query));
  }
  // At EOF the REPL finishes what it read and exits.
  if (hanging) process.exit(0);
  void queue.then(() => process.exit(0));
});
