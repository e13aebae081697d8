// AdamW (Loshchilov & Hutter) exactly as torch.optim.AdamW updates a parameter: decoupled
// weight decay θ ← θ·(1 − lr·λ), then the bias-corrected Adam step
// θ ← θ − lr/(1 − β1^t) · m / (√v / √(1 − β2^t) + ε).
// Moments are held per key (PEFT tensor names), so that a checkpoint restores them into a
// fresh adapter whose tfjs variable names differ.
import * as tf from "@tensorflow/tfjs-core";

export interface AdamWSettings {
  beta1: number;
  beta2: number;
  epsilon: number;
  weightDecay: number;
}

/** What a checkpoint holds: the update count and both moments of every tensor. */
export interface AdamWState {
  step: number;
  firstMoments: Map<string, Float32Array>;
  secondMoments: Map<string, Float32Array>;
}

export interface ParameterUpdate {
  key: string;
  variable: tf.Variable;
  grad: tf.Tensor;
}

export class AdamW {
  private step = 0;
  private readonly first = new Map<string, tf.Variable>();
  private readonly second = new Map<string, tf.Variable>();

  constructor(readonly settings: AdamWSettings) {}

  get updates(): number {
    return this.step;
  }

  /** One update of every parameter with learning rate `lr`. */
  apply(parameters: readonly ParameterUpdate[], lr: number): void {
    this.step += 1;
    const { beta1, beta2, epsilon, weightDecay } = this.settings;
    const stepSize = lr / (1 - beta1 ** this.step);
    const correction2Sqrt = Math.sqrt(1 - beta2 ** this.step);
    for (const { key, variable, grad } of parameters) {
      const m = this.moment(this.first, key, variable);
      const v = this.moment(this.second, key, variable);
      tf.tidy(() => {
        m.assign(tf.add(m, tf.mul(tf.sub(grad, m), 1 - beta1)));
        v.assign(tf.add(tf.mul(v, beta2), tf.mul(tf.square(grad), 1 - beta2)));
        const decayed = tf.mul(variable, 1 - lr * weightDecay);
        const denominator = tf.add(tf.div(tf.sqrt(v), correction2Sqrt), epsilon);
        variable.assign(tf.sub(decayed, tf.mul(tf.div(m, denominator), stepSize)));
      });
    }
  }

  private moment(moments: Map<string, tf.Variable>, key: string, like: tf.Variable): tf.Variable {
    let moment = moments.get(key);
    if (!moment) {
      const zeros = tf.zerosLike(like);
      moment = tf.variable(zeros, false);
      zeros.dispose();
      moments.set(key, moment);
    }
    return moment;
  }

  state(): AdamWState {
    const read = (moments: Map<string, tf.Variable>) => new Map([...moments].map(([key, m]) => [key, m.dataSync() as Float32Array]));
    return { step: this.step, firstMoments: read(this.first), secondMoments: read(this.second) };
  }

  /** Replaces the state with a saved one; shapes are those of `shapes` (by key). */
  restore(state: AdamWState, shapes: ReadonlyMap<string, number[]>): void {
    this.dispose();
    this.step = state.step;
    for (const [target, source] of [
      [this.first, state.firstMoments],
      [this.second, state.secondMoments],
    ] as const) {
      for (const [key, data] of source) {
        const shape = shapes.get(key);
        if (!shape) throw new Error(`optimizer state holds "${key}", which the adapter lacks`);
        const value = tf.tensor(data, shape);
        target.set(key, tf.variable(value, false));
        value.dispose();
      }
    }
  }

  dispose(): void {
    for (const m of [...this.first.values(), ...this.second.values()]) m.dispose();
    this.first.clear();
    this.second.clear();
    this.step = 0;
  }
}
