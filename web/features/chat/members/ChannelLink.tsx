import { useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { toast } from "../../../components/toast.ts";
import { rotateLink } from "../../../state/channel-actions.ts";
import { engineState } from "../../../state/engine.ts";

const why = (e: unknown) => (e instanceof Error && e.message ? e.message : String(e));

/**
 * A secret channel's link in the info panel (protocol §7). Only members know it (the engine reads it
 * from the sealed epoch state, so `link` is null for anyone else); the owner can also rotate it,
 * which voids the old link at once. After a kick the engine rotates it by itself and the new link
 * simply appears here.
 */
export function ChannelLink({ channelId }: { channelId: string }) {
  const s = useSnapshot(engineState);
  // The link that was copied, so "Copied!" does not outlive a rotation.
  const [copied, setCopied] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  const view = s.open[channelId];
  if (view?.channel.value.type !== "secret") return null;
  const me = s.auth.user?.did;
  const owner = view.channel.role === "owner" || view.members.some((m) => m.isOwner && m.did === me);
  const link = view.link;
  if (!link && !owner) return null;

  const copy = async (value: string) => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(value);
      setTimeout(() => setCopied((c) => (c === value ? null : c)), 2000);
    } catch {
      // No clipboard (plain http, or refused): select the link so it can be copied by hand.
      field.current?.select();
    }
  };
  const rotate = () => {
    setBusy(true);
    rotateLink(channelId)
      .catch((e) => toast.error(why(e)))
      .finally(() => setBusy(false));
  };

  return (
    <div className="channel-link" data-testid="channel-link">
      <h4>CHANNEL_LINK</h4>
      {link ? (
        <div className="cc-copy">
          <input
            ref={field}
            readOnly
            value={link}
            aria-label="Channel Link"
            onFocus={(e) => e.target.select()}
          />
          <button type="button" onClick={() => void copy(link)}>
            {copied === link ? "Copied!" : "Copy"}
          </button>
        </div>
      ) : null}
      {owner ? (
        <button type="button" className="danger" disabled={busy} aria-busy={busy} onClick={rotate}>
          Rotate link
        </button>
      ) : null}
    </div>
  );
}
