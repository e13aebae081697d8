// Runs `work` over items with at most `concurrency` in flight and yields results as
// they finish, not in input order. The first failure ends the iteration (after
// which results still in flight are dropped without unhandled rejections).

type Settled<R> = { index: number; ok: true; value: R } | { index: number; ok: false; error: unknown };

export async function* inCompletionOrder<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): AsyncGenerator<R> {
  const running = new Map<number, Promise<Settled<R>>>();
  let next = 0;
  const launch = () => {
    const index = next++;
    running.set(
      index,
      work(items[index]!, index).then(
        (value): Settled<R> => ({ index, ok: true, value }),
        (error: unknown): Settled<R> => ({ index, ok: false, error }),
      ),
    );
  };
  while (next < items.length && running.size < concurrency) launch();
  while (running.size > 0) {
    const settled = await Promise.race(running.values());
    running.delete(settled.index);
    if (!settled.ok) throw settled.error;
    if (next < items.length) launch();
    yield settled.value;
  }
}
