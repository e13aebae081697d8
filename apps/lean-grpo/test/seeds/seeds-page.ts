// docs/guide/seeds.md, rendered from the table seed-commands.spec.ts runs (seed-commands.ts)
// and what each command did here; the spec fails when the page is not what it renders.
import type { SeedCommand } from "./seed-commands.js";
import { SEEDS } from "../../src/config/seed-names.js";

export interface SeedOutcome {
  row: SeedCommand;
  /** What it does here: the keys it sets, the error, or the command to use instead. */
  outcome: string;
}

/** The same with seed 003's own default learning rate (bench/seeds/main.ts --arms seed003-lr). */
const LEARNS_LR = `

The learning rate is the shipped model's, from \`model=arith-tiny\` (1e-3, the README's), and a
learning rate on the command line wins over it as any key does. With seed 003's own default,
\`training.learning_rate=5e-6\` (\`--arms seed003-lr --steps 30\`, load average 2.5), the adapters of a
model this small do not move its greedy answers: 57.5 % at steps 0, 10, 20 and 30.`;

/** Seed 001's command as this page translates it, run once on the machine named (its held-out curve against the README's below). */
const LEARNS_001 = `\`\`\`sh
npx lean-grpo train examples/arith.jsonl --algorithm grpo --num-generations 8 eval.data=examples/arith-heldout.jsonl --steps 30
\`\`\`

names a data file and no config group. It asks the shipped model \`{problem}\`, the prompt its
directory says it was made for (\`models/arith-tiny/prompt_format.json\`:
[A model's prompt format](../concepts/prompt-format.md)), and trains with the learner settings of
\`model=arith-tiny\`, which naming its directory brings. Run once (2-core x86-64, Node 20,
2026-12-07, load average 25–29 from other work; 20 minutes at that load), held-out greedy
accuracy (200 problems) after steps 0, 10, 20 and 30: 57.5 %, 72.5 %, 76.5 %, 76.5 %, the README's
run's range (57.5 %, 73.0 %, 77.5 %, 76.0 % in the table below); its first step's mean reward was 0.375.
Before the prompt travelled with the model, the same command asked \`{problem}\\nPut the final
answer in \\boxed{}.\`, scored 1.0 % at every evaluation and its reward stayed near 0.`;

/** The measured comparison (bench/seeds/main.ts); its figures are the bench's output on the machine named. */
const LEARNS = `\`npx tsx bench/seeds/main.ts\` runs the README's command and a seed-003-style one, one after the
other on one machine (2-core x86-64, 2026-11-28, load average 8–16 from other work):

\`\`\`sh
npx lean-grpo train examples/arith.jsonl --config configs/train/arith.yaml                   # the README's
npx lean-grpo train dataset=arith training.per_device_train_batch_size=16 \\
  training.gradient_accumulation_steps=8 training.num_train_epochs=2                         # seed 003's names
\`\`\`

TRL's 16 × 8 completions a step are 16 prompts of 8, the README's batch, and two epochs of the
800 problems at 16 a step are its 100 steps; the prompt, the learner's settings, the reward and
the budget come from \`dataset=arith\` and the \`model=arith-tiny\` it chooses. Held-out greedy
accuracy (200 problems):

| after step | 0 | 10 | 20 | 30 | 40 | 50 | 60 | 70 | 80 | 90 | 100 |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| the README's command | 57.5 % | 73.0 % | 77.5 % | 76.0 % | 76.5 % | 77.0 % | 78.5 % | 75.5 % | 75.5 % | 77.0 % | 79.0 % |
| seed 003's names | 57.5 % | 74.5 % | 77.0 % | 77.5 % | 75.0 % | 75.5 % | 76.0 % | 78.0 % | 78.5 % | 75.5 % | 76.5 % |

Both start where the shipped model is (57.5 %) and level off between 75 % and 79 % within 20
steps: +21.5 and +19.0 points at step 100, 77.1 % and 76.9 % over the last five evaluations.
(The seed-003 run samples synchronously, the README's one step ahead, so their later steps sample
different completions.) Before \`dataset=arith\` chose the shipped model's prompt, the same command
got none of the held-out set right before training and every reward was 0. The test checks the
short form on every run: the seed-003 command above with its own overrides starts above 40 % on
40 held-out problems and trains its step on rewards that are not all 0.${LEARNS_LR}`;

/** Text in a table cell: HTML escaped (the page is compiled as a Vue template, where `<id>` would be an element), pipes escaped, on one line. */
const cell = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("|", "\\|").replaceAll("\n", "<br>");
const code = (text: string) => `<code>${cell(text)}</code>`;

export function seedsPage(outcomes: readonly SeedOutcome[]): string {
  const table = (kind: "command" | "setting") =>
    outcomes
      .filter(({ row }) => (row.kind ?? "command") === kind)
      .map(({ row, outcome }) => {
        const here = row.here === undefined ? "" : code(`lean-grpo train ${row.here}`) + (row.note ? `<br>${cell(row.note)}` : "");
        return `| ${row.seed} | ${code(row.written)} | ${here} | ${cell(outcome)} |`;
      });
  return `# Seeds' commands

lean-grpo grew from four projects (the seeds). Their users type their names, so \`lean-grpo train\`
accepts every flag, config key and config group the seeds document, with the meaning its seed
gives it, or refuses it before any service starts with an error that says what the seed meant
and what to type here. Every command of the seeds' READMEs is below, as written, and the settings
they document (a flag, a YAML key, their troubleshooting advice) on this project's files, each with
the \`lean-grpo train\` command that runs it here and what it does: the settings it changes from
\`lean-grpo train examples/arith.jsonl\`, or its error.

${Object.entries(SEEDS)
  .map(([seed, what]) => `- **${seed}**: ${what}`)
  .join("\n")}

The tables are generated by the test that runs them
(\`npx vitest run apps/lean-grpo/test/seed-commands.spec.ts\`): each command that runs trains one
step on the shipped model (\`models/arith-tiny\`) with one prompt and 8-token completions (on the
PyTorch learner where it says so); the settings it shows are the ones a full run uses. A command
that is refused is refused by \`lean-grpo train\`'s pre-flight, before any service starts, with exit
code 2. \`lean-grpo train --help\` lists the seeds' names beside ours, \`lean-grpo config NAME\` says
what one sets, and \`apps/lean-grpo/src/config/seed-names.ts\` is the one place they are mapped.

## What is checked before anything starts

\`lean-grpo train\` checks everything it can know before it starts a service, and exits 2 with what to
type instead: every key of every source (the seeds' and TRL's names included), each service's
section by that service's own schema (the PyTorch learner's \`services.learner.impl\`, \`python\`,
\`torchrun\` and \`torch.*\` too), the algorithm's name (in any case: \`-a DGPO\` is \`dgpo\`) and knobs
by the learner's rules, the run config, limits, dataset and held-out set as the orchestrator checks
them, a Lean REPL for a dataset of Lean theorems (\`services.verifier.repl.command\` or
\`LEAN_REPL_CMD\`), and every record's first prompt through the model's own tokenizer and chat
template: one its vocabulary cannot encode, or one that with \`training.max_tokens\` overruns the
model's context (\`max_position_embeddings\`; 256 tokens for the shipped model), is refused naming
the most \`training.max_tokens\` can be. It reports every problem it finds at once, one line each
naming its key: seed 004's full configuration with its advice for slow training (\`fp16: true\`) and
for memory (\`gradient_checkpointing: true\`) and its 2048-token \`max_new_tokens\` is refused once,
naming all three (below). A check that depends on another (the prompts on the model directory and
the dataset) is left out while that one fails, so one cause is said once.

The prompts it checks are the ones the run will send: every \`prompt.*\` key no source sets is the
model's own, from its directory's \`prompt_format.json\`
([A model's prompt format](../concepts/prompt-format.md)). A prompt key set to something the model
was not made for (a system turn for the shipped model) is kept, and named in one warning before
the run starts.

## Which source wins

Later wins, key by key, for every key, the seeds' names included: config groups (\`dataset=arith\`,
with the options their defaults lists choose, such as its \`model=arith-tiny\`) < the \`--config\` file
< \`LEANGRPO_TRAIN_*\` < flags < \`key=value\` on the command line. That is Hydra's order, where the
primary config overrides the groups it composes; a group typed on the command line whose value the
file replaces is noted before the run starts. A seed setting that becomes one of our keys (epochs
become \`training.steps\`, TRL's per-device batch \`training.batch_size\`, a precision
\`services.learner.torch.dtype\`) follows the same order against that key: \`--config
configs/train/arith.yaml training.num_train_epochs=1\` runs 50 steps, and the two are refused only when
given on the same layer (\`num_epochs=1 --steps 3\`).

## Names that differ

- \`-n\` is \`--num-generations\` (the group size), as in seed 001; the length of a run is \`--steps\`
  (\`training.steps\`). \`lean-grpo config NAME\` knows every flag by its key (\`lean-grpo config max_samples\`
  is \`dataset.max_train_samples\`).
- Config groups are read in any case, as \`-a\` reads algorithm names: \`algorithm=DAPO\` is
  \`configs/algorithm/dapo.yaml\`.
- A Hugging Face Hub id (\`model.name=Qwen/Qwen2.5-1.5B\`, \`base_model\`, \`dataset.name\`) is not
  downloaded: the error says how to fetch it into a local directory or file and point at it.
- TRL's \`per_device_train_batch_size\` × \`gradient_accumulation_steps\` counts completions;
  \`training.batch_size\` here counts prompts, so it becomes that product over
  \`training.num_generations\` (a product that is not a multiple is refused, as TRL refuses it).
  Epochs (\`num_train_epochs\`, \`num_epochs\`) become \`training.steps\`.
- TRL's and transformers' names (\`max_steps\`, \`warmup_ratio\`, \`lr_scheduler_type\`,
  \`weight_decay\`, \`max_grad_norm\`, \`save_steps\`, \`eval_steps\`, \`beta\`, \`epsilon\`, \`report_to\`,
  ..., at the top level or under \`training.\`) set the key that does the same here. Gradient
  checkpointing and bf16 are the PyTorch learner's (\`services.learner.impl=torch\`:
  \`services.learner.torch.gradient_checkpointing\`, \`services.learner.torch.dtype\`); with the default
  learner they are refused saying so. \`fp16\` is refused (the learners train in float32 or bf16), and
  \`logging_steps\` too: every step is logged.
- More of TRL's names act: \`loss_type\` chooses the algorithm of that loss (\`grpo\`, \`dr_grpo\` is
  \`drgrpo\`, \`dapo\`, \`cispo\`, \`sapo\`; \`bnpo\` is refused naming the nearest), \`use_vllm\` the
  inference backend (\`services.inference.backend\`), \`log_completions\` the completions kept a step
  (\`report.samples_per_step\`, 0 when false), and \`max_prompt_length\` is checked before the run
  starts (prompts are never cut: a longer one is refused, naming it). \`optim\` (an AdamW name),
  \`save_strategy\` and \`eval_strategy\` (\`steps\`) and \`tf32\` (false) are accepted where they
  describe what happens here and otherwise refused saying what does; \`save_total_limit\` (every
  checkpoint is kept) and \`logging_dir\` (TensorBoard writes in each run's folder) are refused
  saying why. \`lean-grpo config NAME\` says the same for each.
- \`dataset.system_prompt\` is \`prompt.system\`: a system turn before every prompt's user turn,
  rendered by the model's chat template (in a model without one, the prompt's first paragraph). The
  shipped model was warm-started on the bare question as the only turn, so a system turn is a
  prompt it has never seen: on the held-out set its greedy accuracy before training falls from
  57.5 % to 0 % with \`dataset.system_prompt="You are a helpful math assistant. Show your work."\`
  (it stops boxing its answers), and GRPO has no reward to learn from. The run starts, with a
  warning naming \`prompt.system\` and the model's own format; \`samples.jsonl\` and \`eval.jsonl\`
  show the prompt as the model read it, system turn included. Leave it unset with the
  shipped model (\`dataset=arith\` does); a chat model such as Qwen2.5-Instruct was trained with one.
- \`dataset=arith\` carries what the arithmetic data needs: its files, the binary reward and the
  32-token budget its longest worked answer takes, and (through its defaults list) \`model=arith-tiny\`,
  the shipped model with the learner settings the README's run uses; the prompt it answers comes
  with the model. A data file with no group (seed 001's commands) trains the shipped model the same
  way: see [the measurement](#does-seed-001-s-command-learn).
  Seed 003's overrides on it answer from step 0 (57.5 % held-out) and learn as the README's
  command does: see [the measurement](#does-a-seed-003-style-command-learn).
- Algorithm knobs of the seeds' own algorithms that the published algorithms do not have
  (DAPO \`population_size\`, GSPO \`consensus_weight\`, ...) or that cannot act (\`kl_estimator\`
  with Dr. GRPO's \`beta\` 0) are refused, naming what the seed meant and what to type here.
- The seeds' \`logging.*\` and \`report_to\` are experiment tracking: [Experiment tracking](./tracking.md).

## Does seed 001's command learn?

${LEARNS_001}

## Does a seed-003-style command learn?

${LEARNS}

## The commands

| seed | as written | here | what it does here |
|---|---|---|---|
${table("command").join("\n")}

## The seeds' settings on this project's files

| seed | as the seed writes it | here | what it does here |
|---|---|---|---|
${table("setting").join("\n")}
`;
}
