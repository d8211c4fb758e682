import { afterEach, beforeEach, describe } from "bun:test";
import type { Storage } from "../../../server/storage/types.ts";
import { accountsContract, sessionsContract } from "./contract-accounts.ts";
import { atprotoContract } from "./contract-atproto.ts";
import { channelsContract } from "./contract-channels.ts";
import { epochsContract } from "./contract-epochs.ts";
import { keyCustodyContract } from "./contract-key-custody.ts";
import { concurrencyContract, timelineContract } from "./contract-timeline.ts";
import { v2Contract } from "./contract-v2.ts";
import { v3Contract } from "./contract-v3.ts";
import { World } from "./fixtures.ts";

export type OpenStorage = () => Promise<{ storage: Storage; cleanup(): Promise<void> }>;

/**
 * The behaviour every Storage implementation must have (server/storage/types.ts): each method of
 * each aggregate and every documented invariant, through the async interfaces only. Nothing here may
 * know which database sits behind them, so the PostgreSQL implementation runs this suite unchanged.
 * `open` must return an empty storage each time; it is called before every test.
 */
export function storageContract(name: string, open: OpenStorage): void {
  describe(`storage contract: ${name}`, () => {
    let opened: Awaited<ReturnType<OpenStorage>> | null = null;
    let world: World | null = null;
    beforeEach(async () => {
      opened = await open();
      world = new World(opened.storage);
    });
    afterEach(async () => {
      await opened?.cleanup();
      opened = null;
      world = null;
    });
    const w = (): World => {
      if (!world) throw new Error("storage is not open");
      return world;
    };
    accountsContract(w);
    sessionsContract(w);
    channelsContract(w);
    epochsContract(w);
    timelineContract(w);
    concurrencyContract(w);
    v2Contract(w);
    v3Contract(w);
    keyCustodyContract(w);
    atprotoContract(w);
  });
}
