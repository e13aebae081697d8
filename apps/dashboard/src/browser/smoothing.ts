// Exponential moving average with TensorBoard's debiasing: weight 0 leaves the curve
// as it is, 0.99 nearly flattens it; early points are not dragged toward zero. Gaps
// (null) stay gaps and do not reset the average.
export function smooth(values: readonly (number | null)[], weight: number): (number | null)[] {
  if (!(weight >= 0 && weight < 1)) throw new RangeError(`smoothing weight must be in [0, 1), got ${weight}`);
  if (weight === 0) return [...values];
  let last = 0;
  let count = 0;
  return values.map((v) => {
    if (v === null || !Number.isFinite(v)) return null;
    last = last * weight + (1 - weight) * v;
    count++;
    return last / (1 - weight ** count);
  });
}

/** Series of different runs on one x axis: the union of their steps, null where a run has none. */
export function alignSeries(series: readonly [number[], (number | null)[]][]): [number[], ...(number | null)[][]] {
  const xs = [...new Set(series.flatMap(([x]) => x))].sort((a, b) => a - b);
  const columns = series.map(([x, y]) => {
    const at = new Map(x.map((step, i) => [step, y[i] ?? null]));
    return xs.map((step) => at.get(step) ?? null);
  });
  return [xs, ...columns];
}
