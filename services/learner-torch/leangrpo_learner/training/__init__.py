"""One training step: validation, prepared batches, micro-batches, gradients, metrics, checkpoints."""
