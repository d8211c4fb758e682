import { createRootRoute, createRoute, createRouter, type RouterHistory } from "@tanstack/react-router";
import { lazyPart, PartError } from "../../components/lazy-part.tsx";
import { Spinner } from "../../components/Spinner.tsx";
import { SyncRoot } from "./SyncRoot.tsx";

/**
 * The messaging area's client routes (spec §2.1): the board (`/sync`, and `/sync/c/{channelId}` with
 * that channel open) and secret-link joins. The same tree
 * renders on the server (memory history) and in the browser; /sync/qr is the key-image page.
 */
export function createSyncRouter(history: RouterHistory) {
  const root = createRootRoute({ component: SyncRoot });
  const board = createRoute({
    getParentRoute: () => root,
    path: "/sync",
    component: lazyPart(
      () => import("./Board.tsx").then((m) => m.Board),
      "the board",
      <Spinner label="Loading" />,
    ),
  });
  // The open channel lives in the URL (Back, reload and bookmarks return to it); the board reads it.
  const channel = createRoute({
    getParentRoute: () => board,
    path: "c/$channelId",
    component: () => null,
  });
  const join = createRoute({
    getParentRoute: () => root,
    path: "/sync/join/$channelId",
    component: lazyPart(
      () => import("./JoinRoute.tsx").then((m) => m.JoinRoute),
      "the join page",
      <Spinner label="Loading" />,
    ),
  });
  const keyImage = createRoute({
    getParentRoute: () => root,
    path: "/sync/qr",
    component: lazyPart(
      () => import("../keys/KeyImagePage.tsx").then((m) => m.KeyImagePage),
      "the key image page",
      <Spinner label="Loading" />,
    ),
  });
  return createRouter({
    routeTree: root.addChildren([board.addChildren([channel]), join, keyImage]),
    history,
    // A route that throws shows a retry in its place, never the router's page-wide default.
    defaultErrorComponent: ({ reset }) => <PartError label="this view" onRetry={reset} />,
  });
}

/**
 * Whether a loaded router's location is one of its routes. An unknown path still matches its nearest
 * parent (fuzzy not-found), marked `_notFound` by this TanStack version (`globalNotFound` by older ones).
 */
export function matchesKnownRoute(router: ReturnType<typeof createSyncRouter>): boolean {
  return !router.state.matches.some((m) => {
    const flags = m as { _notFound?: boolean; globalNotFound?: boolean };
    return m.status === "notFound" || Boolean(flags._notFound || flags.globalNotFound);
  });
}

export type SyncRouter = ReturnType<typeof createSyncRouter>;

declare module "@tanstack/react-router" {
  interface Register {
    router: SyncRouter;
  }
}
