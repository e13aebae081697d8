// The expanded-vocabulary case of the LearnerService conformance suite against the PyTorch learner.
// Skipped, saying why, where /usr/bin/python3 lacks torch, grpcio or protobuf.
import { describe } from "vitest";
import { describeReasoningVocabConformance } from "./reasoning-vocab-conformance.js";
import { torchUnavailable } from "./python-torch.js";
import { torchLearner } from "./torch-learner-under-test.js";

const unavailable = torchUnavailable();
if (unavailable) console.warn(`skipping the PyTorch learner's expanded-vocabulary conformance: ${unavailable}`);

describe.skipIf(unavailable !== null)("PyTorch learner (services/learner-torch)", () => {
  describeReasoningVocabConformance(torchLearner());
});
