import { Outlet } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { useSnapshot } from "valtio";
import { AtprotoSignIn } from "../../../core/protocol/atproto-signin.ts";
import { ApiError } from "../../../core/protocol/runtime.ts";
import { AppToasts } from "../../components/AppToasts.tsx";
import { retryFailedParts } from "../../components/lazy-part.tsx";
import { Spinner } from "../../components/Spinner.tsx";
import { authState, authUi } from "../../state/auth.ts";
import { hasStoredAuth, storedDid } from "../../state/browser-store.ts";
import { loadClient } from "../../state/engine.ts";
import { rememberJoin, sessionEnded, setDraftOwner } from "../../state/resume.ts";
import { KeysLostModal, KeysModal, PrivateKeyValidationModal } from "../auth/lazy-modals.tsx";

/**
 * The guard of the messaging area (spec §2.1): no stored did + token → /login (replacing history);
 * a spinner while the stored session is checked; a rejected session (401) → the site root. Keys that
 * need validating, or are lost, or a registration whose keys were not confirmed yet, show their modal
 * instead of the board.
 */
export function SyncRoot() {
  const auth = useSnapshot(authState);
  const ui = useSnapshot(authUi);
  const [checked, setChecked] = useState(false);
  useEffect(() => {
    // Just back from "Sign in with ATProto": the server set the session's cookie, nothing is stored
    // yet (docs/atproto.md). The mark leaves the address at once.
    const [param, value] = AtprotoSignIn.landingParam;
    const url = new URL(window.location.href);
    const fromCookie = url.searchParams.get(param) === value;
    if (fromCookie) {
      url.searchParams.delete(param);
      window.history.replaceState(window.history.state, "", `${url.pathname}${url.search}${url.hash}`);
    }
    if (!hasStoredAuth() && !fromCookie) {
      // An invite link opened signed out is joined after sign-in (web/state/resume.ts).
      rememberJoin(window.location);
      window.location.replace("/login");
      return;
    }
    let offEnded = () => {};
    void loadClient().then((client) => {
      // The session ended (expired, revoked, signed out elsewhere): /login says so, and the channel
      // and drafts come back after the same user signs in again.
      // What was open is read while signed in: when the end is noticed, the engine has cleared it.
      // A session found ended on load: the stored sign-in names the account and the URL the channel
      // (web/state/resume.ts keeps the drafts per account).
      const last = {
        did: storedDid(),
        channelId: /^\/sync\/c\/([^/]+)/.exec(window.location.pathname)?.[1] ?? null,
      };
      let connection = client.state.connection;
      let reconnect = false;
      const offChange = client.events.on("change", () => {
        // Back in touch with the server: parts that failed to load during the outage load now, and
        // the channel list (and the counts it carries) is read again after a reconnection.
        if (client.state.connection !== connection) {
          connection = client.state.connection;
          if (connection === "connected") {
            retryFailedParts();
            if (reconnect) void client.refreshChannels().catch(() => undefined);
            reconnect = true;
          }
        }
        if (!client.state.auth.isAuthenticated) return;
        last.did = client.state.auth.user?.did ?? null;
        last.channelId = client.state.currentChannelId;
        setDraftOwner(last.did);
      });
      const ended = () => sessionEnded(last);
      const offSession = client.events.on("session-ended", ended);
      offEnded = () => {
        offChange();
        offSession();
      };
      return client
        .restore({ fromCookie })
        .then((restored) => {
          // Nothing to take up (a page that keeps no cookie session, outside a secure context): sign in.
          if (!restored && fromCookie && !hasStoredAuth()) {
            window.location.replace("/login");
            return;
          }
          setChecked(true);
          if (client.state.auth.keyState === "ready") client.connect();
        })
        .catch((e) => {
          if (e instanceof ApiError && e.status === 401) {
            rememberJoin(window.location);
            ended();
          } else setChecked(true);
        });
    });
    return () => offEnded();
  }, []);

  // The same keys as at registration, after a reload before "I've Saved My Keys"; then the board.
  if (checked && auth.keyState === "unconfirmed") {
    return <KeysModal onSaved={() => void loadClient().then((c) => c.connect())} />;
  }
  if (!checked || !auth.isAuthenticated) return <Spinner label="Loading" />;
  // "Make new keys" makes the key state ready while the modal still shows the new keys.
  if (auth.keyState === "validate" || ui.replacingKeys) return <PrivateKeyValidationModal />;
  if (auth.keyState === "lost") return <KeysLostModal />;
  return (
    <>
      <Outlet />
      <AppToasts />
    </>
  );
}
