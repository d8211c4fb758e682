import { ApiError } from "../../core/protocol/index.ts";

/**
 * Deepest nesting of arrays and objects a body may have. The deepest protocol body (create-epoch)
 * nests 4 levels; the limit exists because Elysia's ValidationError serializes the offending value
 * recursively, so a few thousand levels overflowed the stack and answered 500.
 */
export const MAX_JSON_DEPTH = 32;

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
  const deep = tooDeep(value, MAX_JSON_DEPTH);
  if (deep !== null)
    throw new ApiError("InvalidRequest", `${deep}: nested deeper than ${MAX_JSON_DEPTH} levels`);
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
 * The name of the top-level field (or "body") under which `value` nests deeper than `limit`, or null.
 * Iterative, so the check itself cannot overflow the stack (JSON.parse in Bun is iterative too).
 */
function tooDeep(value: unknown, limit: number): string | null {
  if (typeof value !== "object" || value === null) return null;
  const tops: [string, unknown][] = Array.isArray(value)
    ? [["body", value]]
    : Object.entries(value).map(([k, v]) => [k, v]);
  for (const [name, top] of tops) {
    const startDepth = Array.isArray(value) ? 1 : 2;
    if (typeof top !== "object" || top === null) continue;
    const stack: [unknown, number][] = [[top, startDepth]];
    while (stack.length > 0) {
      const [node, depth] = stack.pop() as [unknown, number];
      if (depth > limit) return name;
      const children = Array.isArray(node) ? node : Object.values(node as object);
      for (const child of children) {
        if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
      }
    }
  }
  return null;
}
