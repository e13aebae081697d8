// A REPL stand-in that attacks its sandbox: it speaks leanprover-community/repl's
// protocol (a request is JSON then a blank line; an answer is pretty-printed JSON then
// a blank line, as the REPL itself does), elaborates any header to a
// fresh env, and on every other command runs sandbox-probe.mjs on the absolute paths
// quoted in the command ("/…") and answers with one error message whose text is the
// probe's report: the channel a proof's code has back to the client.
//   node tests/security/sandbox-repl.mjs [--port N]
import { probe } from "./sandbox-probe.mjs";

const portAt = process.argv.indexOf("--port");
const port = portAt > 0 ? Number(process.argv[portAt + 1]) : undefined;
let nextEnv = 0;
let buffer = "";
let queue = Promise.resolve();

function answer(response) {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(response, null, 2)}\n\n`, () => resolve()));
}

async function handle(request) {
  const env = nextEnv++;
  if (request.env === undefined) return answer({ env });
  const paths = [...request.cmd.matchAll(/"(\/[^"]*)"/g)].map((match) => match[1]);
  const report = await probe(paths, port);
  return answer({
    messages: [{ severity: "error", pos: { line: 1, column: 0 }, endPos: { line: 1, column: 1 }, data: JSON.stringify(report) }],
    env,
  });
}

process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let end = buffer.indexOf("\n\n");
  while (end >= 0) {
    const text = buffer.slice(0, end).trim();
    buffer = buffer.slice(end + 2);
    if (text !== "") {
      const request = JSON.parse(text);
      queue = queue.then(() => handle(request));
    }
    end = buffer.indexOf("\n\n");
  }
});
