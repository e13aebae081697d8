// A training batch the learner refuses; the message names the sample and the field.
export class SampleError extends Error {
  override readonly name = "SampleError";
}
