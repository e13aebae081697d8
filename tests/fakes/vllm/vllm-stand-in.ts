// An OpenAI-compatible HTTP server that answers the way vLLM's does, for tests of
// the inference service's vLLM backend. It is a fake of a process we do not own,
// so only its wire shapes matter: /v1/completions (plain and SSE streaming) with
// `return_token_ids` and `token_id:N` logprob tokens, /tokenize, /v1/models,
// runtime LoRA load/unload, /health, and vLLM's error bodies.
//
// Its "model" is deterministic: text is tokenized as UTF-8 bytes (id = byte + 3;
// 0 = <pad>, 1 = <bos>, 2 = <eos>), and a completion's tokens are lowercase letters
// drawn from a hash of (seed, adapter, prompt, completion index, position), so
// tests can predict them. Its logprob for token t is -(1 + (t % 7)) / 10.
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export const EOS = 2;
const BYTE_OFFSET = 3;

export interface StandInOptions {
  model?: string;
  maxModelLen?: number;
  /** Answer the next N requests to generation endpoints with this status. */
  failNext?: { count: number; status: number };
  /** Delay before answering generation requests, ms. */
  delayMs?: number;
  /**
   * A server busy at this many tokens per second: each generation request takes its n ×
   * max_tokens tokens' worth of time, one after another, as a GPU at full batch would; so a
   * fleet's throughput is the servers', not this machine's cores'.
   */
  tokensPerSecond?: number;
  /**
   * vLLM's `--logprobs-mode`, fixed at start: raw_logprobs (vLLM's default) reports the raw
   * logit's logprob whatever the temperature; processed_logprobs the logprob after temperature
   * (and top-k/top-p), here tokenLogprob(t) / temperature.
   */
  logprobsMode?: "raw_logprobs" | "processed_logprobs";
}

export interface RecordedRequest {
  path: string;
  body: any;
}

export interface VllmStandIn {
  url: string;
  requests: RecordedRequest[];
  adapters: Map<string, string>;
  options: StandInOptions;
  close(): Promise<void>;
}

export function tokenizeText(text: string, addBos: boolean): number[] {
  const ids = [...Buffer.from(text, "utf8")].map((b) => b + BYTE_OFFSET);
  return addBos ? [1, ...ids] : ids;
}

export function detokenize(ids: number[]): string {
  return Buffer.from(ids.filter((t) => t >= BYTE_OFFSET).map((t) => t - BYTE_OFFSET)).toString("utf8");
}

/** A chat template in the ChatML style Qwen uses. */
export function applyChatTemplate(messages: { role: string; content: string }[]): string {
  return `${messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join("")}<|im_start|>assistant\n`;
}

export function tokenLogprob(token: number): number {
  return -(1 + (token % 7)) / 10;
}

/** The stand-in's processed logprob of a token sampled at `temperature` (> 0). */
export function processedTokenLogprob(token: number, temperature: number): number {
  return tokenLogprob(token) / temperature;
}

/** The token the stand-in samples at a position: predictable from the request. */
export function sampledToken(seed: number, adapter: string, prompt: number[], index: number, position: number): number {
  let h = 2166136261 ^ seed;
  for (const part of [adapter, prompt.join(","), String(index), String(position)]) {
    for (let i = 0; i < part.length; i++) h = Math.imul(h ^ part.charCodeAt(i), 16777619);
  }
  return ((h >>> 0) % 26) + 97 + BYTE_OFFSET; // 'a'..'z'
}

export async function startVllmStandIn(options: StandInOptions = {}): Promise<VllmStandIn> {
  const model = options.model ?? "Qwen/Qwen2.5-0.5B-Instruct";
  const maxModelLen = options.maxModelLen ?? 4096;
  const adapters = new Map<string, string>();
  /** When the tokens already asked of a tokensPerSecond server are done (epoch ms). */
  let busyUntil = 0;
  const requests: RecordedRequest[] = [];
  const created = Math.floor(Date.now() / 1000);

  const server = http.createServer(async (req, res) => {
    const body = await readJson(req);
    const path = req.url ?? "";
    requests.push({ path, body });
    try {
      if (req.method === "GET" && path === "/health") return res.writeHead(200).end();
      if (req.method === "GET" && path === "/v1/models") return json(res, 200, models());
      if (req.method !== "POST") return error(res, 404, "NotFoundError", `Not Found: ${req.method} ${path}`);
      if (path === "/tokenize") return json(res, 200, tokenize(body));
      if (path === "/detokenize") return json(res, 200, { prompt: detokenize(body.tokens ?? []) });
      if (path === "/v1/load_lora_adapter") return loadLora(res, body);
      if (path === "/v1/unload_lora_adapter") return unloadLora(res, body);
      if (path === "/v1/completions") {
        if (options.failNext && options.failNext.count > 0) {
          options.failNext.count--;
          return error(res, options.failNext.status, "ServiceUnavailableError", "The server is overloaded, try again");
        }
        if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
        if (options.tokensPerSecond) {
          const tokens = (body?.n ?? 1) * (body?.max_tokens ?? 16);
          busyUntil = Math.max(Date.now(), busyUntil) + (tokens * 1000) / options.tokensPerSecond;
          await new Promise((r) => setTimeout(r, busyUntil - Date.now()));
        }
        return completions(res, body);
      }
      return error(res, 404, "NotFoundError", `Not Found: ${path}`);
    } catch (e) {
      return error(res, 400, "BadRequestError", (e as Error).message);
    }
  });

  function models() {
    return {
      object: "list",
      data: [
        { id: model, object: "model", created, owned_by: "vllm", root: model, parent: null, max_model_len: maxModelLen, permission: [] },
        ...[...adapters].map(([name, path]) => ({
          id: name,
          object: "model",
          created,
          owned_by: "vllm",
          root: path,
          parent: model,
          max_model_len: null,
          permission: [],
        })),
      ],
    };
  }

  function tokenize(body: any) {
    let tokens: number[];
    if (Array.isArray(body.messages)) {
      if (body.add_generation_prompt === false) throw new Error("stand-in supports add_generation_prompt only");
      tokens = tokenizeText(applyChatTemplate(body.messages), body.add_special_tokens === true);
    } else {
      tokens = tokenizeText(String(body.prompt ?? ""), body.add_special_tokens !== false);
    }
    return { count: tokens.length, max_model_len: maxModelLen, tokens, token_strs: null };
  }

  function loadLora(res: http.ServerResponse, body: any) {
    if (!body.lora_name || !body.lora_path) return error(res, 400, "BadRequestError", "Both 'lora_name' and 'lora_path' must be provided.");
    if (adapters.has(body.lora_name) && !body.load_inplace) {
      return error(res, 400, "InvalidUserInput", `The lora adapter '${body.lora_name}' has already been loaded.`);
    }
    adapters.set(body.lora_name, body.lora_path);
    res.writeHead(200, { "content-type": "text/plain" }).end(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
  }

  function unloadLora(res: http.ServerResponse, body: any) {
    if (!adapters.delete(body.lora_name)) {
      return error(res, 404, "NotFoundError", `The lora adapter '${body.lora_name}' cannot be found.`);
    }
    res.writeHead(200, { "content-type": "text/plain" }).end(`Success: LoRA adapter '${body.lora_name}' removed successfully.`);
  }

  function completions(res: http.ServerResponse, body: any) {
    const adapter = body.model === model ? "" : body.model;
    if (adapter && !adapters.has(adapter)) {
      return error(res, 404, "NotFoundError", `The model \`${body.model}\` does not exist.`);
    }
    const prompt: number[] = Array.isArray(body.prompt) ? body.prompt : tokenizeText(String(body.prompt), true);
    const n = body.n ?? 1;
    const maxTokens = body.max_tokens ?? 16;
    if (prompt.length + maxTokens > maxModelLen) {
      return error(res, 400, "BadRequestError", `This model's maximum context length is ${maxModelLen} tokens.`);
    }
    const stops: string[] = body.stop ?? [];
    const choices = Array.from({ length: n }, (_, index) => {
      const ids: number[] = [];
      let finish = "length";
      let stopReason: string | number | null = null;
      for (let pos = 0; pos < maxTokens; pos++) {
        const token = sampledToken(body.seed ?? 0, adapter, prompt, index, pos);
        ids.push(token);
        const text = detokenize(ids);
        const hit = stops.find((s) => text.endsWith(s));
        if (hit !== undefined) {
          ids.splice(ids.length - Buffer.byteLength(hit), Buffer.byteLength(hit));
          finish = "stop";
          stopReason = hit;
          break;
        }
      }
      return { index, ids, finish, stopReason };
    });
    const usage = {
      prompt_tokens: prompt.length,
      total_tokens: prompt.length + choices.reduce((a, c) => a + c.ids.length, 0),
      completion_tokens: choices.reduce((a, c) => a + c.ids.length, 0),
      prompt_tokens_details: null,
    };
    const id = `cmpl-${Math.random().toString(16).slice(2)}`;
    const temperature = typeof body.temperature === "number" && body.temperature > 0 ? body.temperature : 1;
    const logprobOf = (t: number) =>
      options.logprobsMode === "processed_logprobs" ? processedTokenLogprob(t, temperature) : tokenLogprob(t);
    const logprobsOf = (ids: number[]) =>
      body.logprobs == null
        ? null
        : {
            text_offset: ids.map((_, i) => i),
            token_logprobs: ids.map(logprobOf),
            tokens: ids.map((t) => (body.return_tokens_as_token_ids ? `token_id:${t}` : detokenize([t]))),
            top_logprobs: ids.map((t) => ({ [body.return_tokens_as_token_ids ? `token_id:${t}` : detokenize([t])]: logprobOf(t) })),
          };

    if (!body.stream) {
      return json(res, 200, {
        id,
        object: "text_completion",
        created,
        model: body.model,
        choices: choices.map((c) => ({
          index: c.index,
          text: detokenize(c.ids),
          logprobs: logprobsOf(c.ids),
          finish_reason: c.finish,
          stop_reason: c.stopReason,
          prompt_logprobs: null,
          ...(body.return_token_ids ? { prompt_token_ids: prompt, token_ids: c.ids } : {}),
        })),
        usage,
        system_fingerprint: null,
        service_tier: null,
        kv_transfer_params: null,
      });
    }
    // SSE: one chunk per token and completion, the prompt ids in each completion's first chunk.
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    for (const c of choices) {
      c.ids.forEach((t, pos) => {
        const last = pos === c.ids.length - 1;
        send({
          id,
          object: "text_completion",
          created,
          model: body.model,
          choices: [
            {
              index: c.index,
              text: detokenize([t]),
              logprobs: logprobsOf([t]),
              finish_reason: last ? c.finish : null,
              stop_reason: last ? c.stopReason : null,
              ...(body.return_token_ids ? { token_ids: [t], ...(pos === 0 ? { prompt_token_ids: prompt } : {}) } : {}),
            },
          ],
          usage: null,
        });
      });
    }
    if (body.stream_options?.include_usage) send({ id, object: "text_completion", created, model: body.model, choices: [], usage });
    res.end("data: [DONE]\n\n");
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    adapters,
    options,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readJson(req: http.IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    let data = "";
    req.on("data", (c) => (data += c));
    req.on("end", () => {
      try {
        resolve(data ? JSON.parse(data) : {});
      } catch {
        resolve({});
      }
    });
  });
}

function json(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** vLLM's error body. */
function error(res: http.ServerResponse, status: number, type: string, message: string) {
  json(res, status, { object: "error", message, type, param: null, code: status });
}
