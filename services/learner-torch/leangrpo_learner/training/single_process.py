"""The collective of a learner that runs alone: it owns every micro-batch and sums nothing."""


class SingleProcess:
    is_main = True
    rank = 0
    world_size = 1

    def owns_micro_batch(self, k: int) -> bool:
        return True

    def sum_gradients(self, grads, scalars: list[float]) -> list[float]:
        return scalars

    def gather_rows(self, rows: dict[int, list[float]]) -> dict[int, list[float]]:
        return rows
