// The algorithms by name, as TrainStepHeader.algorithm names them.
import { AlgorithmConfigError } from "./algorithm-config-error.js";
import type { Algorithm } from "./algorithm.js";
import { cispo } from "./cispo.js";
import { dapo } from "./dapo.js";
import { dgpo } from "./dgpo.js";
import { drgrpo } from "./drgrpo.js";
import { grpo } from "./grpo.js";
import { gspo } from "./gspo.js";
import { sapo } from "./sapo.js";

export const ALGORITHMS: readonly Algorithm[] = [grpo, drgrpo, dapo, gspo, dgpo, cispo, sapo];

export const ALGORITHM_NAMES = ALGORITHMS.map((a) => a.name);

/** The algorithm of that name (case-insensitive, as the seed's factory); unknown names list the known ones. */
export function algorithmNamed(name: string): Algorithm {
  const found = ALGORITHMS.find((a) => a.name === name.trim().toLowerCase());
  if (!found) {
    throw new AlgorithmConfigError(`algorithm ${JSON.stringify(name)} is not known; accepted: ${ALGORITHM_NAMES.join(", ")}`);
  }
  return found;
}
