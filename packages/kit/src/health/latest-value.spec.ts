import { describe, expect, it } from "vitest";
import { LatestValue } from "./latest-value.js";

async function drain<T>(values: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const value of values) seen.push(value);
  return seen;
}

describe("LatestValue", () => {
  it("keeps only the newest unread value and delivers it before ending", async () => {
    const mailbox = new LatestValue<number>();
    mailbox.put(1);
    mailbox.put(2);
    mailbox.close();
    expect(await drain(mailbox)).toEqual([2]);
  });

  it("wakes a waiting reader on put and on close", async () => {
    const mailbox = new LatestValue<string>();
    const read = drain(mailbox);
    await Promise.resolve();
    mailbox.put("a");
    await new Promise((resolve) => setTimeout(resolve, 0));
    mailbox.put("b");
    mailbox.close();
    expect(await read).toEqual(["a", "b"]);
  });
});
