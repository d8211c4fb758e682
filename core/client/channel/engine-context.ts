import type { Keyring } from "../keys/keyring.ts";
import type { ApiClient } from "../net/api.ts";
import type { Realtime } from "../net/realtime.ts";
import type { ClientEvents, ClientState } from "../view/state.ts";

/** What the per-channel engine (ChannelEngine and its EpochManager) is given by the client. */
export interface EngineContext {
  state: ClientState;
  api: ApiClient;
  realtime: Realtime;
  keyring: Keyring;
  me(): { did: string; handle: string };
  now(): number;
  changed(): void;
  emit<K extends keyof ClientEvents>(event: K, payload: ClientEvents[K]): void;
  log(message: string): void;
}
