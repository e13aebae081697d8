// What Lean does not execute, blanked: comments and string/char literals become
// spaces (newlines stay), so positions and indentation are unchanged and words in
// them never count. The lexing is the verifier's own (@lean-grpo/lean), so the
// reward and the verdict read the same tokens.
export { blankNonCode } from "@lean-grpo/lean";
