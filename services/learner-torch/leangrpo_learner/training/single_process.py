"""The collective of a learner that runs alone: it owns every micro-batch and sums nothing."""


class SingleProcess:
    is_main = True
    rank = 0
    world_size = 1

    def micro_batch_plan(self, count: int) -> list[tuple[int, bool]]:
        """(micro-batch, counts) in the order this process runs them: all of them, all counted."""
        return [(k, True) for k in range(count)]

    def sum_gradients(self, grads, scalars: list[float]) -> list[float]:
        return scalars

    def gather_rows(self, rows: dict[int, list[float]]) -> dict[int, list[float]]:
        return rows
