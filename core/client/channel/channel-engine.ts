import { hasNativeGcm } from "../../crypto/gcm.ts";
import {
  CryptoText,
  type DecryptedMessage,
  decryptMessage,
  deletionTargetProblem,
  encryptMessage,
  FORWARD_SECRECY_TEXT,
  fingerprint,
  importEpochKey,
  joinTokenFor,
  makeLinkProof,
  newClientMsgId,
  type RichPlaintext,
  reasonOf,
  verifyDeletion,
} from "../../crypto/index.ts";
import {
  Limits,
  type LinkProof,
  type MessageRecord,
  Retention,
  type SignedDeletion,
  type TimelineRecord,
  WsEvent,
} from "../../protocol/runtime.ts";
import { AwaitingOwnerKeysError } from "../errors.ts";
import type { EpochKey } from "../keys/keyring.ts";
import { hiddenByBlock } from "../view/blocked.ts";
import { SecurityText } from "../view/security-text.ts";
import {
  type ChannelView,
  type EpochChange,
  emptyChannelView,
  type IntegrityNote,
  setItems,
  type TimelineItem,
} from "../view/state.ts";
import {
  type ChainState,
  effectiveRetentionDays,
  type SeenState,
  signedRetentionDays,
  type VerifiedEpoch,
} from "./chain.ts";
import type { EngineContext } from "./engine-context.ts";
import { EpochManager, SendBlockedError, shownUnnamed } from "./epoch-manager.ts";
import {
  chainNumbers,
  checkReplayAndOrder,
  type MessageFacts,
  markMissing,
  markWithheld,
  withheldRuns,
} from "./integrity.ts";
import { Outbox } from "./outbox.ts";
import { PageTurns } from "./page-turns.ts";
import {
  commitDraft,
  draftOf,
  hasUri,
  type ItemsDraft,
  indexOfRecord,
  insertIntoView,
  insertItem,
  itemFromRecord,
  replaceItem,
  resetDraftOf,
  richOf,
} from "./timeline.ts";

export type { EngineContext } from "./engine-context.ts";

export { OFFLINE_QUEUE_MS } from "./outbox.ts";

const HEX32 = /^[0-9a-f]{32}$/;

/** A record decrypted and checked: its row, and for a message the facts the order checks need. */
type Decrypted = { item: TimelineItem; facts: MessageFacts | null };

/** A message's sender as shown, and whether the server's name for them is in doubt (protocol §8). */
interface SenderNames {
  shownAs: string;
  mismatch: boolean;
}

/** A message's content as stored: the JSON envelope of protocol §5, parsed once. */
type Envelope = { epochId?: unknown; epochNumber?: unknown; clientMsgId?: unknown };

/** An epoch key this client verified, with its epoch. */
type VerifiedKey = { key: EpochKey; epoch: VerifiedEpoch };

/** The envelope of a message's content, or null when it is not a JSON object. */
function parseEnvelope(content: string): Envelope | null {
  try {
    const v: unknown = JSON.parse(content);
    return typeof v === "object" && v !== null ? (v as Envelope) : null;
  } catch {
    return null;
  }
}

/** Records of a page decrypted and verified side by side (their promises awaited together). */
const DECRYPT_BATCH = 10;

/** The epoch key imported into WebCrypto once, on first use. */
function importedKey(k: EpochKey): Promise<CryptoKey> {
  if (!k.imported) {
    if (!k.key) return Promise.reject(new Error(CryptoText.epochKeyInvalid));
    k.imported = importEpochKey(k.key);
  }
  return k.imported;
}

/** The seq range the server's answers claim to be complete, per channel (for withheld records). */
interface Coverage {
  lo: number;
  hi: number;
}

/**
 * Everything per channel: join and open, the timeline (load, live records, gap filling, the protocol
 * v2 checks that need more than one record) and sending. Epoch keys and the keys and names of people
 * are the EpochManager's. Keys and plaintext stay here, in the client.
 */
export class ChannelEngine {
  private readonly coverage = new Map<string, Coverage>();
  private readonly gapFills = new Map<string, Promise<void>>();
  /** The server's announced maximum retention, asked once (serverRetention). */
  private serverInfo: Promise<number | null> | null = null;
  /** The way out: transport, retries, the offline queue, chain numbers (outbox.ts). */
  private readonly outbox: Outbox;

  constructor(
    private readonly c: EngineContext,
    readonly epochs: EpochManager = new EpochManager(c),
  ) {
    this.outbox = new Outbox(c);
    epochs.onChange = (channelId, change, createdAt) => {
      const view = this.view(channelId);
      if (!view) return;
      this.placeEpochItem(view, change, createdAt);
      // A new commit's `chains` may vouch for messages this device never got (a withheld last one).
      void this.refreshWithheld(view);
    };
  }

  view(channelId: string): ChannelView | undefined {
    return this.c.state.open[channelId];
  }

  private requireView(channelId: string): ChannelView {
    const v = this.view(channelId);
    if (!v) throw new Error("Open the channel first");
    return v;
  }

  // ---- channels ---------------------------------------------------------------------------------

  /**
   * Joins (or re-subscribes to) a channel and loads it: members, verified epochs, the current epoch
   * and the last 50 records (spec §4.4). With a secret link's secret, the join carries the join token
   * and an admission MAC made from it (protocol §7). A client that just joined makes the next epoch
   * itself, so joining never waits for another member to be online. `focus: false` loads it without
   * making it the current channel.
   */
  async open(channelUri: string, linkSecret?: string, opts: { focus?: boolean } = {}): Promise<ChannelView> {
    const body: {
      channelUri: string;
      joinToken?: string;
      admission?: LinkProof;
    } = {
      channelUri,
    };
    if (linkSecret) {
      const identity = this.c.keyring.identity;
      if (!identity) throw new Error(CryptoText.notInitialized);
      body.joinToken = await joinTokenFor(linkSecret, channelUri);
      body.admission = await makeLinkProof({
        linkSecret,
        channelId: channelUri,
        did: this.c.me().did,
        fp: await fingerprint(identity.publicKey),
        createdAt: this.c.now(),
      });
    }
    // The HTTP join answers with the channel and its members; the socket's join subscribes. Both are
    // idempotent, so they run side by side.
    const socketJoined = this.c.realtime.connectionStatus === "connected";
    const [{ channel, members }] = await Promise.all([
      this.c.api.call("joinChannel", body),
      socketJoined ? this.c.realtime.request(WsEvent.channelJoin, body).catch(() => null) : null,
    ]);
    // The history is fetched while the keys load; it is decrypted once they are there. What the list
    // holds when it is asked for is what the page replaces (applyPage): what arrives later is kept.
    const before = this.view(channel.id)?.items ?? [];
    const history = this.c.api.call("getMessages", { channelUri: channel.id, limit: Limits.pageOnJoin });
    history.catch(() => undefined);
    const view = this.view(channel.id) ?? emptyChannelView(channel);
    view.channel = channel;
    view.members = members;
    view.loading = true;
    this.c.state.open[channel.id] = view;
    // The state object may be observable (a valtio proxy in the browser), which stores a proxied copy:
    // mutate what the state holds from here on, not the object that was assigned.
    const live = this.c.state.open[channel.id] as ChannelView;
    // A background open (the terminal screen keeping every joined channel live for its unread counts)
    // subscribes and loads without taking the user away from the channel they are in.
    if (opts.focus !== false) this.c.state.currentChannelId = channel.id;
    this.c.changed();
    try {
      const chain = await this.epochs.chain(channel.id);
      if (linkSecret && chain.linkSecret !== linkSecret) {
        // The link that just worked is the one in force: this client can seal it and check link joins.
        chain.linkSecret = linkSecret;
        await this.c.keyring.chains.saveChain(channel.id);
      }
      // Pinning the members' keys, fetching and verifying our epochs, and the epoch info are independent.
      const [, , info] = await Promise.all([
        this.epochs.checkMemberKeys(channel.id, members),
        this.epochs.loadEpochKeys(channel.id),
        this.c.api.call("getEpochInfo", { channelUri: channel.id }).then((r) => r.epochInfo),
      ]);
      live.epoch = info;
      const haveCurrent = info.epochId !== null && chain.head?.epochId === info.epochId;
      if (info.rotationRequired && !haveCurrent) {
        await this.epochs.rotate(channel.id).catch((e) => {
          // Blocked by a failed check, or waiting for the owner's epoch 1: the channel still opens.
          if (!(e instanceof SendBlockedError || e instanceof AwaitingOwnerKeysError)) throw e;
        });
      } else {
        await this.epochs.reconcile(channel.id, info);
      }
      this.epochs.updateLink(channel.id, chain);
      await this.epochs.markFresh(channel.id);
      live.keysLoaded = true;
      await this.applyPage(live, await history, before);
    } finally {
      live.loading = false;
      this.c.changed();
    }
    // Opened while the socket was still connecting: the connection may have come up (and resynced
    // the channels open then) before this one was in the list, leaving it unsubscribed and missing
    // whatever came meanwhile. Subscribe and fill from the page loaded (resync), now.
    if (!socketJoined && this.c.realtime.connectionStatus === "connected")
      await this.resync(channel.id).catch(() => undefined);
    return live;
  }

  /** One page of history, newest first, older than `cursor` (null: the newest page). */
  private historyPage(channelId: string, limit: number, cursor: string | null) {
    return this.c.api.call("getMessages", { channelUri: channelId, limit, ...(cursor ? { cursor } : {}) });
  }

  /** Newest page first; `reset` replaces the list, otherwise older records are added (spec §4.5). */
  async loadPage(channelId: string, limit: number, reset: boolean, settle = true): Promise<void> {
    const view = this.requireView(channelId);
    if (!reset && (!view.hasMore || !view.cursor)) return;
    if (!reset) view.loadingMore = true;
    this.c.changed();
    try {
      const before = view.items;
      const page = await this.historyPage(channelId, limit, reset ? null : view.cursor);
      await this.applyPage(view, page, reset ? before : false, settle);
    } finally {
      view.loadingMore = false;
      this.c.changed();
    }
  }

  /**
   * Older history until the view holds `count` more rows or history ends, in the server's largest
   * pages. The missing and withheld rows, whose work grows with the whole channel, are worked out once
   * at the end instead of after every page (`wsync read --limit 10000`).
   */
  async loadOlder(channelId: string, count: number): Promise<void> {
    const view = this.requireView(channelId);
    const target = view.items.length + count;
    if (!view.hasMore || !view.cursor || count <= 0) return;
    // The next page is asked for while this one is decrypted and placed: with pages of 100, a long
    // read (`wsync read --limit 10000`) would otherwise wait for the server a hundred times in turn.
    let next: ReturnType<typeof this.historyPage> | null = this.historyPage(
      channelId,
      Math.min(Limits.pageMax, count),
      view.cursor,
    );
    view.loadingMore = true;
    this.c.changed();
    try {
      while (next) {
        const page: Awaited<typeof next> = await next;
        next = null;
        const before = view.items.length;
        const left = target - before - page.records.length;
        if (page.hasMore && page.cursor && left > 0) {
          next = this.historyPage(channelId, Math.min(Limits.pageMax, left), page.cursor);
          // Not needed after all when this page ends the read (an error here is the next loop's).
          next.catch(() => undefined);
        }
        await this.applyPage(view, page, false, false);
        if (view.items.length === before || view.items.length >= target) break;
      }
    } finally {
      view.loadingMore = false;
      this.refreshMissing(view);
      this.c.changed();
    }
  }

  /**
   * One page of history, decrypted and verified as the timeline would, but not placed in the view:
   * for readers that go through a whole history once (the browser's search backfill), so the open
   * channel's list does not grow with it. The channel must be open (its keys loaded). Newest first
   * from `cursor` (null: the newest page).
   */
  async readPage(
    channelId: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ items: TimelineItem[]; cursor: string | null; hasMore: boolean }> {
    this.requireView(channelId);
    const page = await this.historyPage(channelId, limit, cursor);
    // In slices with turns for the page, as applyPage does: a whole page decrypted and verified at
    // once held the page for 60-100 ms (npm run bench:search:backfill).
    const decrypted = await this.decryptInTurns(channelId, page.records, new PageTurns());
    return { items: decrypted.map((d) => d.item), cursor: page.cursor, hasMore: page.hasMore };
  }

  /** A page's records decrypted and verified in batches, with turns for a browser page between them. */
  private async decryptInTurns(channelId: string, records: readonly TimelineRecord[], turns: PageTurns) {
    const out: Decrypted[] = [];
    // Outside a browser page nothing waits for frames: the whole page at once, so that the runtime's
    // WebCrypto threads verify a page's signatures side by side (a page of 100 in batches of 10 took
    // the CLI's `read --limit 10000` about a fifth longer: docs/benchmarks.md).
    const size = turns.inPage ? DECRYPT_BATCH : records.length;
    for (let at = 0; at < records.length; at += size) {
      if (at > 0) await turns.maybe();
      const batch = records.slice(at, at + size);
      out.push(...(await Promise.all(batch.map((r) => this.decryptRecord(channelId, r, false)))));
    }
    return out;
  }

  /**
   * Places a page. `reset` is the list as it was when the page was asked for (the channel opened
   * again): the page replaces that list, and what came into the list after it was asked for is kept.
   * Taking the list when the answer arrived instead lost a live record that came in between: the
   * page was read before it was stored, and the list it was in was replaced (a flaky CI test).
   */
  private async applyPage(
    view: ChannelView,
    page: { records: TimelineRecord[]; cursor: string | null; hasMore: boolean },
    reset: readonly TimelineItem[] | false,
    settle = true,
  ): Promise<void> {
    const channelId = view.channel.id;
    // A reset replaces the list, but only once the new page is ready: the list shown meanwhile stays
    // as it was, never blank while the page is decrypted (a row that was on screen went away and came
    // back).
    if (reset) this.coverage.delete(channelId);
    // Decrypted and verified in slices, one per frame: a page of 100 older records is many short
    // tasks, not one long one that stalls scrolling (issue 28). Then placed in a frame of its own.
    const turns = new PageTurns(!reset);
    const decrypted = await this.decryptInTurns(channelId, page.records, turns);
    await turns.frame();
    const ordered = decrypted.sort((a, b) => a.item.seq - b.item.seq);
    const seen = await this.c.keyring.chains.seenState(channelId);
    // The page is placed into a copy of the list that goes back in one assignment (one change to
    // draw, and the list in the view is never changed in place: ChannelView.items).
    const draft = reset ? resetDraftOf(view, reset) : draftOf(view);
    for (const d of ordered) this.place(draft, channelId, seen, d.item, d.facts);
    // An older page that ends its load (loadPage) is drawn once with the button back, not twice.
    if (!reset && settle) view.loadingMore = false;
    commitDraft(view, draft);
    view.cursor = page.cursor;
    view.hasMore = page.hasMore;
    // The page answers for every seq from its oldest record (or seq 1 when nothing is older) up to
    // its newest, or, for an older page, up to where the loaded range began.
    const seqs = page.records.map((r) => r.seq);
    const cov = this.coverage.get(channelId);
    if (seqs.length > 0) {
      const lo = page.hasMore ? Math.min(...seqs) : 1;
      const hi = Math.max(Math.max(...seqs), cov?.hi ?? 0);
      this.coverage.set(channelId, { lo, hi });
    }
    if (reset) await this.rebuildEpochItems(view);
    if (settle) this.refreshMissing(view);
    // Rows placed under an unverified name are named now if a verified commit pinned the name while
    // they were being read (epochs.nameShownRows); a pin after this point names them itself.
    const unnamed = decrypted.filter((d) => shownUnnamed(d.item)).map((d) => d.item.author);
    if (unnamed.length > 0) await this.epochs.nameShownRows(unnamed);
  }

  /** Places a decrypted item, with the replay and order checks for messages. */
  private place(
    draft: ItemsDraft,
    channelId: string,
    seen: SeenState,
    item: TimelineItem,
    facts: MessageFacts | null,
  ): TimelineItem | null {
    if (hasUri(draft, item.uri, item.seq)) return null;
    if (!facts) return insertItem(draft, item);
    const checked = checkReplayAndOrder(draft, seen, item, facts);
    // Only a change is written back (one write per page or burst, see ChainStore).
    if (checked.seenChanged) this.c.keyring.chains.markSeenDirty(channelId, item.seq);
    if (checked.item.notes?.includes("fork")) {
      this.epochs.warn(channelId, "withheld", {
        did: facts.senderDid,
        handle: this.epochs.handleOf(facts.senderDid),
        detail: "fork",
      });
    }
    // A blocked person's message in a conversation is checked like any (above) but not shown.
    const channel = this.c.state.open[channelId]?.channel;
    if (channel && hiddenByBlock(this.c.state, channel, facts.senderDid)) return null;
    return insertItem(draft, checked.item);
  }

  private refreshMissing(view: ChannelView): void {
    this.markCoverageGaps(view);
    void this.refreshWithheld(view);
  }

  /** Marks the gaps in what was fetched, as removed by retention where the channel's window says so. */
  private markCoverageGaps(view: ChannelView): void {
    const cov = this.coverage.get(view.channel.id);
    const days = view.retention?.days;
    if (cov)
      markMissing(
        view,
        cov.lo,
        cov.hi,
        SecurityText.missing,
        days ? { days, text: SecurityText.retained(days) } : undefined,
      );
  }

  /** The server's announced maximum retention, fetched once (null: none, or not announced). */
  private serverRetention(): Promise<number | null> {
    this.serverInfo ??= this.c.api
      .call("serverInfo", undefined)
      .then((r) => {
        this.c.state.server = { retentionMaxDays: r.retentionMaxDays };
        return r.retentionMaxDays;
      })
      .catch(() => {
        // An older server has no /server/info: no announced maximum; asked again next time.
        this.serverInfo = null;
        return null;
      });
    return this.serverInfo;
  }

  /**
   * The retention in force (docs/protocol-extensions.md "Retention"), set on the view: the owner's
   * signed setting (its newest verified commit) and the server's announced maximum, the smaller.
   * Returns whether it changed (the missing rows are then worked out again).
   */
  private async refreshRetention(view: ChannelView, chain: ChainState): Promise<boolean> {
    const signedDays = signedRetentionDays(chain);
    const serverMaxDays = await this.serverRetention();
    const days = effectiveRetentionDays(signedDays, serverMaxDays);
    const next = days === null ? null : { days, signedDays, serverMaxDays };
    const before = view.retention ?? null;
    if (
      before?.days === next?.days &&
      before?.signedDays === next?.signedDays &&
      before?.serverMaxDays === next?.serverMaxDays
    )
      return false;
    view.retention = next;
    return true;
  }

  /**
   * Protocol §8 "Sender chains": numbers a sender's chain skips, and numbers up to what the newest
   * verified commit says its creator had seen, are messages the server withheld. Each run is a row in
   * its place, and the channel says who is affected (check `withheld`).
   */
  private async refreshWithheld(view: ChannelView): Promise<void> {
    const channelId = view.channel.id;
    const seen = await this.c.keyring.chains.seenState(channelId);
    const chain = await this.epochs.chain(channelId);
    if (await this.refreshRetention(view, chain)) {
      this.markCoverageGaps(view);
      this.c.changed();
    }
    // Under retention: per chain, the lowest number a commit made well inside the window lists
    // (everything after it is too young for retention to have removed).
    const youngFloor: Record<string, { n: number; epochNumber: number }> = {};
    const days = view.retention?.days;
    if (days) {
      const youngAfter = this.c.now() - days * Retention.dayMs + Retention.dayMs;
      for (const e of Object.values(chain.epochs)) {
        if (!e.chains || e.anchor || e.createdAt < youngAfter) continue;
        for (const c of e.chains) {
          const key = `${c.did}|${c.device}`;
          const had = youngFloor[key];
          if (!had || c.n < had.n) youngFloor[key] = { n: c.n, epochNumber: e.epochNumber };
        }
      }
    }
    const listed: Record<string, { n: number; epochNumber: number }> = {};
    let newest: { epochNumber: number; chains?: { did: string; device: string; n: number }[] } | null = null;
    for (const e of Object.values(chain.epochs))
      if (e.chains && !e.anchor && (!newest || e.epochNumber > newest.epochNumber)) newest = e;
    for (const c of newest?.chains ?? [])
      listed[`${c.did}|${c.device}`] = { n: c.n, epochNumber: newest?.epochNumber ?? 0 };
    // Whether this device held the key of every epoch in a range (it could read all sent there).
    const held = (from: number, to: number) => {
      if (!Number.isInteger(from) || !Number.isInteger(to)) return false;
      for (let n = from; n <= to; n++) {
        const e = chain.epochs[String(n)];
        if (!e || e.anchor) return false;
      }
      return true;
    };
    const cov = this.coverage.get(channelId);
    const loaded = (from: number, to: number | null) =>
      cov !== undefined &&
      Number.isFinite(from) &&
      from >= cov.lo &&
      (to === null || (Number.isFinite(to) && to <= cov.hi));
    const runs = withheldRuns(seen, listed, held, loaded, youngFloor);
    const before = view.items
      .filter((i) => i.withheld)
      .map((i) => i.uri)
      .join(",");
    markWithheld(view, runs, (did) => this.epochs.handleOf(did), SecurityText.withheld);
    for (const r of runs) {
      this.epochs.warn(channelId, "withheld", { did: r.did, handle: this.epochs.handleOf(r.did) });
    }
    if (
      view.items
        .filter((i) => i.withheld)
        .map((i) => i.uri)
        .join(",") !== before
    )
      this.c.changed();
  }

  /** The timeline rows of membership changes, from the verified commits this client persisted. */
  private async rebuildEpochItems(view: ChannelView): Promise<void> {
    setItems(
      view,
      view.items.filter((i) => i.kind !== "epoch"),
    );
    const chain = await this.epochs.chain(view.channel.id);
    for (const e of Object.values(chain.epochs)) {
      if (e.change && !e.anchor) this.placeEpochItem(view, e.change, e.createdAt);
    }
  }

  /** An epoch row sits after the last record signed (or stored) no later than the commit. */
  private placeEpochItem(view: ChannelView, change: EpochChange, createdAt: number): void {
    const uri = `epoch:${change.epochNumber}`;
    if (view.items.some((i) => i.uri === uri)) return;
    let after = 0;
    for (const i of view.items) {
      if (!Number.isInteger(i.seq) || i.seq <= 0) continue;
      const t = Date.parse(i.signedAt ?? i.createdAt);
      if (!Number.isNaN(t) && t <= createdAt && i.seq > after) after = i.seq;
    }
    insertIntoView(view, {
      uri,
      seq: after + 0.25,
      kind: "epoch",
      author: change.creator,
      createdAt: new Date(createdAt).toISOString(),
      text: SecurityText.epochChange(change),
      state: "success",
      verified: true,
      error: null,
      epoch: change,
    });
    this.c.changed();
  }

  /** After a reconnect: re-subscribe, then fetch everything after the last seq seen, oldest first. */
  async resync(channelId: string): Promise<void> {
    const view = this.view(channelId);
    if (!view) return;
    await this.c.realtime.request(WsEvent.channelJoin, { channelUri: channelId }).catch(() => undefined);
    await this.fillFrom(channelId, this.coverage.get(channelId)?.hi ?? view.lastSeq);
    await this.epochs.refreshEpoch(channelId).catch(() => undefined);
  }

  /** Fetches every record after `since`, oldest first; the answer covers that range. */
  private async fillFrom(channelId: string, since: number): Promise<void> {
    const view = this.view(channelId);
    if (!view) return;
    let from = since;
    for (;;) {
      const page = await this.c.api.call("getMessages", {
        channelUri: channelId,
        since: from,
        limit: Limits.pageMax,
      });
      for (const r of page.records) await this.receive(channelId, r, true, false);
      const max = Math.max(from, ...page.records.map((r) => r.seq));
      const cov = this.coverage.get(channelId);
      if (cov) cov.hi = Math.max(cov.hi, max);
      else if (page.records.length > 0) this.coverage.set(channelId, { lo: since + 1, hi: max });
      from = max;
      if (!page.hasMore || page.records.length === 0) break;
    }
    this.refreshMissing(view);
    this.c.changed();
  }

  // ---- records ----------------------------------------------------------------------------------

  /**
   * A record from the server into the view (deduplicated), decrypted and checked. A live record that
   * skips seqs makes the client ask for the skipped ones; what the server still does not return is
   * shown as withheld.
   */
  async receive(
    channelId: string,
    record: TimelineRecord,
    isNew: boolean,
    fillGaps = true,
  ): Promise<TimelineItem | null> {
    const view = this.view(channelId);
    if (!view || indexOfRecord(view.items, record.uri, record.seq) >= 0) return null;
    const { item, facts } = await this.decryptRecord(channelId, record, isNew);
    const seen = await this.c.keyring.chains.seenState(channelId);
    const draft = draftOf(view);
    const placed = this.place(draft, channelId, seen, item, facts);
    if (placed) commitDraft(view, draft);
    // A live message that continues its sender's chain changes nothing withheld: the rows are worked
    // out again only for a number that skips, or while a withheld row is shown (it may fill it).
    if (placed && facts?.chain) {
      const { device, n } = facts.chain;
      const numbers = seen.chains?.[`${facts.senderDid}|${device}`] ?? {};
      if ((n > 1 && numbers[String(n - 1)] === undefined) || view.items.some((i) => i.withheld))
        void this.refreshWithheld(view);
    }
    // A hidden one (blocked author) still counts as loaded: the records after it are no gap.
    if (placed || (facts && hiddenByBlock(this.c.state, view.channel, facts.senderDid))) {
      const cov = this.coverage.get(channelId);
      if (fillGaps && cov && record.seq > cov.hi + 1) this.fillGap(channelId, cov.hi);
      else if (cov && record.seq === cov.hi + 1) cov.hi = record.seq;
    }
    if (!placed) return null;
    // Named (as in applyPage) before it is announced, so that a listener (`wsync listen --json`)
    // reads the pinned name.
    let shown = placed;
    if (shownUnnamed(placed)) {
      await this.epochs.nameShownRows([placed.author]);
      shown = view.items[indexOfRecord(view.items, placed.uri, placed.seq)] ?? placed;
    }
    this.c.changed();
    this.c.emit("item", { channelId, item: shown });
    return shown;
  }

  /** Resolves once no gap fill runs for the channel (those started meanwhile included). */
  async gapsSettled(channelId: string): Promise<void> {
    for (let p = this.gapFills.get(channelId); p; p = this.gapFills.get(channelId)) await p;
  }

  private fillGap(channelId: string, since: number): void {
    if (this.gapFills.has(channelId)) return;
    const p = this.fillFrom(channelId, since)
      .catch((e) => this.c.log(`gap fill ${channelId}: ${reasonOf(e)}`))
      .finally(() => this.gapFills.delete(channelId));
    this.gapFills.set(channelId, p);
  }

  /** A deletion as the server relays it: "deleted by X" only with X's valid signature (protocol §7). */
  async applyDeletion(channelId: string, uri: string, signed: SignedDeletion | undefined): Promise<void> {
    const view = this.view(channelId);
    const idx = view?.items.findIndex((i) => i.uri === uri) ?? -1;
    if (!view || idx < 0) return;
    const item = view.items[idx] as TimelineItem;
    const pair = item.clientMsgId
      ? { senderDid: item.author.did, clientMsgId: item.clientMsgId, seq: item.seq, chain: item.chain }
      : null;
    const deleted = await this.checkDeletion(view, uri, item.author.did, signed, pair);
    replaceItem(view, uri, (current) =>
      deleted.signed
        ? { ...current, text: null, verified: false, state: "success", error: null, deleted }
        : { ...current, deleted },
    );
    this.c.changed();
  }

  /**
   * "deleted by X" only with X's valid signature (protocol §7), and for a v3 deletion (protocol §8)
   * only where the tombstone's signed (sender, clientMsgId) is the deletion's target, that pair is not
   * seen at another seq, and X is the target's author or the owner (the creator of the verified epoch-1
   * commit, never the server's word). A valid one accounts for the tombstone's chain number.
   */
  private async checkDeletion(
    view: ChannelView,
    uri: string,
    authorDid: string,
    signed: SignedDeletion | undefined,
    pair: {
      senderDid: string;
      clientMsgId: string;
      seq: number;
      chain?: { device: string; n: number };
      epochNumber?: number;
    } | null,
  ): Promise<{ did: string; handle: string; signed: boolean }> {
    if (!signed) return { did: "", handle: "the server", signed: false };
    const d = signed.deletion;
    const byDid = d.byDid;
    const channelId = view.channel.id;
    const owner = await this.epochs.owner(channelId);
    const handle = this.epochs.handleOf(byDid);
    if (d.channelId !== channelId) return { did: byDid, handle, signed: false };
    if (d.v === 3) {
      const seen = await this.c.keyring.chains.seenState(channelId);
      const first = pair ? seen.pairs[`${pair.senderDid}|${pair.clientMsgId}`] : undefined;
      const problem =
        pair === null || pair.senderDid !== authorDid
          ? "target"
          : (deletionTargetProblem(d, pair, owner) ??
            (first !== undefined && first !== pair.seq ? "target" : null));
      const key = problem === null ? await this.epochs.keys.authorKey(byDid).catch(() => null) : null;
      const ok = key !== null && (await verifyDeletion(d, signed.signature, key));
      if (!ok) {
        this.epochs.warn(channelId, "deletion", { did: byDid, handle, detail: problem ?? "signature" });
        return { did: byDid, handle, signed: false };
      }
      if (pair?.chain) {
        // The deleted message's number is accounted for: a deletion is never a withheld message.
        if (first === undefined) seen.pairs[`${pair.senderDid}|${pair.clientMsgId}`] = pair.seq;
        const numbers = chainNumbers(seen, pair.senderDid, pair.chain.device);
        numbers[String(pair.chain.n)] ??= `${pair.clientMsgId}@${pair.seq}@${pair.epochNumber ?? 0}`;
        this.c.keyring.chains.markSeenDirty(channelId, pair.seq);
      }
      return { did: byDid, handle, signed: true };
    }
    const allowed = byDid === authorDid || (owner !== null && byDid === owner);
    const key = allowed ? await this.epochs.keys.authorKey(byDid).catch(() => null) : null;
    const ok = key !== null && d.uri === uri && (await verifyDeletion(d, signed.signature, key));
    return { did: byDid, handle, signed: ok };
  }

  /**
   * Decrypts and verifies one record; failures become the spec's texts, never plaintext guesses.
   * A message is verified only if its signature checks under the sender's pinned key, its epoch's
   * verified commit lists the sender, its signed time lies within that epoch, and the server's name
   * for the sender is the pinned one (protocol §7). In parts (senderNames, tombstoneItem, recordKey,
   * openMessage): as one async function it cost JavaScriptCore 0.3 s of compiling in each long read
   * (`read --limit 10000`, docs/benchmarks.md), and a content of JSON `null` stopped its whole page.
   */
  async decryptRecord(channelId: string, record: TimelineRecord, isNew: boolean): Promise<Decrypted> {
    const base = itemFromRecord(record, isNew);
    if (record.value.$type !== "chat.wsync.message") {
      const pinnedName = await this.c.keyring.pinnedHandle(base.author.did);
      return {
        item: { ...base, author: { did: base.author.did, handle: pinnedName ?? base.author.handle } },
        facts: null,
      };
    }
    const rec = record as MessageRecord;
    const names = await this.senderNames(channelId, rec);
    const item: TimelineItem = { ...base, author: { did: base.author.did, handle: names.shownAs } };
    if (rec.value.deletion || rec.value.content === "") return this.tombstoneItem(channelId, rec, item);
    const envelope = parseEnvelope(rec.value.content);
    if (!envelope) {
      const error = CryptoText.decryptMessageFailed("not an encrypted message");
      return { item: { ...item, state: "failed", error }, facts: null };
    }
    if (typeof envelope.clientMsgId === "string") item.clientMsgId = envelope.clientMsgId;
    const vk = await this.recordKey(channelId, envelope);
    if (typeof vk === "string") return { item: { ...item, state: "failed", error: vk }, facts: null };
    try {
      return await this.openMessage(channelId, rec, item, names, vk, envelope);
    } catch (e) {
      return { item: { ...item, state: "failed", error: reasonOf(e) }, facts: null };
    }
  }

  /**
   * The name a message's sender is shown under (protocol §8: the one a verified commit signed; until
   * there is one, the did with "(unverified name)"), with a warning where the server's name for them
   * differs from their pin or belongs to someone else. The first sight of an author pins their key
   * and handle (from get-keys) before anything is shown.
   */
  private async senderNames(channelId: string, rec: MessageRecord): Promise<SenderNames> {
    const did = rec.value.author.did;
    const claimed = rec.value.author.handle;
    await this.epochs.keys.authorKey(did).catch(() => null);
    const pinnedName = await this.c.keyring.pinnedHandle(did);
    const shownAs = pinnedName ?? SecurityText.unverifiedName(did);
    // A name the server gives this sender that is pinned to someone else: the server passes one
    // person off as another.
    const claimedBy = pinnedName === null ? await this.c.keyring.didOfPinnedHandle(claimed) : null;
    const nameTaken = claimedBy !== null && claimedBy !== did;
    if (nameTaken) {
      this.epochs.warn(channelId, "handle", {
        did,
        handle: shownAs,
        detail: `the server calls them ${claimed}, a name that belongs to someone else`,
      });
    }
    const renamed = pinnedName !== null && shownAs !== claimed;
    // The server names this person differently from their pin: say so, and never verify it.
    if (renamed)
      this.epochs.warn(channelId, "handle", {
        did,
        handle: shownAs,
        detail: `the server calls them ${claimed}`,
      });
    return { shownAs, mismatch: renamed || nameTaken };
  }

  /** A deleted message: a v3 tombstone keeps its signed pair and chain in the clear (protocol §8). */
  private async tombstoneItem(channelId: string, rec: MessageRecord, item: TimelineItem): Promise<Decrypted> {
    const view = this.view(channelId);
    const t = rec.value.tombstone;
    const pair = t
      ? {
          senderDid: t.senderDid,
          clientMsgId: t.clientMsgId,
          seq: rec.seq,
          chain: t.chain,
          epochNumber: t.epochNumber,
        }
      : null;
    const deleted = view
      ? await this.checkDeletion(view, rec.uri, rec.value.author.did, rec.value.deletion, pair)
      : { did: "", handle: "the server", signed: false };
    return { item: { ...item, state: "success", deleted }, facts: null };
  }

  /**
   * The verified key of the epoch a message names, loading epochs this client has not seen yet
   * (once more if a load already under way began before that epoch existed); else the text of why
   * the message cannot be opened.
   */
  private async recordKey(channelId: string, envelope: Envelope): Promise<VerifiedKey | string> {
    const epochId = typeof envelope.epochId === "string" ? envelope.epochId : "";
    const n = typeof envelope.epochNumber === "number" ? envelope.epochNumber : null;
    const vk = await this.epochs.verifiedKey(channelId, epochId);
    if (vk) return vk;
    const first = await this.c.keyring.firstEpochNumber(channelId);
    if (first !== null && n !== null && n < first) return FORWARD_SECRECY_TEXT;
    const load =
      n !== null && HEX32.test(epochId)
        ? this.epochs.loadUntil(channelId, n, epochId)
        : this.epochs.loadEpochKeys(channelId);
    await load.catch((e) => this.c.log(`epoch keys: ${reasonOf(e)}`));
    const loaded = await this.epochs.verifiedKey(channelId, epochId);
    if (loaded) return loaded;
    const firstNow = await this.c.keyring.firstEpochNumber(channelId);
    const before = firstNow === null || (n !== null && n < firstNow);
    return before ? FORWARD_SECRECY_TEXT : CryptoText.epochKeyNotFound(epochId);
  }

  /**
   * Decrypts a message under its epoch's verified key and checks it (protocol §7, §8): the signature
   * under the key the epoch's signed member list names for the sender, the sender listed, the signed
   * time within the epoch, and the sender's name. Throws what cannot be opened.
   */
  private async openMessage(
    channelId: string,
    rec: MessageRecord,
    item: TimelineItem,
    names: SenderNames,
    vk: VerifiedKey,
    envelope: Envelope,
  ): Promise<Decrypted> {
    // The epoch's signed member list names the key the sender had then (it may since be replaced).
    const listedFp = vk.epoch.members.find((m) => m.did === rec.value.author.did)?.fp ?? null;
    const out = await decryptMessage({
      // Parsed once, above (a long history's records each pay for a parse).
      content: envelope,
      channelId,
      recordAuthorDid: rec.value.author.did,
      // The bytes when this runtime opens messages with its own AES-GCM (core/crypto/gcm.ts).
      epochKey: hasNativeGcm() && vk.key.key ? vk.key.key : await importedKey(vk.key),
      senderPublicKey: await this.epochs.keys.signerKey(rec.value.author.did, listedFp),
      epochVersion: vk.epoch.v,
    });
    const chain = await this.epochs.chain(channelId);
    const notes = this.integrityNotes(channelId, rec, names, vk.epoch, chain, out);
    const trusted = notes.every((x) => x === "legacy");
    // Another member's verified message under the head epoch, signed after this device signed in,
    // confirms a fresh device's view of the channel (protocol §8).
    if (
      out.verified &&
      trusted &&
      out.senderDid !== this.c.me().did &&
      chain.head?.epochId === vk.epoch.epochId
    )
      await this.epochs.confirmFresh(channelId, out.timestamp);
    return {
      item: {
        ...item,
        text: "text" in out.plaintext ? out.plaintext.text : null,
        clientMsgId: out.clientMsgId,
        ...richOf(out.plaintext),
        state: "success",
        verified: out.verified && trusted,
        signedAt: new Date(out.timestamp).toISOString(),
        ...(notes.length ? { notes } : {}),
        ...(out.chain ? { chain: out.chain } : {}),
      },
      facts: {
        senderDid: out.senderDid,
        clientMsgId: out.clientMsgId,
        epochNumber: vk.epoch.epochNumber,
        timestamp: out.timestamp,
        // Only a verified message's number counts (a forged one could fill a withheld gap).
        ...(out.chain && out.verified && trusted ? { chain: out.chain } : {}),
      },
    };
  }

  /** What keeps an opened message from counting as verified (only "legacy" still does). */
  private integrityNotes(
    channelId: string,
    rec: MessageRecord,
    names: SenderNames,
    epoch: VerifiedEpoch,
    chain: ChainState,
    out: DecryptedMessage,
  ): IntegrityNote[] {
    const notes: IntegrityNote[] = [];
    if (epoch.v === 1) notes.push("legacy");
    if (!epoch.members.some((m) => m.did === out.senderDid)) notes.push("not-a-member");
    const next = chain.epochs[String(epoch.epochNumber + 1)];
    const skew = Limits.clockSkewMs;
    if (out.timestamp < epoch.createdAt - skew || (next && out.timestamp > next.createdAt + skew)) {
      notes.push("outside-epoch");
    }
    const stored = Date.parse(rec.indexedAt);
    if (!Number.isNaN(stored) && stored - out.timestamp > skew) notes.push("out-of-order");
    // Protocol §8: while a name warning is open for the sender, none of their messages is verified.
    const nameWarned =
      names.mismatch ||
      (this.view(channelId)?.warnings.some((w) => w.check === "handle" && w.did === out.senderDid) ?? false);
    if (nameWarned) notes.push("handle-mismatch");
    return notes;
  }

  // ---- sending ----------------------------------------------------------------------------------

  /**
   * Encrypts under the newest verified epoch and sends, rotating first when the member set changed
   * and retrying with the same clientMsgId, so a retry can never post the message twice. It never
   * sends under an epoch that failed a check, an older one, or one the server swapped in.
   *
   * Offline (the server unreachable while the socket is kept up), the message is queued: its row
   * stays TRANSMITTING with `queued`, `onQueued` is called (the input can take the next one), and it
   * goes out when the connection is back, for up to OFFLINE_QUEUE_MS; then it fails (✗) and
   * `resend` can try it again. `clientMsgId` is given by `resend` only.
   */
  async send(
    channelId: string,
    text: string,
    opts: { clientMsgId?: string; onQueued?: () => void; body?: RichPlaintext } = {},
  ): Promise<TimelineItem> {
    const view = this.requireView(channelId);
    const trimmed = text.trim();
    if (!trimmed && opts.body?.type !== "reaction" && opts.body?.type !== "file")
      throw new Error("Message is empty");
    if (!view.keysLoaded) throw new Error(CryptoText.epochKeysNotLoaded);
    const identity = this.c.keyring.identity;
    if (!identity) throw new Error(CryptoText.notInitialized);
    const me = this.c.me();
    const clientMsgId = opts.clientMsgId ?? newClientMsgId();
    const pending: TimelineItem = {
      uri: `pending:${clientMsgId}`,
      seq: 0,
      kind: "message",
      author: me,
      createdAt: new Date(this.c.now()).toISOString(),
      text,
      state: "success",
      verified: true,
      error: null,
      clientMsgId,
      sending: true,
      ...(opts.body ? richOf(opts.body) : {}),
    };
    insertIntoView(view, pending);
    this.c.changed();
    const sent = await this.outbox.deliver({
      view,
      pending,
      channelId,
      publicKey: identity.publicKey,
      ...(opts.onQueued ? { onQueued: opts.onQueued } : {}),
      onEpochMoved: () => this.epochs.refreshEpoch(channelId),
      attempt: async () => {
        // Which epoch, after any rotation the policy asks for (epoch-manager.ts `headForSending`).
        const { head, vk } = await this.epochs.headForSending(channelId, view, identity.publicKey);
        const chain =
          vk.epoch.v === 3
            ? await this.outbox.position(clientMsgId, identity.publicKey, channelId)
            : undefined;
        const enc = await encryptMessage({
          ...(chain ? { chain } : {}),
          identity,
          senderDid: me.did,
          channelId,
          epochId: head.epochId,
          epochNumber: head.epochNumber,
          epochKey: await importedKey(vk.key),
          text,
          clientMsgId,
          timestamp: this.c.now(),
          ...(opts.body ? { body: opts.body } : {}),
        });
        const record = await this.outbox.transmit({
          channelUri: view.channel.uri,
          content: enc.contentJson,
          clientMsgId,
        });
        return { record, enc, chain, head };
      },
    });
    // Placed as a record of our own, verified, with its signed time and chain number.
    const { record, enc, chain, head } = sent;
    const item: TimelineItem = {
      ...itemFromRecord(record),
      author: me,
      text: opts.body?.type === "reaction" ? null : text,
      state: "success",
      verified: true,
      clientMsgId,
      ...(opts.body ? richOf(opts.body) : {}),
      signedAt: new Date(enc.content.timestamp).toISOString(),
      ...(chain ? { chain } : {}),
    };
    const seen = await this.c.keyring.chains.seenState(channelId);
    const draft = draftOf(view);
    const placedNow = this.place(draft, channelId, seen, item, {
      senderDid: me.did,
      clientMsgId,
      epochNumber: head.epochNumber,
      timestamp: enc.content.timestamp,
      ...(chain ? { chain } : {}),
    });
    if (placedNow) commitDraft(view, draft);
    const placed = placedNow ?? view.items.find((i) => i.uri === record.uri) ?? item;
    const cov = this.coverage.get(channelId);
    if (cov && record.seq > cov.hi + 1) this.fillGap(channelId, cov.hi);
    else if (cov && record.seq === cov.hi + 1) cov.hi = record.seq;
    this.c.changed();
    return placed;
  }
}
