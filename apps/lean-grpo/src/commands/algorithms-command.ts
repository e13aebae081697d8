// `lean-grpo algorithms`: the GRPO-family algorithms the learner implements, what each is
// for, and its algorithm_config knobs with their defaults. Asks a running learner (`--url`)
// over gRPC, or else the learner package's own ListAlgorithms handler in this process: a
// command that only reads starts no server.
import type { Command } from "commander";
import { toJson } from "@bufbuild/protobuf";
import { LearnerService, ListAlgorithmsResponseSchema, type ListAlgorithmsResponse } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { createServiceClient, loadConfig, callerAuth, envAuthToken } from "@lean-grpo/kit";
import { ALGORITHM_NAMES, LearnerConfigSchema, createLearnerService } from "@lean-grpo/learner";

export interface AlgorithmsCommandOptions {
  url?: string;
  json?: boolean;
}

const WIDTH = 100;

function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(indent + line);
  return lines;
}

/** The listing as plain text: per algorithm its name and title, what it is for, and a table of its knobs. */
export function formatAlgorithms(response: ListAlgorithmsResponse): string {
  const out: string[] = [];
  for (const algorithm of response.algorithms) {
    out.push(`${algorithm.name.padEnd(8)} ${algorithm.title}`);
    out.push(...wrap(algorithm.summary, WIDTH - 4, "    "));
    const keyWidth = Math.max(...algorithm.params.map((p) => p.name.length), 3);
    const defaultWidth = Math.max(...algorithm.params.map((p) => p.defaultValue.length), 7);
    out.push(`    ${"key".padEnd(keyWidth)}  ${"default".padEnd(defaultWidth)}  meaning`);
    for (const p of algorithm.params) {
      const allowed = p.allowedValues.length > 0 ? ` (${p.allowedValues.join(" | ")})` : "";
      const aliases = p.aliases.length > 0 ? ` [also accepted as: ${p.aliases.join(", ")}]` : "";
      const [first, ...rest] = wrap(p.description + allowed + aliases, WIDTH - keyWidth - defaultWidth - 8, "");
      out.push(`    ${p.name.padEnd(keyWidth)}  ${p.defaultValue.padEnd(defaultWidth)}  ${first ?? ""}`);
      for (const line of rest) out.push(`    ${" ".repeat(keyWidth + defaultWidth + 4)}${line}`);
    }
    out.push("");
  }
  return out.join("\n");
}

async function listAlgorithms(url: string | undefined): Promise<ListAlgorithmsResponse> {
  if (!url) {
    // The handler the learner serves, called directly: it reads the algorithm registry and needs no model.
    const learner = createLearnerService(loadConfig(LearnerConfigSchema, {}));
    return (await learner.impl.listAlgorithms!({} as never, {} as never)) as ListAlgorithmsResponse;
  }
  const { client, transport } = createServiceClient(LearnerService, { endpoints: [url], interceptors: callerAuth(envAuthToken()) });
  try {
    return await client.listAlgorithms({});
  } finally {
    transport.close();
  }
}

export function registerAlgorithmsCommand(program: Command): void {
  program
    .command("algorithms")
    .description(`list the GRPO-family algorithms (${ALGORITHM_NAMES.join(", ")}), what each is for, and their algorithm_config knobs`)
    .option("--url <url>", "a running learner, e.g. http://127.0.0.1:50054 (default: this install's learner, no server)")
    .option("--json", "print the ListAlgorithms response as JSON")
    .action(async (options: AlgorithmsCommandOptions) => {
      const response = await listAlgorithms(options.url);
      process.stdout.write(
        options.json ? `${JSON.stringify(toJson(ListAlgorithmsResponseSchema, response), null, 2)}\n` : `${formatAlgorithms(response)}\n`,
      );
    });
}
