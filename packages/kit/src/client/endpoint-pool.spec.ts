import { afterEach, describe, expect, it, vi } from "vitest";
import { EndpointPool } from "./endpoint-pool.js";

// Nothing listens on these: the pool opens connections only when a call is made.
const urls = ["http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3"];
let pool: EndpointPool;

afterEach(() => pool.close());

function poolOf(list: string[]): EndpointPool {
  pool = new EndpointPool({});
  pool.set(list);
  return pool;
}

describe("EndpointPool", () => {
  it("picks in round-robin order", () => {
    poolOf(urls);
    expect(Array.from({ length: 6 }, () => pool.pick().url)).toEqual([...urls, ...urls]);
  });

  it("skips endpoints cooling off, and tries them again afterwards", () => {
    vi.useFakeTimers();
    try {
      poolOf(urls);
      pool.markDown(pool.pick(), 1000);
      expect(Array.from({ length: 4 }, () => pool.pick().url)).toEqual([urls[1], urls[2], urls[1], urls[2]]);
      vi.advanceTimersByTime(1000);
      expect(Array.from({ length: 3 }, () => pool.pick().url).sort()).toEqual(urls);
    } finally {
      vi.useRealTimers();
    }
  });

  it("still returns an endpoint, other than the one that just failed, when all are cooling off", () => {
    poolOf(urls);
    const failed = pool.pick();
    for (let i = 0; i < urls.length; i++) pool.markDown(pool.pick(), 1000);
    const picked = new Set(Array.from({ length: 6 }, () => pool.pick(failed).url));
    expect(picked).toEqual(new Set([urls[1], urls[2]]));
  });

  it("keeps the connections of URLs that stay and closes a removed one once its calls end", () => {
    poolOf(urls.slice(0, 2));
    const staying = pool.pick();
    const leaving = pool.pick();
    const abort = vi.spyOn(leaving.session, "abort");
    const end = pool.begin(leaving);

    pool.set([staying.url, urls[2]!]);

    expect(pool.urls()).toEqual([staying.url, urls[2]]);
    expect([pool.pick(), pool.pick()]).toContain(staying);
    expect(abort).not.toHaveBeenCalled();
    end(false);
    expect(abort).toHaveBeenCalledTimes(1);
    expect(pool.stats()[leaving.url]).toEqual({ calls: 1, failures: 0 });
  });
});
