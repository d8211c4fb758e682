import { createContext, useContext, useMemo } from "react";
import type { Snapshot } from "valtio";
import type { Member } from "../../../../core/protocol/index.ts";

/*
 * The dids of a channel's members who signed in with ATProto (Member.atproto), for the badge beside
 * their names in the list. Given by the list once, as a set whose identity changes only when that set
 * of dids does, so a message row neither watches the whole engine state nor draws again when a member
 * comes online (issue 28's rows and issue 33's badge).
 */
const NONE: ReadonlySet<string> = new Set();
export const AtprotoAuthors = createContext<ReadonlySet<string>>(NONE);

export function useAtprotoAuthorSet(members: readonly Snapshot<Member>[] | undefined): ReadonlySet<string> {
  // Worked out again only when the member list changes, not on every message the list draws.
  const key = useMemo(
    () =>
      (members ?? [])
        .filter((m) => m.atproto)
        .map((m) => m.did)
        .sort()
        .join(" "),
    [members],
  );
  return useMemo(() => (key ? new Set(key.split(" ")) : NONE), [key]);
}

export function useIsAtprotoAuthor(did: string | undefined): boolean {
  const authors = useContext(AtprotoAuthors);
  return !!did && authors.has(did);
}
