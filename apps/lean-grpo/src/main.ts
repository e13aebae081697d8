// lean-grpo: the command line of the mesh.
import { Command } from "commander";
import { describeCommandError } from "./process/command-error.js";
import { currentLogDir } from "./commands/run-logs.js";
import { serveCommand, type ServeCommandOptions } from "./commands/serve-command.js";
import { SERVICE_NAMES } from "./mesh/service-catalog.js";
import { registerVerifyCommand } from "./commands/verify-command.js";
import { registerAlgorithmsCommand } from "./commands/algorithms-command.js";
import { registerTrainCommand } from "./commands/train-command.js";
import { registerEvalCommand } from "./commands/eval-command.js";
import { registerExportCommand } from "./commands/export-command.js";
import { registerRunsCommand } from "./commands/runs-command.js";
import { registerSftCommand } from "./commands/sft-command.js";
import { registerDashboardCommand } from "./commands/dashboard-command.js";
import { registerConfigCommand } from "./commands/config-command.js";

const program = new Command()
  .name("lean-grpo")
  .description("GRPO-family reinforcement learning for Lean 4 theorem proving, as a gRPC service mesh");

program
  .command("serve")
  .description(`start one service (${SERVICE_NAMES.join(", ")}) or all of them on loopback`)
  .argument("<service>", `${SERVICE_NAMES.join(" | ")} | all`)
  .argument("[overrides...]", "dotted config overrides, e.g. server.port=50052 (for all: verifier.server.port=50052)")
  .option("-c, --config <file>", "YAML config file")
  .option("--host <host>", "address to bind (default 127.0.0.1)")
  .option("--port <port>", "port for a single service (0 picks a free one)")
  .option("--topology <file>", "with all: start replicas as separate processes, e.g. configs/mesh/topology-3-verifiers.yaml")
  .action(async (service: string, overrides: string[], options: ServeCommandOptions) => {
    await serveCommand(service, { ...options, overrides });
  });

registerVerifyCommand(program);
registerAlgorithmsCommand(program);
registerTrainCommand(program);
registerEvalCommand(program);
registerExportCommand(program);
registerRunsCommand(program);
registerSftCommand(program);
registerDashboardCommand(program);
registerConfigCommand(program);

try {
  await program.parseAsync();
} catch (error) {
  process.stderr.write(`lean-grpo: ${describeCommandError(error, currentLogDir())}\n`);
  process.exit(2);
}
