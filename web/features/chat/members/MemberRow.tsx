import { useEffect, useState } from "react";
import { type Snapshot, useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../../core/client/view/display.ts";
import { SecurityText } from "../../../../core/client/view/security-text.ts";
import type { Member } from "../../../../core/protocol/runtime.ts";
import { AtprotoBadge } from "../../../components/AtprotoBadge.tsx";
import { toast } from "../../../components/toast.ts";
import { kickMember } from "../../../state/channel-actions.ts";
import { openConversation } from "../../../state/direct.ts";
import { engineState } from "../../../state/engine.ts";
import { acceptKey, safetyNumbers } from "../../../state/epoch.ts";
import { panel } from "./panel.ts";

type Numbers = Awaited<ReturnType<typeof safetyNumbers>>;

const why = (e: unknown) => (e instanceof Error && e.message ? e.message : String(e));

/** The fingerprint in groups of four, easier to read aloud. */
const groups = (hex: string) => hex.replace(/(.{4})(?=.)/g, "$1 ");

/** Protocol §8: a member whose key changed reads so until the user verifies the new one. */
export const KEY_CHANGED_STATUS = "changed, not verified";

/**
 * One member's keys: the fingerprint, and on demand the safety numbers to compare out of band. Only
 * after that comparison can a changed key be accepted, and only the key the numbers were shown for.
 * While the channel holds a `key-changed` warning for the member (protocol §8), their safety number
 * says "changed, not verified" until the user accepts it (acceptKeyChange clears the warning).
 */
function KeyCheck({
  m,
  self,
  warned,
  keyChanged,
  kick,
}: {
  m: Snapshot<Member>;
  self: boolean;
  warned: boolean;
  keyChanged: boolean;
  kick: (() => void) | null;
}) {
  const [sn, setSn] = useState<Numbers | null>(null);
  const [err, setErr] = useState("");
  const load = () => safetyNumbers(m.did).then(setSn, (e) => setErr(why(e)));
  // Opened from a key-change warning: the numbers are what the user came for.
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, when opened
  useEffect(() => {
    if (warned && !self) void load();
  }, []);
  const [verifiedNow, setVerifiedNow] = useState(false);
  // A key that changes again after it was verified here is changed, not verified, once more.
  useEffect(() => {
    if (keyChanged) setVerifiedNow(false);
  }, [keyChanged]);
  const changed = !verifiedNow && (keyChanged || !!sn?.theirKeyChanged);
  const accept = (key: string) =>
    acceptKey(m.did, key).then(
      () => {
        toast.success("Key accepted");
        setVerifiedNow(true);
        void load();
      },
      (e) => setErr(why(e)),
    );
  return (
    <div className="keys">
      <p>
        FINGERPRINT <code>{m.fingerprint ? groups(m.fingerprint) : "NO_KEY"}</code>
      </p>
      {self || !(changed || verifiedNow) ? null : (
        <p className={`key-status${changed ? " changed" : ""}`} data-testid="key-status">
          SAFETY_NUMBER {changed ? <b>⚠ {KEY_CHANGED_STATUS}</b> : <b className="ok">verified</b>}
        </p>
      )}
      {self ? null : sn ? (
        <dl>
          <dt>YOURS</dt>
          <dd>{sn.mine}</dd>
          <dt>THEIRS</dt>
          <dd>{sn.theirs}</dd>
          <dt>PAIR</dt>
          <dd>{sn.pair}</dd>
          {sn.proof ? (
            <>
              <dt>ATPROTO</dt>
              <dd
                className={`key-proof ${sn.proof.status === "mismatch" ? "changed" : sn.proof.status === "confirmed" ? "ok" : ""}`}
                data-testid="key-proof"
              >
                {sn.proof.status === "mismatch" ? "⚠ " : ""}
                {SecurityText.keyProof(sn.proof, m.handle)}
              </dd>
            </>
          ) : null}
        </dl>
      ) : (
        <button type="button" onClick={() => void load()}>
          SAFETY_NUMBERS
        </button>
      )}
      {sn && changed ? (
        <button type="button" className="primary" onClick={() => void accept(sn.theirKey)}>
          Accept new key
        </button>
      ) : null}
      {kick ? (
        <button type="button" className="danger" onClick={kick}>
          KICK
        </button>
      ) : null}
      {err ? <p className="field-error">{err}</p> : null}
    </div>
  );
}

export function MemberRow({
  m,
  channelId,
  me,
  owner,
  warned,
  keyChanged = false,
}: {
  m: Snapshot<Member>;
  channelId: string;
  me: string | undefined;
  owner: boolean;
  warned: boolean;
  /** The channel holds an open `key-changed` warning for this member. */
  keyChanged?: boolean;
}) {
  const open = useSnapshot(panel).compare === m.did;
  const connected = useSnapshot(engineState).connection === "connected";
  const kick =
    owner && !m.isOwner ? () => void kickMember(channelId, m.did).catch((e) => toast.error(why(e))) : null;
  return (
    <li className={`member${warned ? " warned" : ""}`}>
      <button
        type="button"
        className="member-line"
        aria-expanded={open}
        onClick={() => {
          panel.compare = open ? null : m.did;
        }}
      >
        {/* Offline, nobody's presence is known: every dot goes grey rather than keep a stale green. */}
        <span
          className={`dot ${m.online && connected ? "on" : "off"}`}
          title={connected ? (m.online ? "online" : "offline") : "unknown while you are offline"}
        />
        {handleWithoutSuffix(m.handle)}
        {m.atproto ? <AtprotoBadge /> : null}
        {m.did === me ? <small> (you)</small> : null}
        {m.isOwner ? <span className="op">OP</span> : null}
        {warned ? (
          <span className="warn" title={keyChanged ? `key ${KEY_CHANGED_STATUS}` : undefined}>
            ⚠
          </span>
        ) : null}
      </button>
      {/* Issue 30: a person's name is a way to write to them (their one conversation with this user). */}
      {m.did === me ? null : (
        <button
          type="button"
          className="member-message"
          aria-label={`Message ${handleWithoutSuffix(m.handle)}`}
          title="Message"
          onClick={() => void openConversation(m.handle, null).catch(() => undefined)}
        >
          Message
        </button>
      )}
      {open ? (
        <KeyCheck m={m} self={m.did === me} warned={warned} keyChanged={keyChanged} kick={kick} />
      ) : null}
    </li>
  );
}
