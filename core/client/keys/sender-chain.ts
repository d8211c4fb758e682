import { toHex } from "../../crypto/bytes.ts";
import { fingerprint } from "../../crypto/fingerprint.ts";
import { randomBytes } from "../../crypto/random.ts";
import { type KeyValueStore, updateValue } from "../store.ts";

/** This device's chains as stored: the identity they belong to, the device id, the last n per channel. */
interface Stored {
  fp: string;
  device: string;
  sent: Record<string, number>;
}

const KEY = "wsync-device";

function parse(raw: string | null, fp: string): Stored {
  try {
    const held = raw ? (JSON.parse(raw) as Partial<Stored>) : null;
    if (
      held &&
      held.fp === fp &&
      typeof held.device === "string" &&
      typeof held.sent === "object" &&
      held.sent
    ) {
      return held as Stored;
    }
  } catch {
    // A damaged entry: a new device id (its chains start at 1, which readers accept).
  }
  return { fp, device: toHex(randomBytes(16)), sent: {} };
}

/**
 * This device's sender chains (protocol §8 "Sender chains"): a `device` id made once per identity
 * and kept, and per channel the number of the last message this device sent there. Every message of
 * any plaintext type takes the next number, so a reader sees a skipped number as a withheld message.
 * Everything lives in one store entry moved with the store's atomic update: processes or tabs sharing
 * one device never take the same number. A new identity (new keys, a restored or linked device that
 * starts afresh) gets a new device id, whose chains start at 1.
 */
export class SenderChains {
  constructor(private readonly store: KeyValueStore) {}

  /** The device id of this identity on this device. */
  async device(publicKey: string): Promise<string> {
    const fp = await fingerprint(publicKey);
    const raw = await updateValue(this.store, KEY, (current) => JSON.stringify(parse(current, fp)));
    return (JSON.parse(raw) as Stored).device;
  }

  /** Takes the next number of this device's chain in the channel. */
  async next(publicKey: string, channelId: string): Promise<{ device: string; n: number }> {
    const fp = await fingerprint(publicKey);
    const raw = await updateValue(this.store, KEY, (current) => {
      const s = parse(current, fp);
      s.sent[channelId] = (s.sent[channelId] ?? 0) + 1;
      return JSON.stringify(s);
    });
    const s = JSON.parse(raw) as Stored;
    return { device: s.device, n: s.sent[channelId] as number };
  }

  /**
   * Gives a number back when the message that took it was refused for good and no later number was
   * taken meanwhile (so a refused send leaves no gap that would read as withheld).
   */
  async giveBack(publicKey: string, channelId: string, taken: { device: string; n: number }): Promise<void> {
    const fp = await fingerprint(publicKey);
    await updateValue(this.store, KEY, (current) => {
      const s = parse(current, fp);
      if (s.device === taken.device && s.sent[channelId] === taken.n) s.sent[channelId] = taken.n - 1;
      return JSON.stringify(s);
    });
  }

  /** Logout: this device's chains end with its keys. */
  async clear(): Promise<void> {
    await this.store.delete(KEY);
  }
}
