import { isIP } from "node:net";

/** The relay's settings (README's settings table). */
export interface RelayConfig {
  /** WSYNC_ATPROTO_PLC_URL: the PLC directory (default https://plc.directory). */
  plcUrl: string;
  /** WSYNC_ATPROTO_TIMEOUT_MS: how long one upstream fetch may take (default 5000, 100–30000). */
  timeoutMs: number;
  /**
   * Plain http to a PDS or did:web host, only when the PLC directory itself is on a loopback http
   * URL (a local fixture): then only to loopback hosts. Otherwise https only.
   */
  allowLoopbackHttp: boolean;
}

export class RelayConfigError extends Error {
  override readonly name = "ConfigError";
}

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  return h === "::1";
}

export function relayConfig(env: Record<string, string | undefined>): RelayConfig {
  const plcUrl = (env.WSYNC_ATPROTO_PLC_URL || "https://plc.directory").replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(plcUrl);
  } catch {
    throw new RelayConfigError(`WSYNC_ATPROTO_PLC_URL is not a URL: "${plcUrl}"`);
  }
  const loopbackHttp = url.protocol === "http:" && isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !loopbackHttp)
    throw new RelayConfigError("WSYNC_ATPROTO_PLC_URL must be https (or http on a loopback address)");
  const raw = env.WSYNC_ATPROTO_TIMEOUT_MS;
  const timeoutMs = raw === undefined || raw === "" ? 5000 : Number(raw);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 30_000)
    throw new RelayConfigError(
      "WSYNC_ATPROTO_TIMEOUT_MS must be a whole number of milliseconds from 100 to 30000",
    );
  return { plcUrl, timeoutMs, allowLoopbackHttp: loopbackHttp };
}
