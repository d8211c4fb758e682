import { useEffect, useState } from "react";
import type { SessionInfo } from "../../../core/protocol/runtime.ts";
import { Modal } from "../../components/Modal.tsx";
import { loadClient } from "../../state/engine.ts";

export const SessionsText = {
  title: "Sessions",
  what: "Where this account is signed in. Signing a session out ends it at once: its open pages are told, and its unsent drafts wait on that device for the next sign-in.",
  loading: "Reading the sessions…",
  current: "This browser",
  other: "Another session",
  signOut: "Sign out",
  signOutOthers: "Sign out everywhere else",
  none: "No other session is signed in.",
  close: "Close",
  ended: (n: number) => (n === 1 ? "1 session signed out." : `${n} sessions signed out.`),
};
const T = SessionsText;

// The browser's own date words (this dialog's chunk does not take the board's display helpers).
const when = (ms: number) =>
  new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });

/**
 * The board's "Sessions" (docs/protocol-extensions.md "Sessions"): this account's signed-in browsers
 * and devices, and signing one out, or all but this one. The server closes an ended session's
 * sockets and refuses its tokens at once; that page says the session ended and keeps its drafts.
 */
export function SessionsDialog({ onClose }: { onClose(): void }) {
  const [sessions, setSessions] = useState<SessionInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const read = async () => {
    setSessions(await (await loadClient()).listSessions());
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: read once, when the dialog opens.
  useEffect(() => {
    read().catch((e) => setError(e instanceof Error ? e.message : String(e)));
  }, []);

  async function act(action: () => Promise<string | null>) {
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      setStatus(await action());
      await read();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  const others = sessions?.filter((s) => !s.current) ?? [];
  return (
    <Modal title={T.title} labelledBy="sessions-title" className="sessions" portal>
      <p className="hint">{T.what}</p>
      {sessions === null && !error ? <p className="status-line">{T.loading}</p> : null}
      {sessions ? (
        <ul className="session-list" aria-label={T.title}>
          {sessions.map((s) => (
            <li key={s.id} className={s.current ? "current" : undefined} data-testid="session">
              <span className="session-name">{s.current ? T.current : T.other}</span>
              <small>
                signed in {when(s.createdAt)} · active {when(s.lastSeenAt)}
              </small>
              {s.current ? null : (
                <button
                  type="button"
                  disabled={busy}
                  aria-label={`${T.signOut}: session signed in ${when(s.createdAt)}`}
                  onClick={() =>
                    void act(async () => {
                      await (await loadClient()).revokeSession(s.id);
                      return T.ended(1);
                    })
                  }
                >
                  {T.signOut}
                </button>
              )}
            </li>
          ))}
        </ul>
      ) : null}
      {sessions && others.length === 0 ? <p className="hint">{T.none}</p> : null}
      {status ? (
        <p className="status-line" role="status">
          {status}
        </p>
      ) : null}
      {error ? (
        <p className="warning" role="alert">
          {error}
        </p>
      ) : null}
      <div className="actions">
        <button
          type="button"
          disabled={busy || others.length === 0}
          onClick={() => void act(async () => T.ended(await (await loadClient()).revokeOtherSessions()))}
        >
          {T.signOutOthers}
        </button>
        <button type="button" data-autofocus onClick={onClose}>
          {T.close}
        </button>
      </div>
    </Modal>
  );
}
