import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { JsonLinesError, parseJsonLines, readJsonLines, readJsonObjects } from "../src/index.js";

describe("parseJsonLines", () => {
  it("numbers lines as an editor does, skipping blank ones and CRLF endings", () => {
    const lines = parseJsonLines('{"a":1}\r\n\n  \n[2]\n"x"\n');
    expect(lines).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 4, value: [2] },
      { line: 5, value: "x" },
    ]);
  });

  it("reports a line that is not JSON with its number instead of skipping it", () => {
    const lines = parseJsonLines('{"a":1}\n{"a":\n{"b":2}');
    expect(lines[1]).toMatchObject({ line: 2 });
    expect(lines[1]!.error).toMatch(/^not valid JSON/);
    expect(lines[2]).toEqual({ line: 3, value: { b: 2 } });
  });

  it("says where a line stopped being JSON without quoting it (a file's text never travels in an error)", () => {
    const lines = parseJsonLines('root:x:0:0:root:/root:/bin/bash\n{"secret": "TOKEN-123" oops}');
    expect(lines[0]!.error).toBe("not valid JSON");
    expect(lines[1]!.error).toBe("not valid JSON (at character 24)");
    for (const entry of lines) expect(entry.error).not.toMatch(/root|TOKEN|secret|oops/);
  });
});

describe("readJsonObjects", () => {
  it("names the source and line of the first line that is not an object", () => {
    expect(() => readJsonObjects('{"a":1}\n[1,2]', "data.jsonl")).toThrow(new JsonLinesError("data.jsonl", 2, "must be a JSON object"));
    expect(() => readJsonObjects('{"a":1}\nnope', "data.jsonl")).toThrow(/^data\.jsonl:2: not valid JSON/);
  });

  it("returns each record with its line", () => {
    expect(readJsonObjects('\n{"a":1}\n\n{"b":2}\n', "x")).toEqual([
      { line: 2, record: { a: 1 } },
      { line: 4, record: { b: 2 } },
    ]);
  });
});

describe("readJsonLines", () => {
  it("reads a file, and a missing one as empty only when asked", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "jsonl-"));
    const file = path.join(dir, "a.jsonl");
    await writeFile(file, '{"a":1}\n');
    expect(await readJsonLines(file)).toEqual([{ line: 1, value: { a: 1 } }]);
    expect(await readJsonLines(path.join(dir, "none.jsonl"), { missing: "empty" })).toEqual([]);
    await expect(readJsonLines(path.join(dir, "none.jsonl"))).rejects.toThrow(/ENOENT/);
  });
});
