// How a model answers, by answer form, on an arithmetic JSONL: greedy as it chooses, greedy
// with each form forced (the completion started for it: `27 + 45:` worked out, `27 + 45 =`
// direct), and sampled at T=1 (what RL sees: the share of each form and how often it is right).
// Run it on a validation split, never on the held-out file, to design the warm start.
//   npx tsx scripts/arith/form-accuracy.ts --data FILE [--model DIR] [--samples 4] [--max-tokens 28]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { readJsonObjects } from "@lean-grpo/jsonl";
import { CausalLM, generate, ModelTokenizer, useBackend } from "@lean-grpo/lm";
import { answerForm, isBoxed, isRightNumber } from "./answer-form.js";
import { isCorrect, type ArithRecord } from "./greedy-accuracy.js";

const { values } = parseArgs({
  options: {
    model: { type: "string", default: "models/arith-tiny" },
    data: { type: "string" },
    samples: { type: "string", default: "4" },
    "max-tokens": { type: "string", default: "28" },
    show: { type: "string", default: "0" },
  },
});
if (!values.data) throw new Error("--data FILE is required (a validation split, not the held-out file)");
const records = readJsonObjects(readFileSync(values.data, "utf8"), values.data).map(({ record }) => record as unknown as ArithRecord);
await useBackend("auto");
const tokenizer = await ModelTokenizer.load(values.model);
const model = await CausalLM.load(values.model);
const maxNewTokens = Number(values["max-tokens"]);
const started = performance.now();

/** Completions of every record, each prompt followed by `prefix(record)` (kept in the returned text). */
async function complete(prefix: (r: ArithRecord) => string, temperature: number, n: number): Promise<string[][]> {
  const out: string[][] = records.map(() => []);
  const batch = 64;
  for (let first = 0; first < records.length; first += batch) {
    const slice = records.slice(first, first + batch);
    const prompts = slice.flatMap((r) => {
      const ids = [
        ...tokenizer.encodeChat([{ role: "user", content: r.problem }], { addGenerationPrompt: true }),
        ...tokenizer.encode(prefix(r), { addSpecialTokens: false }),
      ];
      return Array.from({ length: n }, () => ids);
    });
    const sequences = await generate(model, prompts, { maxNewTokens, temperature, seed: 7 });
    sequences.forEach((s, i) => {
      const row = first + Math.floor(i / n);
      out[row]!.push(prefix(records[row]!) + tokenizer.decode(s.tokenIds, { skipSpecialTokens: true }));
    });
  }
  return out;
}

const expression = (r: ArithRecord) => r.problem.replace(/^What is /, "").replace(/\?$/, "");
const summary = (texts: string[][]) => {
  const flat = texts.flatMap((t, i) => t.map((text) => ({ text, answer: records[i]!.answer, problem: records[i]!.problem })));
  const forms: Record<string, { count: number; correct: number; rightNumber: number; tokens: number }> = {};
  for (const { text, answer, problem } of flat) {
    const form = `${answerForm(text, problem)}${isBoxed(text) ? "" : "-plain"}`;
    forms[form] ??= { count: 0, correct: 0, rightNumber: 0, tokens: 0 };
    forms[form].count++;
    if (isCorrect(text, answer)) forms[form].correct++;
    if (isRightNumber(text, answer)) forms[form].rightNumber++;
    forms[form].tokens += tokenizer.encode(text, { addSpecialTokens: false }).length;
  }
  const round = (x: number) => Number(x.toFixed(3));
  return {
    n: flat.length,
    accuracy: round(flat.filter((f) => isCorrect(f.text, f.answer)).length / flat.length),
    right_number: round(flat.filter((f) => isRightNumber(f.text, f.answer)).length / flat.length),
    forms: Object.fromEntries(
      Object.entries(forms).map(([form, f]) => [
        form,
        {
          share: round(f.count / flat.length),
          accuracy: round(f.correct / f.count),
          right_number: round(f.rightNumber / f.count),
          tokens: round(f.tokens / f.count),
        },
      ]),
    ),
  };
};

const greedy = await complete(() => "", 0, 1);
for (let i = 0; i < Number(values.show) && i < records.length; i++) process.stderr.write(`${records[i]!.problem} -> ${greedy[i]![0]}\n`);
const result = {
  model: values.model,
  data: values.data,
  problems: records.length,
  greedy: summary(greedy),
  forced_worked: summary(await complete((r) => `${expression(r)}:`, 0, 1)),
  forced_direct: summary(await complete((r) => `${expression(r)} =`, 0, 1)),
  sampled: summary(await complete(() => "", 1, Number(values.samples))),
  seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
};
process.stdout.write(`${JSON.stringify(result, null, 1)}\n`);
