/**
 * Settings of "Sign in with ATProto" (docs/atproto.md): read from the environment in loadAtprotoConfig.
 * - WSYNC_ATPROTO=0 turns the sign-in off (default on).
 * - WSYNC_ATPROTO_PLC_URL: the PLC directory that resolves did:plc (default https://plc.directory).
 * - WSYNC_ATPROTO_HANDLE_RESOLVER: an XRPC service answering com.atproto.identity.resolveHandle, used
 *   instead of DNS and /.well-known lookups (tests point it at the fixture's PDS). What it says is
 *   checked against the DID document's alsoKnownAs either way.
 */
export interface AtprotoConfig {
  enabled: boolean;
  plcUrl: string;
  handleResolver: string | null;
}

export function loadAtprotoConfig(env: Record<string, string | undefined> = process.env): AtprotoConfig {
  return {
    enabled: env.WSYNC_ATPROTO !== "0" && env.WSYNC_ATPROTO !== "false",
    plcUrl: (env.WSYNC_ATPROTO_PLC_URL || "https://plc.directory").replace(/\/+$/, ""),
    handleResolver: env.WSYNC_ATPROTO_HANDLE_RESOLVER || null,
  };
}

/** True for http://127.0.0.1, http://[::1] and http://localhost public URLs (ATProto's loopback rules). */
export function isLoopbackUrl(url: string): boolean {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
