import { ApiError } from "../../core/protocol/index.ts";

/**
 * Reads a JSON body with a byte limit. The declared length is checked before reading; the actual
 * length after (Bun caps what it buffers at the server's maxRequestBodySize). An empty body is `{}`,
 * so a missing field is reported by schema validation with its name.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new ApiError("TooLarge", `Body is larger than ${maxBytes} bytes`);
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length > maxBytes) throw new ApiError("TooLarge", `Body is larger than ${maxBytes} bytes`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("BadRequest", "Body is not UTF-8 JSON");
  }
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("BadRequest", "Body is not JSON");
  }
}
