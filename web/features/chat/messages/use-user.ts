import { useSyncExternalStore } from "react";
import { subscribe } from "valtio";
import { engineState } from "../../../state/engine.ts";

/*
 * The signed-in user's did and handle, watched on the session's part of the engine's state only.
 * A message row or text that read them through `useSnapshot(engineState)` was told of every change
 * of the whole state (each page of history, each message, typing, presence) and checked it, and a
 * page of history going in mounts and unmounts dozens of rows (issue 28).
 */
const watchAuth = (cb: () => void) => subscribe(engineState.auth, cb);
const myDid = () => engineState.auth.user?.did;
const myHandle = () => engineState.auth.user?.handle;

export const useMyDid = (): string | undefined => useSyncExternalStore(watchAuth, myDid, myDid);
export const useMyHandle = (): string | undefined => useSyncExternalStore(watchAuth, myHandle, myHandle);
