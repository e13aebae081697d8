import { describe, expect, it } from "vitest";
import { splitCommand } from "./split-command.js";

describe("splitCommand", () => {
  it("splits words like a POSIX shell, without expansion", () => {
    expect(splitCommand("lake env /opt/repl/.lake/build/bin/repl")).toEqual(["lake", "env", "/opt/repl/.lake/build/bin/repl"]);
    expect(splitCommand("  a   b\tc \n")).toEqual(["a", "b", "c"]);
    expect(splitCommand(`node 'my dir/repl.js' "a \\"q\\" b" c\\ d '' $HOME`)).toEqual([
      "node",
      "my dir/repl.js",
      'a "q" b',
      "c d",
      "",
      "$HOME",
    ]);
    expect(splitCommand("")).toEqual([]);
  });

  it("refuses an unterminated quote", () => {
    expect(() => splitCommand("lake 'env")).toThrow("unterminated ' quote in command: lake 'env");
  });
});
