import type { ClientState, WsyncClient } from "../../../core/client/index.ts";

/**
 * What search uses of the board, handed over by the button that loads it (SearchButton.tsx) rather
 * than imported: an import from the search chunk into the board's modules makes the bundler split
 * those modules into more first-load chunks, and /sync has no room for that (its 130 KB budget).
 */
export interface SearchHost {
  state: ClientState;
  client(): Promise<WsyncClient>;
  select(channelId: string): Promise<void>;
  displaySafe(text: string): string;
  handleWithoutSuffix(handle: string): string;
}

let current: SearchHost | null = null;

export function setHost(h: SearchHost): void {
  current = h;
}

export function host(): SearchHost {
  if (!current) throw new Error("search was loaded without its host");
  return current;
}
