// The expanded-vocabulary case of the LearnerService conformance suite against the TypeScript learner.
import { describeReasoningVocabConformance } from "./reasoning-vocab-conformance.js";
import { tsLearner } from "./ts-learner-under-test.js";

describeReasoningVocabConformance(tsLearner);
