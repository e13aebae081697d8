// The masked multi-turn batch of the LearnerService conformance suite against the PyTorch learner.
// Skipped, saying why, where /usr/bin/python3 lacks torch, grpcio or protobuf.
import { describe } from "vitest";
import { describeMaskedBatchConformance } from "./masked-batch-conformance.js";
import { torchUnavailable } from "./python-torch.js";
import { torchLearner } from "./torch-learner-under-test.js";

const unavailable = torchUnavailable();
if (unavailable) console.warn(`skipping the PyTorch learner's masked-batch conformance: ${unavailable}`);

describe.skipIf(unavailable !== null)("PyTorch learner (services/learner-torch)", () => {
  describeMaskedBatchConformance(torchLearner());
});
