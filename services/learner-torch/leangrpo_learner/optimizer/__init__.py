"""torch.optim.AdamW with global-norm clipping and transformers' learning-rate schedules."""
