import { ApiError } from "../../core/protocol/index.ts";

/**
 * Deepest nesting of arrays and objects a body may have. The deepest protocol body (create-epoch)
 * nests 4 levels; the limit exists because Elysia's ValidationError serializes the offending value
 * recursively, so a few thousand levels overflowed the stack and answered 500.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Keys refused anywhere in a body. Elysia 1.4's ValidationError builds its summary with
 * `${value}`, which throws a TypeError (answered 500) when the value is an object, or an array
 * holding one, with its own non-function `toString`. Every body schema is strict and none has such a
 * field, so refusing them here gives the answer validation would have given, without the crash.
 */
const REFUSED_KEYS = new Set(["toString", "valueOf"]);

const tooLarge = (maxBytes: number) => new ApiError("TooLarge", `Body is larger than ${maxBytes} bytes`);

/**
 * Reads a JSON body with a byte limit. The declared length is checked before reading; the actual
 * length while reading, so a chunked body without a length is cut off at the limit instead of being
 * buffered whole. An empty body is `{}`, so a missing field is reported by schema validation with its
 * name. Errors thrown here reach the client through Elysia's ParseError, which mapError unwraps.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const bytes = await readCapped(request, maxBytes);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("BadRequest", "Body is not UTF-8 JSON");
  }
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError("BadRequest", "Body is not JSON");
  }
  const problem = shapeProblem(value, MAX_JSON_DEPTH);
  if (problem !== null) throw new ApiError("InvalidRequest", problem);
  return value;
}

async function readCapped(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * What no schema would accept and Elysia's validator cannot report safely: nesting deeper than
 * `limit` (named by its top-level field) or a refused key (named by its path). Iterative, and it stops
 * at the depth limit, so the walk itself cannot overflow the stack (JSON.parse in Bun is iterative).
 */
function shapeProblem(value: unknown, limit: number): string | null {
  if (typeof value !== "object" || value === null) return null;
  const top = Array.isArray(value) ? "body" : null;
  const stack: { node: object; depth: number; path: string[] }[] = [{ node: value, depth: 1, path: [] }];
  while (stack.length > 0) {
    const { node, depth, path } = stack.pop() as (typeof stack)[number];
    if (depth > limit) return `${top ?? path[0] ?? "body"}: nested deeper than ${limit} levels`;
    const isArray = Array.isArray(node);
    for (const [key, child] of Object.entries(node)) {
      if (!isArray && REFUSED_KEYS.has(key)) return `${[...path, key].join(".")}: Unexpected property`;
      if (typeof child === "object" && child !== null)
        stack.push({ node: child, depth: depth + 1, path: [...path, key] });
    }
  }
  return null;
}
