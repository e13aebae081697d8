// Held-out greedy accuracy of a model directory on an arithmetic JSONL.
//   npx tsx scripts/arith/eval-greedy.ts [--model models/arith-tiny] [--data examples/arith-heldout.jsonl] [--show N]
// (32 new tokens: the longest worked-out answer is 31 with its end token)
import { readFileSync } from "node:fs";
import { readJsonObjects } from "@lean-grpo/jsonl";
import { parseArgs } from "node:util";
import { CausalLM, ModelTokenizer, useBackend } from "@lean-grpo/lm";
import { answerForm } from "./answer-form.js";
import { greedyAccuracy, type ArithRecord } from "./greedy-accuracy.js";

const { values } = parseArgs({
  options: {
    model: { type: "string", default: "models/arith-tiny" },
    data: { type: "string", default: "examples/arith-heldout.jsonl" },
    show: { type: "string", default: "5" },
  },
});
const records = readJsonObjects(readFileSync(values.data, "utf8"), values.data).map(({ record }) => record as unknown as ArithRecord);
await useBackend("auto");
const tokenizer = await ModelTokenizer.load(values.model);
const model = await CausalLM.load(values.model);
const started = performance.now();
const result = await greedyAccuracy(model, tokenizer, records);
for (let i = 0; i < Number(values.show) && i < records.length; i++) {
  process.stderr.write(`${records[i]!.problem} (${records[i]!.answer}) -> ${JSON.stringify(result.completions[i])}\n`);
}
process.stdout.write(
  `${JSON.stringify({
    model: values.model,
    data: values.data,
    accuracy: result.accuracy,
    correct: result.correct,
    total: result.total,
    boxed: result.boxed,
    right_number: result.rightNumber,
    worked: result.completions.filter((c, i) => answerForm(c, records[i]!.problem) === "worked").length,
    seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
  })}\n`,
);
