// One REPL process: spawn it in its own process group, send one request at a time,
// read its framed responses, and kill the whole group when it must end (a timeout,
// a cancelled call, garbage, stderr output, an oversized answer, a memory cap).
// `lake env repl` runs the REPL as lake's child, so killing only the pid we spawned
// would leave the REPL running: the group is what gets SIGKILL.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { Logger } from "../logger.js";
import { encodeRequest, ResponseFramer } from "./framing.js";
import { parseResponse, type ReplRequest, type ReplResponse } from "./protocol.js";
import { ReplFailure, ReplUnavailable } from "./repl-failure.js";

export interface ReplProcessOptions {
  /** Full argv, sandbox wrapper included. */
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A response longer than this (characters) kills the process: defence against output floods. */
  maxResponseChars: number;
  logger: Logger;
}

export interface SendOptions {
  /** Epoch ms by which the answer must have arrived; past it the process is killed (kind "timeout"). */
  deadline?: number;
  /** Aborting it kills the process (kind "cancel"): the REPL cannot stop a command any other way. */
  signal?: AbortSignal;
}

export interface ProcessExit {
  /** Why it ended; undefined when it was never started. */
  failure: ReplFailure | ReplUnavailable;
  /** Responses it gave over its life. */
  responses: number;
}

interface PendingRequest {
  resolve(response: ReplResponse): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** Its answer arrived and waits for the end of this poll phase (see onFrame). */
  answered?: boolean;
}

const STDERR_KEEP_CHARS = 4_000;

/** Process groups alive in this process, killed if it exits without closing its pools. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // ESRCH: the group is already gone.
  }
}

export class ReplProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly framer = new ResponseFramer();
  private readonly logger: Logger;
  private readonly maxResponseChars: number;
  private pending: PendingRequest | undefined;
  private failure: ReplFailure | ReplUnavailable | undefined;
  private stderr = "";
  private requestsSent = 0;
  private responsesReceived = 0;
  /** Resolves once the process and its pipes are closed. */
  readonly exited: Promise<ProcessExit>;

  constructor(options: ReplProcessOptions) {
    this.logger = options.logger;
    this.maxResponseChars = options.maxResponseChars;
    const [command, ...args] = options.argv;
    if (command === undefined) throw new TypeError("empty REPL command");
    this.child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const pid = this.child.pid;
    if (pid !== undefined) {
      liveGroups.add(pid);
      installExitHook();
    }
    this.child.stdout.setEncoding("utf8");
    this.child.stderr.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => this.onStdout(chunk));
    this.child.stderr.on("data", (chunk: string) => this.onStderr(chunk));
    // A write to a process that just died fails with EPIPE; the close handler reports it.
    this.child.stdin.on("error", () => {});
    this.exited = new Promise((resolve) => {
      this.child.once("error", (error) => {
        // spawn failed (ENOENT, EACCES): there is no process and there will be no "close" with a pid.
        if (this.child.pid === undefined) {
          this.end(new ReplUnavailable(`the REPL could not be started: ${error.message}`));
          resolve({ failure: this.failure!, responses: 0 });
        }
      });
      this.child.once("close", (code, signal) => {
        if (pid !== undefined) {
          // Members of the group that outlive the leader (lake's child REPL) go too.
          killGroup(pid);
          liveGroups.delete(pid);
        }
        const partial = this.framer.pendingLength > 0 ? " in the middle of a response" : "";
        const stderr = this.stderr ? `; stderr: ${this.stderr.trim()}` : "";
        this.end(new ReplFailure("crash", `the REPL exited (${signal ?? `code ${code}`})${partial}${stderr}`));
        resolve({ failure: this.failure!, responses: this.responsesReceived });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True once the process is dead or condemned; it answers nothing more. */
  get ended(): boolean {
    return this.failure !== undefined;
  }

  get responses(): number {
    return this.responsesReceived;
  }

  /** Sends one request and resolves with its response; one request at a time, as the REPL reads them. */
  send(request: ReplRequest, options: SendOptions = {}): Promise<ReplResponse> {
    if (this.pending) throw new Error("a request is already in flight on this REPL process");
    if (this.failure) return Promise.reject(this.failure);
    const line = encodeRequest(request);
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    return new Promise<ReplResponse>((resolve, reject) => {
      const pending: PendingRequest = { resolve, reject, timer: undefined, signal: options.signal, onAbort: undefined };
      if (options.deadline !== undefined) {
        pending.timer = setTimeout(
          () => this.kill(new ReplFailure("timeout", "no answer before the deadline")),
          Math.max(0, options.deadline - Date.now()),
        );
      }
      if (options.signal) {
        pending.onAbort = () => this.kill(new ReplFailure("cancel", "the call was cancelled or ran past its deadline"));
        options.signal.addEventListener("abort", pending.onAbort, { once: true });
      }
      this.pending = pending;
      this.requestsSent++;
      this.child.stdin.write(line);
    });
  }

  /** Ends the process (SIGKILL to its group) and fails the request in flight with `failure`. */
  kill(failure: ReplFailure): void {
    this.end(failure);
    if (this.child.pid !== undefined) killGroup(this.child.pid);
  }

  private end(failure: ReplFailure | ReplUnavailable): void {
    this.failure ??= failure;
    const pending = this.takePending();
    pending?.reject(this.failure);
  }

  private takePending(): PendingRequest | undefined {
    const pending = this.pending;
    if (!pending) return undefined;
    this.pending = undefined;
    if (pending.timer) clearTimeout(pending.timer);
    if (pending.onAbort) pending.signal?.removeEventListener("abort", pending.onAbort);
    return pending;
  }

  private onStdout(chunk: string): void {
    if (this.failure) return;
    const frames = this.framer.push(chunk);
    if ([this.framer.pendingLength, ...frames.map((frame) => frame.length)].some((length) => length > this.maxResponseChars)) {
      this.kill(new ReplFailure("crash", `the REPL's response exceeded ${this.maxResponseChars} characters`));
      return;
    }
    for (const frame of frames) this.onFrame(frame);
  }

  private onFrame(frame: string): void {
    if (this.failure) return;
    const pending = this.pending;
    if (!pending || pending.answered) {
      this.kill(new ReplFailure("crash", `the REPL wrote output nobody asked for: ${excerpt(frame)}`));
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(frame);
    } catch {
      this.kill(new ReplFailure("crash", `the REPL answered with invalid JSON: ${excerpt(frame)}`));
      return;
    }
    const response = parseResponse(value);
    if (!response) {
      this.kill(new ReplFailure("crash", `the REPL answered with an unknown response shape: ${excerpt(frame)}`));
      return;
    }
    this.responsesReceived++;
    pending.answered = true;
    // Settled in the check phase, after every pipe event of this poll: a panic the REPL wrote to
    // stderr before this answer (the writes are ordered, the two pipes' events are not) then fails
    // the request as a crash instead of racing it, so no answer of a panicked REPL is trusted.
    setImmediate(() => {
      if (this.pending !== pending) return; // ended meanwhile: already rejected
      this.takePending();
      pending.resolve(response);
    });
  }

  private onStderr(chunk: string): void {
    if (this.stderr.length < STDERR_KEEP_CHARS) this.stderr += chunk.slice(0, STDERR_KEEP_CHARS - this.stderr.length);
    if (this.failure) return;
    if (this.requestsSent === 0) {
      // Start-up noise (a launcher's warning) is logged; the process has run nothing yet.
      this.logger.warn({ pid: this.child.pid, stderr: chunk.trim() }, "REPL wrote to stderr while starting");
      return;
    }
    // The REPL writes to stderr only when it dies (uncaught exception) or when Lean
    // panics; either way its state can no longer be trusted.
    this.kill(new ReplFailure("crash", `the REPL wrote to stderr: ${excerpt(this.stderr)}`));
  }
}

function excerpt(text: string): string {
  const flat = text.trim().replace(/\s+/g, " ");
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Workers run in their own process groups (detached), so they would outlive us.
  process.once("exit", () => {
    for (const pid of liveGroups) killGroup(pid);
  });
}
