// Errors of the model library. Each names what was wrong and what is accepted, so that a
// service can hand the message to its caller unchanged (INVALID_ARGUMENT / FAILED_PRECONDITION).

/** Base class: input the learner core refuses (files, configs, token ids, options). */
export class ModelLibraryError extends Error {
  override readonly name: string = "ModelLibraryError";
}

/** A safetensors file that is not well formed, or holds a dtype the learner cannot read. */
export class SafetensorsFormatError extends ModelLibraryError {
  override readonly name = "SafetensorsFormatError";
}

/** A model directory whose config.json or weights the learner cannot use. */
export class ModelCheckpointError extends ModelLibraryError {
  override readonly name = "ModelCheckpointError";
}

/** A LoRA configuration or PEFT adapter the learner cannot use. */
export class AdapterError extends ModelLibraryError {
  override readonly name = "AdapterError";
}

/** Token ids, sequence lengths or sampling options out of range. */
export class ModelInputError extends ModelLibraryError {
  override readonly name = "ModelInputError";
}

/**
 * A tokenizer.json / tokenizer_config.json / chat template that cannot be used, or a text the
 * tokenizer refuses (a character its vocabulary cannot encode, a template that raises on it).
 */
export class TokenizerError extends ModelLibraryError {
  override readonly name = "TokenizerError";
}

/** A requested tensor backend that is not installed or failed to start. */
export class BackendUnavailableError extends ModelLibraryError {
  override readonly name = "BackendUnavailableError";
}

/**
 * A reasoning-vocabulary setting the model cannot use (size, markers, mask mode, map file) or
 * a map that differs from the run's. The message names the `model.reasoning_*` key.
 */
export class ReasoningVocabError extends ModelLibraryError {
  override readonly name = "ReasoningVocabError";
}
