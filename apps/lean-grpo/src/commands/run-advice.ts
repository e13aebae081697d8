// What to do after a run that did not complete, from its state and whether it saved a
// checkpoint: resuming is offered only when there is something to resume from.
import { RunState, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";

export function runAdvice(run: Run, checkpointed: boolean): string | undefined {
  const resume = `lean-grpo train --resume ${run.id}`;
  const from = `continues from the checkpoint of step ${run.lastCheckpointStep}`;
  switch (run.state) {
    case RunState.COMPLETED:
      return undefined;
    case RunState.STOPPED:
      return checkpointed ? `${resume} ${from}` : "nothing was checkpointed; start a new run";
    case RunState.FAILED:
      if (!checkpointed || run.lastCheckpointStep === 0n)
        return "fix the cause named in the error and start a new run (no step was checkpointed, so there is nothing to resume)";
      return `fix the cause named in the error, then ${resume} ${from}`;
    default:
      return undefined;
  }
}
