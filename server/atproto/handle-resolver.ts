/**
 * ATProto handle resolution for the OAuth client when no XRPC resolver is configured: DNS TXT
 * `_atproto.HANDLE`, then `https://HANDLE/.well-known/atproto-did` (the kept library's
 * AtprotoHandleResolver does both and their rules). The library's Node resolver cannot be used under
 * Bun: its SSRF guard needs Node's undici and throws at construction ("Unicast SSRF protection
 * requires Node.js 20.6+"), which made every sign-in a 500. The guard here does the same job with
 * what Bun has: https only, every address the name resolves to must be public unicast (no loopback,
 * private, link-local, shared or reserved range), no redirects, a time limit and a size limit.
 * Residual risk (docs/decisions/atproto-confidential-client.md): the check and Bun's own lookup for
 * the connection are two lookups, so a name that changes its answer in between (DNS rebinding) could
 * still reach an inner address with one GET of /.well-known/atproto-did, whose answer is read only as
 * a DID.
 */
import { lookup, resolveTxt } from "node:dns/promises";
import { AtprotoHandleResolver, type HandleResolver } from "@atproto-labs/handle-resolver";
import ipaddr from "ipaddr.js";

/** A DID is at most 2,048 characters: anything much longer is not an answer. */
const MAX_BYTES = 10 * 1024;
const TIMEOUT_MS = 3_000;

/** Whether an IP address is public unicast (ipaddr.js's "unicast" range, after unmapping IPv4-in-IPv6). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === "unicast";
}

type Lookup = (host: string) => Promise<string[]>;

const systemLookup: Lookup = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Reads at most `max` bytes of a body; more is an error. */
async function cappedText(res: Response, max: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new TypeError(`handle resolution: answer over ${max} bytes`);
    }
    parts.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(parts));
}

/**
 * A fetch for the well-known lookup that only reaches public addresses over https (see above).
 * `lookupHost` and `fetchImpl` are for tests.
 */
export function publicOnlyFetch(
  fetchImpl: typeof fetch = fetch,
  lookupHost: Lookup = systemLookup,
): typeof fetch {
  const guarded = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.protocol !== "https:") throw new TypeError("handle resolution: https only");
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const addresses = ipaddr.isValid(host) ? [host] : await lookupHost(host);
    if (addresses.length === 0 || !addresses.every(isPublicAddress))
      throw new TypeError(`handle resolution: ${host} is not a public address`);
    const signals = [AbortSignal.timeout(TIMEOUT_MS), ...(init?.signal ? [init.signal] : [])];
    const res = await fetchImpl(url, { ...init, redirect: "error", signal: AbortSignal.any(signals) });
    const text = await cappedText(res, MAX_BYTES);
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return guarded as typeof fetch;
}

/** DNS TXT records of a name, each record's chunks joined; null when the name has none. */
async function txtRecords(hostname: string): Promise<string[] | null> {
  try {
    return (await resolveTxt(hostname)).map((chunks) => chunks.join(""));
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOTFOUND" || code === "ENODATA" || code === "ESERVFAIL" || code === "ETIMEOUT")
      return null;
    throw e;
  }
}

export function publicHandleResolver(): HandleResolver {
  return new AtprotoHandleResolver({ fetch: publicOnlyFetch(), resolveTxt: txtRecords });
}
