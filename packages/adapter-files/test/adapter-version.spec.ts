import { describe, expect, it } from "vitest";
import { adapterName, AdapterVersionError, parseAdapterName, versionFromProto, versionToProto } from "../src/index.js";

describe("adapter identity", () => {
  it("names a version policy-v<N> and reads the name back", () => {
    expect(adapterName(12)).toBe("policy-v12");
    expect(parseAdapterName("policy-v12")).toBe(12);
    expect(parseAdapterName("policy-v0")).toBe(0);
    for (const version of [0, 1, 9, 10, 123456789, Number.MAX_SAFE_INTEGER]) expect(parseAdapterName(adapterName(version))).toBe(version);
  });

  it("reads no version from names adapterName does not produce", () => {
    for (const name of [
      "",
      "policy-v",
      "policy-v01",
      "policy-v1.5",
      "policy-v-1",
      "eval-policy-v3",
      "policy-v3/",
      "xpolicy-v3",
      "policy-v99999999999999999",
    ]) {
      expect(parseAdapterName(name), name).toBeUndefined();
    }
  });

  it("refuses versions that are not non-negative safe integers", () => {
    for (const version of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => adapterName(version)).toThrow(AdapterVersionError);
      expect(() => versionToProto(version)).toThrow(/is not a non-negative integer/);
    }
  });

  it("converts between the contract's uint64 and a number without losing a version", () => {
    expect(versionToProto(7)).toBe(7n);
    expect(versionFromProto(7n)).toBe(7);
    expect(versionFromProto(BigInt(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => versionFromProto(BigInt(Number.MAX_SAFE_INTEGER) + 1n)).toThrow(
      /adapter version 9007199254740992 is out of range: versions are integers from 0 to 9007199254740991/,
    );
    expect(() => versionFromProto(-1n)).toThrow(AdapterVersionError);
  });
});
