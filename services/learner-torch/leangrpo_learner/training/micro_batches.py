"""Cuts a step's rows into micro-batches whose padded size (rows × longest prompt + completion)
stays within a token budget; groups are never split (DGPO's pair term needs a group's best and
worst in one pass). A group larger than the budget is a micro-batch of its own."""
from __future__ import annotations

from .prepared_batch import PreparedRow


def padded_tokens(rows: list[PreparedRow]) -> int:
    return len(rows) * max((len(r.example.prompt_ids) + len(r.example.completion_ids) for r in rows), default=0)


def group_rows(rows: list[PreparedRow]) -> list[list[PreparedRow]]:
    groups: dict[str, list[PreparedRow]] = {}
    for row in rows:
        groups.setdefault(row.example.group_id, []).append(row)
    return list(groups.values())


def micro_batches(rows: list[PreparedRow], token_budget: int) -> list[list[PreparedRow]]:
    batches: list[list[PreparedRow]] = []
    current: list[PreparedRow] = []
    for group in group_rows(rows):
        if current and padded_tokens(current + group) > token_budget:
            batches.append(current)
            current = []
        current = current + group
    if current:
        batches.append(current)
    return batches
