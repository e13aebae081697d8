// The masked multi-turn batch of the LearnerService conformance suite against the TypeScript learner.
import { describeMaskedBatchConformance } from "./masked-batch-conformance.js";
import { tsLearner } from "./ts-learner-under-test.js";

describeMaskedBatchConformance(tsLearner);
