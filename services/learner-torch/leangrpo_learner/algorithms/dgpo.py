"""DGPO as the seed names it: GRPO plus, per group, a DPO term between the best and the worst
completion against the reference, weighted by dpo_coef (see dpo_term.py)."""
from .algorithm import Algorithm
from .common_parameters import common_parameters, common_settings
from .grpo import GRPO_DEFAULTS
from .parameters import ParameterSpec

dgpo = Algorithm(
    name="dgpo",
    title="GRPO with a Direct (DPO) pairwise preference term",
    summary="GRPO plus, per group, a DPO loss between the best and the worst completion against the reference: "
    "a sharper contrast when a group holds both a proof and a failure.",
    parameters=[
        *common_parameters(**GRPO_DEFAULTS),
        ParameterSpec("use_dpo_loss", "boolean", True, "add the pairwise DPO term"),
        ParameterSpec("dpo_beta", "number", 0.1, "β of the DPO term (scale of the implicit reward)", above=0),
        ParameterSpec("dpo_coef", "number", 0.5, "weight of the DPO term added to the GRPO loss", min=0),
    ],
    settings=lambda values: common_settings(values, dpo_coef=values["dpo_coef"] if values["use_dpo_loss"] else 0.0, dpo_beta=values["dpo_beta"]),
)
