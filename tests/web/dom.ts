/**
 * A happy-dom window as the global DOM for component tests. react-dom decides when it loads whether a
 * DOM exists, so it must load after this module has run: tests/web/harness.ts imports it dynamically.
 */
import { Window } from "happy-dom";

const win = new Window({ url: "http://localhost:3400/sync", width: 1280, height: 800 });
const g = globalThis as Record<string, unknown>;

// Every window property Bun does not already define (document, HTMLElement, Event classes,
// localStorage, getComputedStyle, ...). Bun's own fetch, URL, timers and the like stay.
for (const key of Object.getOwnPropertyNames(win)) {
  if (key in g) continue;
  const value = (win as unknown as Record<string, unknown>)[key];
  g[key] = typeof value === "function" && !/^[A-Z]/.test(key) ? value.bind(win) : value;
}
g.window = win;
g.document = win.document;
g.navigator = win.navigator;
g.localStorage = win.localStorage;
g.sessionStorage = win.sessionStorage;
g.location = win.location;
// React warns about updates outside act() unless it knows it runs in a test.
g.IS_REACT_ACT_ENVIRONMENT = true;

export { win };
