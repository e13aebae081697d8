// The group summary ScoreGroup returns: mean reward, Bessel-corrected standard
// deviation (0 for a group of one) and the fraction solved.

export interface GroupStats {
  mean: number;
  std: number;
  passRate: number;
}

export function groupStats(rewards: readonly number[], solved: readonly boolean[]): GroupStats {
  const n = rewards.length;
  const mean = rewards.reduce((a, b) => a + b, 0) / n;
  const std = n < 2 ? 0 : Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - 1));
  return { mean, std, passRate: solved.filter(Boolean).length / n };
}
