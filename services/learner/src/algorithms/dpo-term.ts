// DGPO's pairwise DPO term (see dgpo.ts): for each (best, worst) pair of a group,
// −log σ(β·[(Σ logp − Σ ref)(best) − (Σ logp − Σ ref)(worst)]), summed here over the pairs
// of this micro-batch and divided by the step's pair count. −log σ(z) is written as
// softplus(−z) = max(−z, 0) + log(1 + exp(−|z|)), stable for any z.
import * as tf from "@tensorflow/tfjs-core";

export interface PreferencePair {
  /** Rows of the micro-batch. */
  best: number;
  worst: number;
}

/** Best and worst completion (first on ties) of each group with a reward spread. */
export function preferencePairs(rewards: readonly number[], groupIds: readonly string[]): PreferencePair[] {
  const members = new Map<string, number[]>();
  groupIds.forEach((g, i) => {
    const list = members.get(g);
    if (list) list.push(i);
    else members.set(g, [i]);
  });
  const pairs: PreferencePair[] = [];
  for (const rows of members.values()) {
    let best = rows[0]!;
    let worst = rows[0]!;
    for (const row of rows) {
      if (rewards[row]! > rewards[best]!) best = row;
      if (rewards[row]! < rewards[worst]!) worst = row;
    }
    if (rewards[best]! !== rewards[worst]!) pairs.push({ best, worst });
  }
  return pairs;
}

/**
 * Pairs among the rows that stay in the loss: a completion masked out of the policy term
 * (truncated, with mask_truncated_completions) takes no part in the pair term either, so
 * a cut-off answer is never the "best" or "worst" the policy is pushed towards or from.
 * Rows index `rows`.
 */
export function livePreferencePairs(rows: readonly { live: boolean; example: { reward: number; groupId: string } }[]): PreferencePair[] {
  const live = rows.flatMap((r, i) => (r.live ? [i] : []));
  return preferencePairs(
    live.map((i) => rows[i]!.example.reward),
    live.map((i) => rows[i]!.example.groupId),
  ).map((p) => ({ best: live[p.best]!, worst: live[p.worst]! }));
}

export function dpoPairLoss(
  logp: tf.Tensor2D,
  ref: tf.Tensor2D,
  mask: tf.Tensor2D,
  pairs: readonly PreferencePair[],
  beta: number,
  totalPairs: number,
): tf.Scalar {
  if (pairs.length === 0) return tf.scalar(0);
  // Implicit reward of each row: Σ_t (logp − ref) over its completion.
  const implicit = tf.reshape(tf.sum(tf.mul(tf.sub(logp, ref), mask), 1), [1, -1]);
  // best − worst per pair as a ±1 selection matrix [pairs, b]: gather has no gradient on wasm.
  const rows = logp.shape[0];
  const selection = new Float32Array(pairs.length * rows);
  pairs.forEach((p, k) => {
    selection[k * rows + p.best] = 1;
    selection[k * rows + p.worst] = -1;
  });
  const margin = tf.sum(tf.mul(implicit, tf.tensor2d(selection, [pairs.length, rows])), 1);
  const z = tf.mul(margin, beta);
  const softplusNegZ = tf.add(tf.maximum(tf.neg(z), 0), tf.log(tf.add(tf.exp(tf.neg(tf.abs(z))), 1)));
  return tf.div(tf.sum(softplusNegZ), totalPairs) as tf.Scalar;
}
