// Whole-file validation of Lean and math JSONL: every accepted shape maps onto a Theorem,
// and a malformed record stops the load with its line number and field.
import { describe, expect, it } from "vitest";
import { ProofFormat, TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { DatasetError } from "../src/data/dataset-error.js";
import { parseDataset } from "../src/data/load-dataset.js";

const jsonl = (...records: unknown[]) => records.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n");

describe("parseDataset", () => {
  it("reads seed Lean records, miniF2F records and both math shapes", () => {
    const theorems = parseDataset(
      jsonl(
        { name: "add_zero", statement: "theorem add_zero (n : Nat) : n + 0 = n := by sorry", imports: ["Mathlib"], context: "open Nat" },
        {
          id: "mathd_algebra_10",
          formal_statement: "theorem mathd_algebra_10 : (2:ℝ) + 2 = 4 := sorry",
          header: "import Mathlib\n",
          informal_stmt: "Show 2+2=4",
        },
        "",
        { problem: "2+3", answer: 5, source: "gen" },
        { question: "7*6", ground_truth: "42", difficulty: 0.3 },
      ),
      "t.jsonl",
    );
    expect(theorems.map((t) => t.id)).toEqual(["add_zero", "mathd_algebra_10", "line-4", "line-5"]);
    expect(theorems[0]).toMatchObject({
      statement: "theorem add_zero (n : Nat) : n + 0 = n",
      imports: ["Mathlib"],
      context: "open Nat",
      kind: TaskKind.LEAN_PROOF,
    });
    expect(theorems[1]).toMatchObject({
      statement: "theorem mathd_algebra_10 : (2:ℝ) + 2 = 4",
      header: "import Mathlib\n",
      informalStatement: "Show 2+2=4",
    });
    expect(theorems[2]).toMatchObject({ informalStatement: "2+3", answer: "5", kind: TaskKind.MATH_ANSWER, metadata: { source: "gen" } });
    expect(theorems[3]).toMatchObject({ informalStatement: "7*6", answer: "42", difficulty: 0.3 });
  });

  it("reads a Lean record's proof_format, and names the field when it is none of body, whole_file, auto", () => {
    const [wholeFile, unset] = parseDataset(
      jsonl({ name: "a", statement: "theorem a : True", proof_format: "whole_file" }, { name: "b", statement: "theorem b : True" }),
      "t.jsonl",
    );
    expect(wholeFile!.proofFormat).toBe(ProofFormat.WHOLE_FILE);
    expect(unset!.proofFormat).toBe(ProofFormat.UNSPECIFIED);
    expect(unset!.metadata).toEqual({});
    expect(() => parseDataset(jsonl({ name: "a", statement: "theorem a : True", proof_format: "file" }), "t.jsonl")).toThrow(
      /line 1, field "proof_format": expected one of body, whole_file, auto/,
    );
  });

  it("reports every bad record with its line and field, and loads nothing", () => {
    const text = jsonl(
      { problem: "1+1", answer: "2" },
      "{not json",
      { problem: "2+2" },
      { name: "x", statement: 7 },
      { question: "q", ground_truth: "1", difficulty: 3 },
      { title: "nothing here" },
      { problem: "1+1", answer: "2", id: "line-1" },
    );
    let error: DatasetError | undefined;
    try {
      parseDataset(text, "bad.jsonl");
    } catch (e) {
      error = e as DatasetError;
    }
    expect(error).toBeInstanceOf(DatasetError);
    expect(error!.issues.map((i) => [i.line, i.field])).toEqual([
      [2, ""],
      [3, "answer"],
      [4, "statement"],
      [5, "difficulty"],
      [6, ""],
      [7, "id"],
    ]);
    expect(error!.message).toContain('line 3, field "answer": is missing');
    expect(error!.message).toContain("accepted records: name + statement (Lean)");
    expect(error!.message).toContain("nothing was loaded");
  });

  it("refuses an empty file", () => {
    expect(() => parseDataset("\n\n", "empty.jsonl")).toThrow(/has no records/);
  });
});

describe("dataset error wording", () => {
  it("says in one line which line and field is wrong when there is one problem", () => {
    expect(() => parseDataset('{"problem": "1+1"}\n', "one.jsonl")).toThrow(
      /^dataset one\.jsonl, line 1, field "answer": is missing; nothing was loaded$/,
    );
  });

  it("lists every bad line when there are several", () => {
    expect(() => parseDataset('{"problem": "1+1"}\nnot json\n{"problem": "2+2", "answer": 4}\n', "two.jsonl")).toThrow(
      /^dataset two\.jsonl has 2 bad records or fields; nothing was loaded:\n {2}line 1, field "answer": is missing\n {2}line 2: /,
    );
  });
});
