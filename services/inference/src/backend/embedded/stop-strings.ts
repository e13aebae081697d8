// Stop strings for a backend that decodes token by token without knowing text: the
// completion is cut after the first token whose text completes a stop string, and
// that token and everything after it are dropped, as vLLM drops the stop string.
export function truncateAtStop(
  tokenIds: readonly number[],
  stops: readonly string[],
  decode: (ids: number[]) => string,
): { keep: number; stop: string } | undefined {
  if (stops.length === 0) return undefined;
  for (let end = 1; end <= tokenIds.length; end++) {
    const text = decode(tokenIds.slice(0, end));
    const stop = stops.find((s) => s.length > 0 && text.includes(s));
    if (stop !== undefined) return { keep: end - 1, stop };
  }
  return undefined;
}
