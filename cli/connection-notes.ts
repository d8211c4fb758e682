import type { WsyncClient } from "../core/client/index.ts";

export const ConnectionText = {
  lost: "connection to the server lost; reconnecting…",
  back: (items: number, channels: number) =>
    `connection back; caught up on ${channels} channel${channels === 1 ? "" : "s"} (${items} missed record${items === 1 ? "" : "s"} filled in from history)`,
} as const;

/**
 * Calls `lost` when the live connection drops (after it was up) and `back` once it is up again and
 * every open channel was filled from history (the client's `reconnected`). Returns a function that
 * stops following (call it before disconnecting on purpose, so a clean exit says nothing).
 */
export function followConnection(
  client: WsyncClient,
  on: { lost(): void; back(items: number, channels: number): void },
): () => void {
  let up = client.state.connection === "connected";
  let down = false;
  const offChange = client.events.on("change", (s) => {
    if (s.connection === "connected") up = true;
    else if (up && !down) {
      up = false;
      down = true;
      on.lost();
    }
  });
  const offBack = client.events.on("reconnected", ({ items, channels }) => {
    if (!down) return;
    down = false;
    on.back(items, channels);
  });
  return () => {
    offChange();
    offBack();
  };
}
