import {
  createRootRoute,
  createRoute,
  createRouter,
  lazyRouteComponent,
  type RouterHistory,
} from "@tanstack/react-router";
import { SyncRoot } from "./SyncRoot.tsx";

/**
 * The messaging area's client routes (spec §2.1): the board and secret-link joins. The same tree
 * renders on the server (memory history) and in the browser. /sync/qr (a later issue) slots in here.
 */
export function createSyncRouter(history: RouterHistory) {
  const root = createRootRoute({ component: SyncRoot });
  const board = createRoute({
    getParentRoute: () => root,
    path: "/sync",
    component: lazyRouteComponent(() => import("./Board.tsx"), "Board"),
  });
  const join = createRoute({
    getParentRoute: () => root,
    path: "/sync/join/$channelId",
    component: lazyRouteComponent(() => import("./JoinRoute.tsx"), "JoinRoute"),
  });
  return createRouter({ routeTree: root.addChildren([board, join]), history });
}

export type SyncRouter = ReturnType<typeof createSyncRouter>;

declare module "@tanstack/react-router" {
  interface Register {
    router: SyncRouter;
  }
}
