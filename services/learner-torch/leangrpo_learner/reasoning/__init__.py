"""The reasoning vocabulary (docs/concepts/reasoning-vocabulary.md): the map from reasoning ids to
their sources and its file, the markers, and the mask on completion token ids. Pure Python (no
torch), so the vLLM logits processor imports the same definition."""
