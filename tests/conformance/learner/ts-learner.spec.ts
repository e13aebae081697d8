// The LearnerService conformance suite against the TypeScript learner.
import { describeLearnerConformance } from "./learner-conformance.js";
import { tsLearner } from "./ts-learner-under-test.js";

describeLearnerConformance(tsLearner);
