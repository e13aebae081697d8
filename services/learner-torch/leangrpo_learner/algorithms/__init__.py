"""The GRPO family (grpo, drgrpo, dapo, gspo, dgpo): parameters, loss settings and losses,
ported from services/learner/src/algorithms so that names, defaults, messages and numbers agree."""
