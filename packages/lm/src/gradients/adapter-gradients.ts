// Gradients of a loss with respect to trainable variables, without leaking tensors when the
// loss throws (a deadline abort between layers, a bad input found late, a kernel error).
//
// Why this wrapper: while tf.variableGrads records, every op keeps clones of the tensors
// its gradient needs on the engine's tape; they are released only by a finished backward
// pass. An exception in the forward or backward pass skips that, and the next call
// starts a new tape over the old one, so the clones leak for good (learner-facts §1:
// 350–380 tensors per failed step). On failure we release the tape ourselves; the outer
// tidy disposes the loss value when the backward pass is what failed.
import * as tf from "@tensorflow/tfjs-core";
import "../backend/register-gradients.js";

export interface LossGradients {
  /** The loss value (a scalar tensor the caller disposes). */
  value: tf.Scalar;
  /** Gradient of each variable by variable name (the caller disposes them). */
  grads: tf.NamedTensorMap;
}

function releaseAbandonedTape(): void {
  const state = tf.engine().state;
  if (state.gradientDepth !== 0 || !state.activeTape) return;
  for (const node of state.activeTape) {
    for (const tensor of node.saved ?? []) tensor.dispose();
  }
  state.activeTape = null as unknown as typeof state.activeTape;
}

export function lossGradients(loss: () => tf.Scalar, variables: tf.Variable[]): LossGradients {
  try {
    return tf.tidy(() => tf.variableGrads(loss, variables));
  } catch (error) {
    releaseAbandonedTape();
    throw error;
  }
}
