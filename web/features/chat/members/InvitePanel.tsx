import { useState } from "react";
import { toast } from "../../../components/toast.ts";
import { inviteToChannel } from "../../../state/channel-actions.ts";

/** Spec §2.8 invite section (not on public channels): a handle and SEND. */
export function InvitePanel({ channelId }: { channelId: string }) {
  const [handle, setHandle] = useState("");
  const [busy, setBusy] = useState(false);
  const h = handle.trim();
  return (
    <form
      className="invite"
      onSubmit={(e) => {
        e.preventDefault();
        if (!h || busy) return;
        setBusy(true);
        inviteToChannel(channelId, h)
          .then(
            () => {
              toast.success(`Invite sent to ${h}`);
              setHandle("");
            },
            (err) => toast.error(err instanceof Error && err.message ? err.message : "Failed to send invite"),
          )
          .finally(() => setBusy(false));
      }}
    >
      <h4>INVITE_NODE</h4>
      <input
        value={handle}
        onChange={(e) => setHandle(e.target.value)}
        placeholder="handle"
        aria-label="Handle to invite"
        autoComplete="off"
      />
      <button type="submit" disabled={busy || !h}>
        SEND
      </button>
    </form>
  );
}
