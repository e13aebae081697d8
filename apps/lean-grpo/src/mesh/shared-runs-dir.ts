// A learner that shares the orchestrator's filesystem (`train`, `serve all`) writes each
// run's checkpoints into the run's own directory: the orchestrator names them relative to
// the learner's checkpoint_dir (`<run id>/checkpoints/step-<N>`, RunOutputs.learnerCheckpoint),
// so checkpoint_dir is set to the orchestrator's runs_dir. A learner elsewhere keeps its
// own checkpoint_dir, and the checkpoints stay on its side.
export function shareRunsDir(learner: { checkpoint_dir: string }, orchestrator: { runs_dir: string }): void {
  learner.checkpoint_dir = orchestrator.runs_dir;
}
