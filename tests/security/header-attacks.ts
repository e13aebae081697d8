// Headers that must never reach Lean, and honest ones that must, shared by the tests
// of every entry point that takes a theorem header (the verifier's Verify, VerifyBatch
// and StartProof, the reward service's Score and ScoreGroup, the orchestrator's
// StartRun and Evaluate). Each hostile header runs a command on the verifier's host
// with real Lean, or is one step from doing so.

/** The attack of the report: a header that runs a shell command while Lean elaborates it. */
export const EVAL_HEADER = 'import Lean\n#eval IO.Process.output { cmd := "id" }';

export const HOSTILE_HEADERS: Readonly<Record<string, string>> = {
  "#eval IO.Process.output": EVAL_HEADER,
  "#eval after a comment that looks closed":
    'import Mathlib\n/- outer /- inner -/ still a comment -/\n#eval IO.Process.run { cmd := "sh" }',
  "a command hidden after a nested comment's end": 'import Mathlib /- a /- b -/ -/ #eval (IO.getEnv "TOKEN")',
  "open … in #eval": 'import Mathlib\nopen IO in #eval Process.output { cmd := "id" }',
  "open then run_cmd": 'import Lean\nopen Lean Elab Command\nrun_cmd do IO.println "pwned"',
  "set_option of an option not on the list": "import Mathlib\nset_option debug.skipKernelTC true",
  "set_option … in": "import Mathlib\nset_option maxHeartbeats 400000 in\n#eval 1",
  "set_option with a value of the wrong kind": "import Mathlib\nset_option maxHeartbeats true",
  macro: 'import Lean\nmacro "pwn" : command => `(#eval IO.Process.output { cmd := "id" })\npwn',
  elab: 'import Lean\nopen Lean Elab Command\nelab "pwn" : command => do let _ ← IO.Process.output { cmd := "id" }\npwn',
  initialize: 'import Lean\ninitialize do let _ ← IO.Process.output { cmd := "id" }',
  run_cmd: 'import Lean\nrun_cmd Lean.logInfo "x"',
  run_meta: "import Lean\nrun_meta pure ()",
  "a definition": "import Mathlib\ndef x : Nat := 1",
  "#exit": "import Mathlib\n#exit",
  "fullwidth number sign": "import Mathlib\n＃eval 1",
  "a string literal where a name goes": 'import "Mathlib"',
  "an unterminated comment": "import Mathlib\n/- #eval 1",
  "a doc comment": "import Mathlib\n/-- doc -/",
  "import after open": "open Nat\nimport Lean",
  "public import (module system)": "public import Lean",
  "an escaped keyword as the command": "import Mathlib\n«#eval» 1",
  "zero-width space inside a keyword": "import Mathlib\nopen\u200bNat",
};

/** Headers of the public datasets (miniF2F as DeepSeek and Goedel ship it, ProofNet), and the plain forms. */
export const HONEST_HEADERS: Readonly<Record<string, string>> = {
  empty: "",
  "import Mathlib": "import Mathlib",
  "miniF2F (DeepSeek)": "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n\n",
  "miniF2F with a larger budget": "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat",
  ProofNet: "import Mathlib\n\nopen Complex Filter Function Metric Finset\nopen scoped BigOperators Topology\n\n",
  "comments and CRLF": "-- the usual imports\r\nimport Mathlib /- all of it -/\r\nset_option autoImplicit false\r\n",
  "escaped module name": "import «My Project».Basic",
};
