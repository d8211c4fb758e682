/**
 * Islands: the interactive roots inside a server-rendered page. Each has an element id and, when it
 * needs them, JSON props in a non-executable <script type="application/json"> next to it (allowed
 * by the CSP, since it never runs).
 */
export const Islands = {
  login: "island-login",
  register: "island-register",
  sync: "island-sync",
  weather: "island-weather",
  community: "island-community",
} as const;

export type IslandName = keyof typeof Islands;

export const propsId = (name: IslandName) => `${Islands[name]}-props`;

/** Reads an island's props in the browser. */
export function islandProps<T>(name: IslandName): T {
  const el = document.getElementById(propsId(name));
  return (el ? JSON.parse(el.textContent ?? "{}") : {}) as T;
}

/** Makes props safe to embed in HTML: no "</script>" or comment openers can close the element. */
export function serializeProps(props: unknown): string {
  return JSON.stringify(props).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
}
