"""The lean-grpo LearnerService in PyTorch (same contract and semantics as services/learner)."""
