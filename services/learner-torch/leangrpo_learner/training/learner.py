"""The learner's state and operations: a policy (base model + LoRA adapter), AdamW, the step
counter and the adapter versions; one training step, logprobs, exports and checkpoints.
The gRPC layer runs operations one at a time (a step mutates what everything else reads).

Under torch.distributed every rank holds a Learner and runs the same operations on the same
validated batch (rank 0 broadcasts it); `collective` splits the micro-batches between ranks and
sums their gradients, so every rank applies the same update."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field, replace

import torch

from ..artifact_names import adapter_name
from ..algorithms.registry import algorithm_named
from ..completion_logprobs import LOGIT_FLOATS_PER_CHUNK, Projection, completion_logprobs, rows_of
from ..errors import AdapterError, CheckpointError, SampleError, StepOrderError, UnknownVersionError
from ..lora.lora_adapter import LoraAdapter
from ..lora.lora_config import LoraConfig
from ..lora.peft_files import export_peft_files, load_peft_adapter
from ..model.causal_lm import CausalLM, ForwardOptions
from ..model.reasoning_expansion import initial_rows, token_rows_of
from ..optimizer.adamw import AdamW, AdamWSettings
from ..reasoning.map_file import REASONING_MAP_FILE, map_file_bytes
from ..optimizer.grad_clipping import clip_by_global_norm
from ..path_root import RootDirectory
from ..optimizer.lr_schedule import learning_rate_multiplier
from ..sampling import SamplingDistribution, SamplingMessage, resolve_sampling
from .checkpoint_files import ADAPTER_DIR, TrainerState, checkpoint_state_files, read_checkpoint_state
from .prepared_batch import prepare_batch
from .sample_validation import validate_examples
from .single_process import SingleProcess
from .step_gradients import StepGradientInputs, step_gradients
from .step_metrics import UpdateRecord, step_metrics
from .step_speed import StepSpeed, resolve_step_speed
from .training_example import TrainingExample


@dataclass(frozen=True)
class OptimizerOptions:
    adamw: AdamWSettings
    max_grad_norm: float | None
    lr_schedule: str
    warmup_steps: int
    total_steps: int


@dataclass(frozen=True)
class LearnerOptions:
    base_model: str
    lora: LoraConfig
    optimizer: OptimizerOptions
    micro_batch_tokens: int
    seed: int
    keep_versions: int
    gradient_checkpointing: bool = False
    # The step's speed settings (torch.*; step_speed.py). None: the former step's (CPU) values.
    speed: StepSpeed | None = None
    # With a reasoning vocabulary: "train" trains the reasoning rows beside LoRA; "frozen" keeps
    # them at their copies (the measurement's control arm).
    reasoning_rows: str = "train"


@dataclass
class StepRequest:
    algorithm: str
    algorithm_config: dict
    mode: str  # "rl" | "sft"
    examples: list[TrainingExample]
    step: int = 0
    expected_samples: int = 0
    num_generations: int = 0
    sampling: SamplingMessage | None = None  # None: header.sampling unset


@dataclass
class StepResult:
    step: int
    adapter_version: int
    adapter_name: str
    metrics: dict[str, float]
    zero_std_groups: list[str] = field(default_factory=list)


def dropout_seed(seed: int, update: int, micro_batch: int) -> int:
    """LoRA dropout seed of micro-batch k of update u: a function of the saved seed and update count only."""
    product = ((update * 4096 + micro_batch + 1) * 0x9E3779B9) & 0xFFFFFFFF
    return (seed + product) & 0xFFFFFFFF


class Learner:
    def __init__(self, model: CausalLM, options: LearnerOptions, collective=None):
        """`model`: the native CausalLM or a TransformersCausalLM (torch.model_source)."""
        self.model = model
        self.options = options
        self.collective = collective or SingleProcess()
        self.seed = options.seed
        self.step = 0
        self.adapter_version = 0
        self.algorithm = ""
        self.vocabulary = getattr(model, "reasoning_vocabulary", None)
        rows = token_rows_of(model) if options.reasoning_rows == "train" else None
        self.adapter = LoraAdapter.create(
            model.lora_layout(options.lora), options.lora, options.seed, (rows, initial_rows(model, rows)) if rows is not None else None
        ).to(model.device)
        # Token budget and logit chunks sized for the device once, after the model took its memory.
        self.speed = resolve_step_speed(options.speed, model, options.micro_batch_tokens, options.gradient_checkpointing)
        if self.collective.world_size > 1:
            # Every rank must cut a batch into the same micro-batches: the smallest budget of any rank.
            self.speed = replace(self.speed, micro_batch_tokens=self.collective.min_over_ranks(self.speed.micro_batch_tokens))
        if self.speed.compile and hasattr(model, "compile_layers"):  # the native model; transformers runs eagerly
            model.compile_layers()
        self.optimizer = AdamW(self.adapter, options.optimizer.adamw, fused=self.speed.fused_adamw)
        self.versions: dict[int, dict[str, bytes]] = {}
        self._snapshot_version()

    # ---- scoring -------------------------------------------------------------------------
    def score(self, pairs, sampling: SamplingDistribution, adapter: LoraAdapter | None, entropies_too: bool = True):
        """Logprobs (and entropies, or empty lists) without gradient, in chunks within the token budget."""
        logprobs: list[list[float]] = []
        entropies: list[list[float]] = []
        speed = getattr(self, "speed", None)
        budget = speed.micro_batch_tokens if speed is not None else self.options.micro_batch_tokens
        projection = Projection(speed.logit_chunk_floats if speed is not None else LOGIT_FLOATS_PER_CHUNK, entropies_too, speed is not None and speed.compile)
        start = 0
        with torch.no_grad():
            while start < len(pairs):
                end = start + 1
                longest = len(pairs[start][0]) + len(pairs[start][1])
                while end < len(pairs):
                    nxt = max(longest, len(pairs[end][0]) + len(pairs[end][1]))
                    if nxt * (end - start + 1) > budget:
                        break
                    longest = nxt
                    end += 1
                scores = completion_logprobs(self.model, pairs[start:end], sampling, ForwardOptions(adapter=adapter), projection)
                logprobs += rows_of(scores.logprobs, scores.lengths)
                entropies += rows_of(scores.entropies, scores.lengths) if entropies_too else [[] for _ in range(end - start)]
                start = end
        return logprobs, entropies

    def check_reasoning_mask(self, sampling: SamplingDistribution, field: str) -> SamplingDistribution:
        """The sampling with its mask mode resolved: unspecified is model.reasoning_mask (free without a vocabulary)."""
        if sampling.reasoning_mask is None:
            return dataclasses.replace(sampling, reasoning_mask=self.vocabulary.mask if self.vocabulary is not None else "free")
        if sampling.reasoning_mask != "free" and self.vocabulary is None:
            raise SampleError(
                f"{field}.reasoning_mask is {sampling.reasoning_mask.upper()}, but this learner's model has no reasoning vocabulary "
                "(model.reasoning_vocab_size is 0); accepted: REASONING_MASK_UNSPECIFIED or REASONING_MASK_FREE"
            )
        return sampling

    def compute_logprobs(self, pairs, reference: bool, sampling: SamplingDistribution, include_entropy: bool = True):
        sampling = self.check_reasoning_mask(sampling, "sampling")
        self.check_pairs(pairs)
        logprobs, entropies = self.score(pairs, sampling, None if reference else self.adapter, include_entropy)
        return logprobs, entropies, 0 if reference else self.adapter_version

    def check_pairs(self, pairs) -> None:
        """Token ids within the vocabulary, sequences within the context; raises SampleError naming the row."""
        for row, (prompt, completion) in enumerate(pairs):
            for name, ids in (("prompt_token_ids", prompt), ("completion_token_ids", completion)):
                for i, token in enumerate(ids):
                    if token >= self.model.config.vocab_size:
                        raise SampleError(f"sequences[{row}].{name}[{i}] = {token} is outside the model's vocabulary [0, {self.model.config.vocab_size})")
            if len(prompt) + len(completion) > self.model.config.max_position_embeddings:
                raise SampleError(
                    f"sequences[{row}]: prompt + completion is {len(prompt) + len(completion)} tokens; "
                    f"the model's context (max_position_embeddings) is {self.model.config.max_position_embeddings}"
                )

    # ---- training ------------------------------------------------------------------------
    def check_request(self, request: StepRequest):
        """Resolves the algorithm and checks the batch; raises before anything is computed."""
        settings = algorithm_named(request.algorithm).resolve(request.algorithm_config)
        if request.step != 0 and request.step != self.step + 1:
            raise StepOrderError(f"header.step is {request.step} but the learner is at step {self.step}; send {self.step + 1} (or 0 to skip the check)")
        validate_examples(request.examples, self.model.config, request.expected_samples, request.num_generations)
        sampling = sampling_of(settings.temperature, request)
        return settings, self.check_reasoning_mask(sampling, "header.sampling")

    def train_step(self, request: StepRequest) -> StepResult:
        settings, sampling = self.check_request(request)
        started = time.perf_counter()
        batch = prepare_batch(request.examples, settings, request.mode)
        if not batch.rows:
            raise SampleError(
                f"every group has zero reward spread and dapo's dynamic_sampling dropped them all ({', '.join(batch.zero_std_groups)}); "
                "resample, or set dynamic_sampling false"
            )
        pairs = [(r.example.prompt_ids, r.example.completion_ids) for r in batch.rows]
        rl = request.mode == "rl"
        former = self.speed.former_step
        # With one update, "old" is the current policy (the detached logprobs of the pass that is
        # differentiated, as TRL and the TS learner take them). Replays need the logprobs from
        # before the first update, and with LoRA dropout the importance weight needs them without
        # dropout: the same rule as the TS learner's.
        old_pass = rl and (former or settings.num_iterations > 1 or (settings.importance_sampling_cap is not None and self.adapter.config.dropout > 0))
        old = self.score(pairs, sampling, self.adapter, entropies_too=False)[0] if old_pass else None
        needs_ref = rl and (settings.beta != 0 or settings.dpo_coef != 0)
        # The former step scored the reference in a pass of its own; now each micro-batch scores its rows.
        ref = self.score(pairs, sampling, None, entropies_too=False)[0] if needs_ref and former else None
        iterations = settings.num_iterations if rl else 1
        # With replays, a failure after the first update must not leave a half-applied step.
        before = (self.adapter.peft_tensors(), self.optimizer.updates, self.optimizer.moments()) if iterations > 1 else None
        updates: list[UpdateRecord] = []
        on_policy_old = None
        # The on-policy logprobs leave the device only for the metrics that read them (sampler logprobs sent).
        keep_detached = rl and old is None and any(r.example.sampler_logprobs is not None for r in batch.rows)
        try:
            for iteration in range(iterations):
                record, gradients = self._update(settings, sampling, batch, old, ref, score_reference=needs_ref and ref is None, keep_detached=keep_detached)
                updates.append(record)
                if gradients.reference is not None:
                    ref = self._all_rows(gradients.reference, len(batch.rows))
                if gradients.detached is not None and iteration == 0:
                    on_policy_old = self._all_rows(gradients.detached, len(batch.rows))
        except Exception:
            if before is not None and updates:
                self.adapter.assign(before[0])
                self.optimizer.restore(before[1], before[2])
            raise
        self.step += 1
        self.adapter_version += 1
        self.algorithm = algorithm_named(request.algorithm).name
        self._snapshot_version()
        metrics = step_metrics(request.examples, batch, updates, old if old is not None else on_policy_old, time.perf_counter() - started, settings)
        return StepResult(self.step, self.adapter_version, adapter_name(self.adapter_version), metrics, batch.zero_std_groups)

    def _all_rows(self, mine: dict[int, list[float]], count: int) -> list[list[float]]:
        """Per-row values computed in this rank's micro-batches, completed with the other ranks'."""
        rows = self.collective.gather_rows(mine) if self.collective.world_size > 1 else mine
        return [rows.get(i, []) for i in range(count)]

    def _update(self, settings, sampling, batch, old, ref, score_reference=False, keep_detached=False):
        update_index = self.optimizer.updates
        self.optimizer.optimizer.zero_grad(set_to_none=False)
        for p in self.adapter.parameters():
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        gradients = step_gradients(
            StepGradientInputs(
                model=self.model,
                adapter=self.adapter,
                settings=settings,
                sampling=sampling,
                batch=batch,
                old=old,
                ref=ref,
                micro_batch_tokens=self.speed.micro_batch_tokens,
                dropout_seed=(lambda k: dropout_seed(self.seed, update_index, k)) if self.adapter.config.dropout > 0 else None,
                gradient_checkpointing=self.options.gradient_checkpointing,
                score_reference=score_reference,
                keep_detached=keep_detached,
                # Replays reuse the reference scored in the first update.
                keep_reference=score_reference and batch.mode == "rl" and settings.num_iterations > 1,
                projection=Projection(self.speed.logit_chunk_floats, True, self.speed.compile),
            ),
            plan=self.collective.micro_batch_plan,
        )
        grads = [p.grad for p in self.adapter.parameters()]
        sums = self.collective.sum_gradients(grads, gradients.as_list())
        gradients.loss, gradients.clip_low, gradients.clip_high, gradients.clip_region = sums[0], sums[1], sums[2], sums[3]
        gradients.kl = sums[4] if (ref is not None or score_reference) and batch.mode == "rl" else None
        gradients.entropy = sums[5]
        grad_norm = clip_by_global_norm(grads, self.options.optimizer.max_grad_norm)
        o = self.options.optimizer
        learning_rate = o.adamw.learning_rate * learning_rate_multiplier(o.lr_schedule, o.warmup_steps, o.total_steps, update_index)
        self.optimizer.apply(learning_rate)
        return UpdateRecord(gradients, grad_norm, learning_rate), gradients

    # ---- adapters and checkpoints --------------------------------------------------------
    def export_adapter(self, version: int) -> tuple[int, dict[str, bytes]]:
        wanted = self.adapter_version if version == 0 else version
        files = self.versions.get(wanted)
        if files is None:
            held = ", ".join(str(v) for v in self.versions)
            raise UnknownVersionError(f"adapter version {version} is not held; held versions: {held} (0 means the latest)")
        return wanted, files

    def save_checkpoint(self, directory: RootDirectory) -> tuple[str, int, int, int]:
        """Writes a checkpoint into `directory` (opened under checkpoint_dir, path_root.py), each file replaced whole."""
        files = {f"{ADAPTER_DIR}/{name}": data for name, data in export_peft_files(self.adapter, self.options.base_model, self.vocabulary).items()}
        if self.vocabulary is not None:  # the map beside the trainer state too, as the TS learner writes it
            files[REASONING_MAP_FILE] = map_file_bytes(self.vocabulary.map, self.vocabulary.markers)
        state = TrainerState(self.step, self.adapter_version, self.algorithm, self.optimizer.updates, self.seed, self.options.base_model)
        files.update(checkpoint_state_files(state, self.optimizer.moments()))
        for name in files:  # all refused or none written: a planted symlink leaves no half checkpoint beside it
            directory.check_writable(name)
        for name, data in files.items():
            directory.write_bytes(name, data)
        return str(directory.path), self.step, self.adapter_version, sum(len(data) for data in files.values())

    def load_checkpoint(self, directory: RootDirectory) -> tuple[int, int, str]:
        """Replaces adapter, optimizer and counters with the checkpoint in `directory` (opened under checkpoint_dir).
        On any error nothing changes."""
        state, moments = read_checkpoint_state(directory)
        try:
            with directory.directory(ADAPTER_DIR) as adapter_directory:
                adapter = load_peft_adapter(adapter_directory, self.model).to(self.model.device)
        except AdapterError as error:
            raise CheckpointError(str(error)) from None
        wants_rows = self.vocabulary is not None and self.options.reasoning_rows == "train"
        if (adapter.token_rows is not None) != wants_rows:
            carries = "carries" if adapter.token_rows is not None else "has no"
            raise CheckpointError(
                f"{directory.relative or '.'}/{ADAPTER_DIR} {carries} trained reasoning rows, but this learner's "
                f"reasoning_rows is {self.options.reasoning_rows!r}{'' if self.vocabulary is not None else ' with no reasoning vocabulary'}; "
                "set reasoning_rows to the run's that saved it"
            )
        optimizer = AdamW(adapter, self.options.optimizer.adamw, fused=self.speed.fused_adamw)
        try:
            optimizer.restore(state.optimizer_updates, moments)
        except ValueError as error:
            raise CheckpointError(str(error)) from None
        self.adapter, self.optimizer = adapter, optimizer
        self.step, self.adapter_version, self.algorithm, self.seed = state.step, state.adapter_version, state.algorithm, state.seed
        self.versions.clear()
        self._snapshot_version()
        return state.step, state.adapter_version, state.algorithm

    def _snapshot_version(self) -> None:
        if not self.collective.is_main:
            return  # only the serving rank exports
        self.versions[self.adapter_version] = export_peft_files(self.adapter, self.options.base_model, self.vocabulary)
        for held in sorted(self.versions):
            if len(self.versions) <= self.options.keep_versions:
                break
            del self.versions[held]


def sampling_of(algorithm_temperature: float, request: StepRequest) -> SamplingDistribution:
    """header.sampling, with algorithm_config.temperature when given (the older field), read by resolve_sampling."""
    legacy = (algorithm_temperature, "algorithm_config.temperature") if "temperature" in request.algorithm_config else None
    try:
        return resolve_sampling(request.sampling, legacy, "header.sampling")
    except ValueError as error:
        raise SampleError(str(error)) from None
