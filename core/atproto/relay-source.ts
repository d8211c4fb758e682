import { AtprotoRelayPaths } from "../protocol/atproto-relay.ts";
import type { ProofSource } from "./verify.ts";

/**
 * A ProofSource over the wsync server's relay (server/atproto-relay): `get` sends an authenticated GET
 * to the server's origin and returns the Response. 404 means nothing is published; any other failure
 * throws (the check is then "unavailable", not a verdict). The bytes are checked by verify.ts.
 */
export function relaySource(get: (pathAndQuery: string) => Promise<Response>): ProofSource {
  const fetchOk = async (path: string, params: Record<string, string>): Promise<Response | null> => {
    const res = await get(`${path}?${new URLSearchParams(params)}`);
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`the server's relay answered ${res.status}`);
    return res;
  };
  return {
    async plcLog(did) {
      const res = await fetchOk(AtprotoRelayPaths.plcLog, { did });
      return res ? await res.json() : null;
    },
    async didDocument(did) {
      const res = await fetchOk(AtprotoRelayPaths.didDoc, { did });
      return res ? await res.json() : null;
    },
    async record(did, rkey) {
      const res = await fetchOk(AtprotoRelayPaths.record, { did, rkey });
      return res ? new Uint8Array(await res.arrayBuffer()) : null;
    },
  };
}
