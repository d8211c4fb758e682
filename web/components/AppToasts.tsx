import { useEffect } from "react";
import { lazyPart } from "./lazy-part.tsx";
import { preloadToastsOnInteraction, useToastsWanted } from "./toast.ts";

const ToastList = lazyPart(() => import("./Toasts.tsx").then((m) => m.Toasts), "the notifications");

/** A page's toasts (toast.ts): mounted, and their code loaded, once one is asked for or the user interacts. */
export function AppToasts() {
  useEffect(preloadToastsOnInteraction, []);
  return useToastsWanted() ? <ToastList /> : null;
}
