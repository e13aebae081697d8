"""LoRA adapters (PEFT layout and names) and their PEFT files."""
