// The LearnerService conformance suite against the PyTorch learner, as a child process.
// Skipped, saying why, where /usr/bin/python3 lacks torch, grpcio or protobuf.
import { describe } from "vitest";
import { describeLearnerConformance } from "./learner-conformance.js";
import { torchUnavailable } from "./python-torch.js";
import { torchLearner } from "./torch-learner-under-test.js";

const unavailable = torchUnavailable();
if (unavailable) console.warn(`skipping the PyTorch learner's conformance suite: ${unavailable}`);

describe.skipIf(unavailable !== null)("PyTorch learner (services/learner-torch)", () => {
  describeLearnerConformance(torchLearner());
});
