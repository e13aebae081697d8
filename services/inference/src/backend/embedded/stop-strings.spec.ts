import { describe, expect, it } from "vitest";
import { truncateAtStop } from "./stop-strings.js";

const decode = (ids: number[]) => ids.map((i) => String.fromCharCode(i)).join("");
const ids = (s: string) => [...s].map((c) => c.charCodeAt(0));

describe("truncateAtStop", () => {
  it("drops the token that completes the first stop string and everything after", () => {
    expect(truncateAtStop(ids("abc\n\nxyz"), ["\n\n"], decode)).toEqual({ keep: 4, stop: "\n\n" });
    expect(truncateAtStop(ids("theorem ok := by"), [":=", "ok"], decode)).toEqual({ keep: 9, stop: "ok" });
  });

  it("leaves completions without a stop string alone", () => {
    expect(truncateAtStop(ids("abc"), ["z"], decode)).toBeUndefined();
    expect(truncateAtStop(ids("abc"), [], decode)).toBeUndefined();
  });
});
