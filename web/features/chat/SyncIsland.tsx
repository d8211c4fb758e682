import { RouterProvider } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { Spinner } from "../../components/Spinner.tsx";
import type { SyncRouter } from "./sync-router.tsx";

/**
 * The messaging area's island. Nothing in it can be shown before the browser has read the stored
 * session and keys, so the server renders its loading state (spec §2.1: a spinner while stored
 * credentials load); the browser hydrates that same markup, then hands the island to the router.
 */
export function SyncIsland({ router }: { router?: SyncRouter }) {
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  if (!mounted || !router) return <Spinner label="Loading" />;
  return <RouterProvider router={router} />;
}
