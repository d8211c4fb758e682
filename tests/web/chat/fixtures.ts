/**
 * Data for the chat component tests: an open channel (ChannelView) put straight into engineState, its
 * timeline items and members. Uses the shared harness (tests/web/harness.ts) for mounting and the fake
 * engine.
 */
import { SecurityText } from "../../../core/client/view/security-text.ts";
import {
  type ChannelView,
  emptyChannelView,
  type SecurityCheck,
  type SecurityWarning,
  setItems,
  type TimelineItem,
} from "../../../core/client/view/state.ts";
import type { ChannelType, Member } from "../../../core/protocol/runtime.ts";
import { panel } from "../../../web/features/chat/members/panel.ts";
import { engineState } from "../../../web/state/engine.ts";
import { channel, resetState } from "../harness.ts";

export const ME = `did:plc:${"a".repeat(24)}`;
export const TRINITY = `did:plc:${"t".repeat(24)}`;
export const MORPHEUS = `did:plc:${"m".repeat(23)}o`;

let n = 0;
export function item(extra: Partial<TimelineItem> = {}): TimelineItem {
  n++;
  return {
    uri: `at://${TRINITY}/chat.wsync.message/m${n}`,
    seq: n,
    kind: "message",
    author: { did: TRINITY, handle: "trinity.wsync.local" },
    createdAt: new Date().toISOString(),
    text: `message ${n}`,
    state: "success",
    verified: true,
    error: null,
    ...extra,
  };
}

export function notice(action: TimelineItem["action"], extra: Partial<TimelineItem> = {}): TimelineItem {
  return item({ kind: "notify", action, text: null, verified: false, ...extra });
}

export function member(did: string, handle: string, extra: Partial<Member> = {}): Member {
  return {
    did,
    handle,
    isOwner: false,
    online: false,
    publicKey: "BKEY",
    fingerprint: "0123456789abcdef0123456789abcdef",
    admission: null,
    ...extra,
  };
}

/** Adds items at the end of a view's list, as the engine does (a new list, ChannelView.items). */
export function addItems(view: ChannelView, ...items: TimelineItem[]): void {
  setItems(view, [...view.items, ...items]);
}

/** Opens a channel in engineState (current channel) and returns its id. */
export function openChannel(extra: Partial<ChannelView> = {}, type: ChannelType = "invite"): string {
  const c = channel("mainframe", type, {});
  c.value.description = "where the operators meet";
  engineState.open[c.id] = {
    ...emptyChannelView(c),
    members: [member(ME, "neo.wsync.local", { isOwner: true, online: true })],
    keysLoaded: true,
    ...extra,
  };
  // Stored as the engine stores a list (setItems), never changed in place.
  const v = engineState.open[c.id] as ChannelView;
  if (Array.isArray(v.items)) setItems(v, [...v.items]);
  engineState.channels = [c];
  engineState.currentChannelId = c.id;
  return c.id;
}

/** A security warning as the engine makes it, with SecurityText's words for the check. */
export function warning(
  check: SecurityCheck,
  extra: Partial<SecurityWarning> & { detail?: string } = {},
): SecurityWarning {
  const { detail, ...rest } = extra;
  const epochNumber = rest.epochNumber ?? 3;
  const handle = rest.handle ?? null;
  return {
    check,
    channelId: "aaaaaaaaaaaaaaab",
    epochNumber,
    did: null,
    handle,
    text: SecurityText.warning(check, { epochNumber, handle, ...(detail ? { detail } : {}) }),
    ...rest,
  };
}

export function view(id: string): ChannelView {
  return engineState.open[id] as ChannelView;
}

export function resetChat(): void {
  resetState();
  panel.compare = null;
  panel.info = false;
}

/** "#00ff9c" → "rgb(0, 255, 156)", for comparing with a computed style either way. */
export function rgb(hex: string): string {
  const v = Number.parseInt(hex.slice(1), 16);
  return `rgb(${v >> 16}, ${(v >> 8) & 255}, ${v & 255})`;
}
