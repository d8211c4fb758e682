/**
 * "Open at this message" (a search result, web/features/search/open-at.ts) asks the open message
 * list, which is virtualized, to bring a message's row into view: the list scrolls to it, renders it
 * and hands it back through `done` (null when the message is not among its rows).
 */
export const REVEAL_EVENT = "wsync:reveal-message";

export interface RevealRequest {
  channelId: string;
  uri: string;
  done: (row: HTMLElement | null) => void;
}
