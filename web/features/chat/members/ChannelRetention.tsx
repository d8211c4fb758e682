import { useState } from "react";
import { useSnapshot } from "valtio";
import { Retention } from "../../../../core/protocol/runtime.ts";
import { toast } from "../../../components/toast.ts";
import { setRetention } from "../../../state/channel-actions.ts";
import { engineState } from "../../../state/engine.ts";

const why = (e: unknown) => (e instanceof Error && e.message ? e.message : String(e));

/** The words of the RETENTION section (docs/protocol-extensions.md "Retention"). */
export const RetentionText = {
  heading: "RETENTION",
  kept: "Messages are kept.",
  removed: (days: number) =>
    `Messages older than ${days} day${days === 1 ? "" : "s"} are removed by the server.`,
  detail: (signed: number | null, server: number | null) =>
    `Owner's setting (signed): ${signed === null ? "none" : `${signed} days`}. Server's maximum: ${
      server === null ? "none" : `${server} days`
    }.`,
  label: "Days (empty: no setting)",
  set: "Set retention",
  bad: `Retention is a whole number of days from ${Retention.minDays} to ${Retention.maxDays}, or empty`,
} as const;

/**
 * The channel's retention in the info panel: what is in force (the owner's signed setting and the
 * server's announced maximum, the smaller), and for the owner a way to change it (a new epoch whose
 * commit signs it).
 */
export function ChannelRetention({ channelId }: { channelId: string }) {
  const s = useSnapshot(engineState);
  const [draft, setDraft] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const view = s.open[channelId];
  if (!view) return null;
  const me = s.auth.user?.did;
  const owner = view.channel.role === "owner" || view.members.some((m) => m.isOwner && m.did === me);
  const r = view.retention ?? null;
  const value = draft ?? (r?.signedDays === null || r?.signedDays === undefined ? "" : String(r.signedDays));
  const submit = (e: { preventDefault(): void }) => {
    e.preventDefault();
    const text = value.trim();
    const days = text === "" ? null : Number(text);
    if (days !== null && !(/^\d+$/.test(text) && days >= Retention.minDays && days <= Retention.maxDays)) {
      toast.error(RetentionText.bad);
      return;
    }
    setBusy(true);
    setRetention(channelId, days)
      .then(() => setDraft(null))
      .catch((err) => toast.error(why(err)))
      .finally(() => setBusy(false));
  };
  return (
    <div className="channel-retention" data-testid="channel-retention">
      <h4>{RetentionText.heading}</h4>
      <p>{r ? RetentionText.removed(r.days) : RetentionText.kept}</p>
      {r ? <p className="info-hint">{RetentionText.detail(r.signedDays, r.serverMaxDays)}</p> : null}
      {owner ? (
        <form className="cc-copy" onSubmit={submit}>
          <input
            inputMode="numeric"
            aria-label={RetentionText.label}
            placeholder={RetentionText.label}
            value={value}
            onChange={(e) => setDraft(e.target.value)}
          />
          <button type="submit" disabled={busy} aria-busy={busy}>
            {RetentionText.set}
          </button>
        </form>
      ) : null}
    </div>
  );
}
