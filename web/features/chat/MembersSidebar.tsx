import { type Snapshot, useSnapshot } from "valtio";
import type { Member } from "../../../core/protocol/runtime.ts";
import { engineState } from "../../state/engine.ts";
import { uiState } from "../../state/ui.ts";
import { InfoPanel } from "./members/InfoPanel.tsx";
import { InvitePanel } from "./members/InvitePanel.tsx";
import { MemberRow } from "./members/MemberRow.tsx";
import { panel } from "./members/panel.ts";

/**
 * The right column of an open channel (spec §2.8): CONNECTED_NODES grouped into OPERATORS and MEMBERS,
 * the invite section on non-public channels, and the info panel. On mobile it is a drawer that slides
 * in when uiState.membersOpen, showing either the members or the info panel.
 */
export function MembersSidebar({ channelId, mobile }: { channelId: string; mobile: boolean }) {
  const s = useSnapshot(engineState);
  const { membersOpen } = useSnapshot(uiState);
  const { info } = useSnapshot(panel);
  const view = s.open[channelId];
  if (!view) return null;
  const me = s.auth.user?.did;
  const members = view.members;
  const owner = members.some((m) => m.isOwner && m.did === me);
  const group = (title: string, list: Snapshot<Member>[]) => (
    <>
      <h4>{title}</h4>
      <ul>
        {list.map((m) => (
          <MemberRow
            key={m.did}
            m={m}
            channelId={channelId}
            me={me}
            owner={owner}
            warned={view.warnings.some((w) => w.did === m.did)}
            keyChanged={view.warnings.some((w) => w.did === m.did && w.check === "key-changed")}
          />
        ))}
      </ul>
    </>
  );
  return (
    <aside
      className={`members${mobile ? ` drawer right${membersOpen ? " open" : ""}` : ""}`}
      data-testid="members"
      inert={mobile && !membersOpen}
    >
      {mobile ? (
        <button
          type="button"
          className="drawer-close"
          aria-label="Close"
          onClick={() => {
            uiState.membersOpen = false;
          }}
        >
          ×
        </button>
      ) : null}
      {mobile && info ? null : (
        <>
          <h3>
            CONNECTED_NODES <span className="count">[{members.length}]</span>
          </h3>
          {group(
            "OPERATORS",
            members.filter((m) => m.isOwner),
          )}
          {group(
            "MEMBERS",
            members.filter((m) => !m.isOwner),
          )}
          {/* A public channel needs no invite; a one-to-one conversation (or notes to self) never grows. */}
          {view.channel.value.type === "public" ||
          s.conversations?.some((c) => c.channel.id === channelId && c.kind !== "group") ? null : (
            <InvitePanel channelId={channelId} />
          )}
        </>
      )}
      {mobile && !info ? null : <InfoPanel channelId={channelId} mobile={mobile} />}
    </aside>
  );
}
