import { describe, expect, it } from "vitest";
import { EventQueue } from "../src/eval/event-queue.js";

describe("EventQueue", () => {
  it("yields what was pushed before and while it is read, in order, and ends at end()", async () => {
    const queue = new EventQueue<number>();
    queue.push(1);
    const read = (async () => {
      const got: number[] = [];
      for await (const n of queue.drain()) got.push(n);
      return got;
    })();
    await new Promise((r) => setTimeout(r, 5));
    queue.push(2);
    queue.push(3);
    await new Promise((r) => setTimeout(r, 5));
    queue.push(4);
    queue.end();
    expect(await read).toEqual([1, 2, 3, 4]);
  });
});
