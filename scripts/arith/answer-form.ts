// The orchestrator's answer forms (services/orchestrator/src/eval/answer-form.ts), for the
// arithmetic scripts: worked out (an intermediate number) or direct, and the right-number check.
export { answerForm, isBoxed, isRightNumber, lastNumber } from "../../services/orchestrator/src/eval/answer-form.js";
