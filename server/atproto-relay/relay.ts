import type { Elysia } from "elysia";
import { AtprotoRelayPaths } from "../../core/protocol/atproto-relay.ts";
import { ApiError } from "../../core/protocol/index.ts";
import type { Services } from "../services/services.ts";
import { isLoopbackHost, type RelayConfig } from "./config.ts";

/**
 * Relays the bytes a client needs to check a chat-key proof (core/atproto/verify.ts): a did:plc's
 * audit log from the PLC directory, a did:web's DID document, and the CAR of
 * `com.atproto.sync.getRecord` for `chat.wsync.chatKey/{rkey}` from the DID's PDS. The page's CSP
 * keeps the browser on this origin; the server cannot forge what it relays, because the client
 * verifies every byte (docs/decisions/atproto-key-proofs.md). Signed-in callers only, for dids of
 * accounts on this server, rate limited, with timeouts and size limits.
 */
export const RelayPaths = AtprotoRelayPaths;

const COLLECTION = "chat.wsync.chatKey";
const PLC_DID = /^did:plc:[a-z2-7]{24}$/;
const WEB_DID = /^did:web:[a-z0-9.-]{1,253}(%3a[0-9]{1,5})?$/;
const RKEY = /^[A-Za-z0-9._:~-]{1,512}$/;
const JSON_MAX = 256 * 1024;
const CAR_MAX = 1024 * 1024;

class Upstream extends Error {}

function invalid(field: string, message: string): never {
  throw new ApiError("InvalidRequest", `${field}: ${message}`);
}

/** did:web:host[%3Aport] → https://host[:port]/.well-known/did.json */
function didWebUrl(did: string, cfg: RelayConfig): string {
  const host = decodeURIComponent(did.slice("did:web:".length));
  const loop = isLoopbackHost(host.replace(/:\d+$/, ""));
  return `${cfg.allowLoopbackHttp && loop ? "http" : "https"}://${host}/.well-known/did.json`;
}

/** A PDS endpoint from a DID document is fetched only over https (or http to loopback in a fixture). */
function pdsUrl(endpoint: string, cfg: RelayConfig): URL {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    throw new Upstream("the DID's PDS endpoint is not a URL");
  }
  const ok =
    u.protocol === "https:" ||
    (cfg.allowLoopbackHttp && u.protocol === "http:" && isLoopbackHost(u.hostname));
  if (!ok) throw new Upstream("the DID's PDS endpoint is not https");
  return u;
}

async function fetchBytes(
  url: string,
  cfg: RelayConfig,
  max: number,
  accept: string,
): Promise<Uint8Array<ArrayBuffer> | null> {
  let res: Response;
  try {
    res = await fetch(url, {
      signal: AbortSignal.timeout(cfg.timeoutMs),
      headers: { accept },
      redirect: "error",
    });
  } catch (e) {
    throw new Upstream((e as Error).name === "TimeoutError" ? "timed out" : "unreachable");
  }
  if (res.status === 404 || res.status === 410) return null;
  // getRecord answers 400 RecordNotFound for a path with nothing (older PDSes).
  if (res.status === 400) {
    const body = await res.json().catch(() => null);
    if ((body as { error?: string } | null)?.error === "RecordNotFound") return null;
    throw new Upstream("answered 400");
  }
  if (!res.ok) throw new Upstream(`answered ${res.status}`);
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > max) throw new Upstream("answer too large");
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.length > max) throw new Upstream("answer too large");
  return bytes;
}

export function mountAtprotoRelay(app: Elysia, s: Services, cfg: RelayConfig): void {
  /**
   * The caller is signed in and under its limit; the did is an account on this server that signed in
   * with ATProto (a local account's did resolves nowhere, so nothing is asked of the PLC directory for it).
   */
  const guard = async (request: Request, set: { headers: Record<string, string | number> }) => {
    set.headers["cache-control"] = "no-store";
    const ctx = await s.auth.authenticate(request.headers.get("authorization"));
    await s.limits.check(ctx.did, "atproto");
    const url = new URL(request.url);
    const did = url.searchParams.get("did") ?? "";
    if (!PLC_DID.test(did) && !WEB_DID.test(did)) invalid("did", "not a did:plc or did:web");
    if (!(await s.storage.accounts.byDid(did)) || !(await s.storage.atproto.byDid(did)))
      throw new ApiError("NotFound", "No such ATProto account on this server");
    return { did, url };
  };
  const upstream = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (e) {
      if (!(e instanceof Upstream)) throw e;
      s.log(`atproto relay: ${what} ${e.message}`);
      throw new ApiError("Unavailable", `The ${what} could not be reached: ${e.message}`, 10);
    }
  };
  const notFound = () => new ApiError("NotFound", "Nothing published");

  app.get(RelayPaths.plcLog, async ({ request, set }) => {
    const { did } = await guard(request, set);
    if (!did.startsWith("did:plc:")) invalid("did", "not a did:plc");
    const bytes = await upstream("PLC directory", () =>
      fetchBytes(`${cfg.plcUrl}/${did}/log/audit`, cfg, JSON_MAX, "application/json"),
    );
    if (!bytes) throw notFound();
    return new Response(bytes, {
      headers: { "content-type": "application/json", "cache-control": "no-store" },
    });
  });

  app.get(RelayPaths.didDoc, async ({ request, set }) => {
    const { did } = await guard(request, set);
    if (!did.startsWith("did:web:")) invalid("did", "not a did:web");
    const bytes = await upstream("did:web host", () =>
      fetchBytes(didWebUrl(did, cfg), cfg, JSON_MAX, "application/json"),
    );
    if (!bytes) throw notFound();
    return new Response(bytes, {
      headers: { "content-type": "application/json", "cache-control": "no-store" },
    });
  });

  app.get(RelayPaths.record, async ({ request, set }) => {
    const { did, url } = await guard(request, set);
    const rkey = url.searchParams.get("rkey") ?? "";
    if (!RKEY.test(rkey)) invalid("rkey", "not a record key");
    const bytes = await upstream("PDS", async () => {
      // Where the repository lives: the DID document's #atproto_pds service. Not trusted: the client
      // checks the commit's signature against the key from the verified PLC log.
      const docUrl = did.startsWith("did:plc:") ? `${cfg.plcUrl}/${did}` : didWebUrl(did, cfg);
      const docBytes = await fetchBytes(docUrl, cfg, JSON_MAX, "application/json");
      if (!docBytes) return null;
      let doc: { service?: { id?: string; type?: string; serviceEndpoint?: unknown }[] };
      try {
        doc = JSON.parse(new TextDecoder().decode(docBytes));
      } catch {
        throw new Upstream("the DID document is not JSON");
      }
      const svc = (Array.isArray(doc.service) ? doc.service : []).find(
        (x) => x && (x.id === "#atproto_pds" || x.id === `${did}#atproto_pds`),
      );
      if (!svc || typeof svc.serviceEndpoint !== "string") return null;
      const pds = pdsUrl(svc.serviceEndpoint, cfg);
      const q = new URLSearchParams({ did, collection: COLLECTION, rkey });
      return fetchBytes(
        new URL(`/xrpc/com.atproto.sync.getRecord?${q}`, pds).toString(),
        cfg,
        CAR_MAX,
        "application/vnd.ipld.car",
      );
    });
    if (!bytes) throw notFound();
    return new Response(bytes, {
      headers: { "content-type": "application/vnd.ipld.car", "cache-control": "no-store" },
    });
  });
}
