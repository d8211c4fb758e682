import { useSnapshot } from "valtio";
import { conversationTitle } from "../../../../core/client/view/conversation-title.ts";
import { handleWithoutSuffix } from "../../../../core/client/view/display.ts";
import { displaySafe } from "../../../../core/slash-commands/display-safe.ts";
import { acceptRequest, blockPerson, deleteConversation, unblockPerson } from "../../../state/direct.ts";
import { engineState } from "../../../state/engine.ts";
import { openDirect } from "./open.ts";

const show = (handle: string) => displaySafe(handleWithoutSuffix(handle));

/**
 * Message requests (issue 30, as Signal has them): conversations opened by someone who shares no
 * channel with this user and whom they never wrote to. They stay apart, do not notify and are not
 * kept live until taken in: Accept moves one to "Direct messages", Block refuses the person (the
 * server turns their messages away) and deletes it, Delete only deletes it. Opening one reads it
 * without accepting. Below, the people blocked, each with Unblock.
 */
export function DirectRequests() {
  const s = useSnapshot(engineState);
  const me = s.auth.user?.did ?? null;
  const requests = (s.conversations ?? []).filter((c) => c.request);
  return (
    <section className="sb-requests" aria-label="Message requests">
      {requests.length ? (
        <>
          <h3>Requests</h3>
          <ul>
            {requests.map((c) => {
              const id = c.channel.id;
              return (
                <li key={id} data-testid="request">
                  <button type="button" className="sb-request-open" onClick={() => void openDirect(id)}>
                    {displaySafe(conversationTitle(c, me, handleWithoutSuffix))}
                  </button>
                  {c.kind === "group" ? <small>from {show(c.openedBy.handle)}</small> : null}
                  <span className="sb-request-actions">
                    <button type="button" onClick={() => void acceptRequest(id)}>
                      Accept
                    </button>
                    <button
                      type="button"
                      className="danger"
                      onClick={() => void blockPerson(c.openedBy.did, id)}
                    >
                      Block
                    </button>
                    <button type="button" onClick={() => void deleteConversation(id)}>
                      Delete
                    </button>
                  </span>
                </li>
              );
            })}
          </ul>
        </>
      ) : null}
      {s.blocked?.length ? (
        <details className="sb-blocked">
          <summary>Blocked ({s.blocked.length})</summary>
          <ul>
            {s.blocked.map((b) => (
              <li key={b.did}>
                <span>{show(b.handle)}</span>
                <button type="button" onClick={() => void unblockPerson(b.did)}>
                  Unblock
                </button>
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </section>
  );
}
