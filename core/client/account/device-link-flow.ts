import {
  checkPrivateKey,
  formatDeviceLinkCode,
  fromBase64,
  newDeviceLinkCode,
  newLinkEphemeral,
  normalizeDeviceLinkCode,
  openDeviceLink,
  sealDeviceLink,
  toBase64,
  toBase64Url,
} from "../../crypto/index.ts";
import { ApiError, DeviceLink } from "../../protocol/runtime.ts";
import type { Keyring } from "../keys/keyring.ts";
import type { TrustOrigin, TrustState } from "../keys/trust.ts";
import type { ApiClient } from "../net/api.ts";

/**
 * Linking a new device from a signed-in one (protocol §8 "Fresh devices"; docs/device-linking.md):
 * the new device shows a code with its ephemeral public key (as text and as a QR image), the user
 * types or scans it on the existing device, both show the same six digits, and once the user says
 * they match the existing device sends the identity key and its trust state, sealed to the new
 * device's key, through the server. The new device checks the key is the account's and takes the
 * trust state as its own: it does not start from the server's word alone.
 *
 * The new device's key reaches the existing device out of band (the text or QR the user carries),
 * so the server cannot swap it; the digits then catch an envelope the server made itself.
 */

/** Why linking stopped, for callers that map it (the CLI's exit codes). */
export type DeviceLinkProblem =
  | "not-a-code"
  | "no-slot"
  | "key-mismatch"
  | "not-exportable"
  | "expired"
  | "cancelled"
  | "bad-payload";

export class DeviceLinkError extends Error {
  constructor(
    readonly problem: DeviceLinkProblem,
    message: string,
  ) {
    super(message);
    this.name = "DeviceLinkError";
  }
}

/** What the new device shows: the code the user carries to the existing device. */
export interface LinkOffer {
  /** The slot's code, canonical. */
  code: string;
  /** "xxxxx-xxxxx.<key>": the code and the new device's ephemeral key, to type or to put in a QR. */
  text: string;
  expiresAt: number;
}

/** The payload sealed to the new device (docs/device-linking.md). */
interface LinkPayload {
  v: 3;
  did: string;
  privateKey: string;
  trust: TrustState;
}

export interface DeviceLinkContext {
  api: ApiClient;
  keyring: Keyring;
  now(): number;
  me(): { did: string; handle: string };
  /** The account's public key as the server has it (the new device checks the key it receives). */
  accountPublicKey(): string | null;
  /** The signed-in device's private key for the envelope (null where it cannot be exported). */
  exportPrivateKey(): Promise<string | null>;
  /** Stores a checked private key on this device and finishes signing in (AuthFlow). */
  installKey(privateKey: string, publicKey: string, origin: TrustOrigin): Promise<void>;
  /** After the key was sent to another device (it is then secured beyond this one). */
  sent?(): Promise<void>;
}

/** Parses what the new device shows: its code and its ephemeral public key (65 raw bytes). */
export function parseLinkText(text: string): { code: string; newDeviceKey: Uint8Array } | null {
  const [codePart, keyPart, ...rest] = text.trim().split(".");
  if (!codePart || !keyPart || rest.length > 0) return null;
  const code = normalizeDeviceLinkCode(codePart);
  if (!code) return null;
  try {
    const key = fromBase64(keyPart.replace(/\s+/g, ""));
    return key.length === 65 && key[0] === 0x04 ? { code, newDeviceKey: key } : null;
  } catch {
    return null;
  }
}

export class DeviceLinkFlow {
  constructor(private readonly c: DeviceLinkContext) {}

  // ---- the new device ------------------------------------------------------------------------

  /**
   * Opens a slot for this device (signed in with the account's password, without its key) and returns
   * what to show. `receive` then waits for the envelope.
   */
  async offer(): Promise<{ offer: LinkOffer; receive: (signal?: AbortSignal) => Promise<LinkReceived> }> {
    const code = newDeviceLinkCode();
    const eph = await newLinkEphemeral();
    const { expiresAt } = await this.c.api.call("deviceLinkOpen", {
      code,
      ephemeralPublicKey: eph.publicKey,
    });
    const offer: LinkOffer = {
      code,
      text: `${formatDeviceLinkCode(code)}.${toBase64Url(eph.publicRaw)}`,
      expiresAt,
    };
    const receive = async (signal?: AbortSignal): Promise<LinkReceived> => {
      for (;;) {
        if (signal?.aborted) throw new DeviceLinkError("cancelled", "Linking was cancelled");
        if (this.c.now() > expiresAt)
          throw new DeviceLinkError("expired", "The link code expired: start again");
        const { envelope } = await this.c.api.call("deviceLinkFetch", undefined, {
          params: { code },
          timeoutMs: DeviceLink.pollMs + 15_000,
          ...(signal ? { signal } : {}),
        });
        // Cancelled while the answer was on its way: what came is not taken.
        if (signal?.aborted) throw new DeviceLinkError("cancelled", "Linking was cancelled");
        if (envelope === null) continue;
        const opened = await openDeviceLink({ code, myEphemeral: eph, envelope });
        return { confirmation: opened.confirmation, accept: () => this.accept(opened.payload) };
      }
    };
    return { offer, receive };
  }

  /** After the user saw the same digits on both devices: the key and trust state become this device's. */
  private async accept(raw: Record<string, unknown>): Promise<void> {
    const payload = raw as unknown as LinkPayload;
    if (payload.v !== 3 || payload.did !== this.c.me().did || typeof payload.privateKey !== "string") {
      throw new DeviceLinkError("bad-payload", "The linked device sent something this device cannot use");
    }
    const { privateKey, identity } = await checkPrivateKey(payload.privateKey, this.c.accountPublicKey());
    const origin: TrustOrigin = { source: "link", since: payload.trust?.createdAt ?? this.c.now() };
    // The trust state goes in before the key: installing the key shows the board, which opens
    // channels, and they must start at the heads the other device verified.
    await this.c.keyring.trust.import(payload.trust, origin);
    await this.c.installKey(privateKey, identity.publicKey, origin);
  }

  // ---- the signed-in device ------------------------------------------------------------------

  /**
   * The existing device's side, from the text (or QR) the new device shows: the six digits to compare,
   * and `send` to call once the user says they match.
   */
  async prepare(text: string): Promise<{ confirmation: string; send: () => Promise<void> }> {
    const parsed = parseLinkText(text);
    if (!parsed)
      throw new DeviceLinkError(
        "not-a-code",
        "That is not a device link code: type it as the new device shows it",
      );
    const { code, newDeviceKey } = parsed;
    // The server's copy of the slot must hold the same key the user carried over.
    const slot = await this.c.api.call("deviceLinkLookup", { code }).catch((e) => {
      if (e instanceof ApiError && e.status === 404)
        throw new DeviceLinkError("no-slot", "No device is waiting with that code (it may have expired)");
      throw e;
    });
    if (slot.ephemeralPublicKey !== toBase64(newDeviceKey)) {
      throw new DeviceLinkError(
        "key-mismatch",
        "The server holds another key for that code: do not link, and start again on the new device",
      );
    }
    const privateKey = await this.c.exportPrivateKey();
    if (!privateKey)
      throw new DeviceLinkError(
        "not-exportable",
        "This device cannot hand its key over (it is not exportable here)",
      );
    const payload: LinkPayload = {
      v: 3,
      did: this.c.me().did,
      privateKey,
      trust: await this.c.keyring.trust.export(this.c.now()),
    };
    const sealed = await sealDeviceLink({ code, newDevicePublicKey: newDeviceKey, payload });
    return {
      confirmation: sealed.confirmation,
      send: async () => {
        await this.c.api.call("deviceLinkComplete", { code, envelope: sealed.envelope });
        await this.c.sent?.();
      },
    };
  }
}

/** What the new device received: the digits to compare and the step that takes the key. */
export interface LinkReceived {
  confirmation: string;
  accept: () => Promise<void>;
}
