import { ApiError, type RouteBody } from "../../core/protocol/index.ts";
import type { Storage } from "../storage/types.ts";
import { newRkey } from "../util/ids.ts";
import type { AuthContext } from "./auth-service.ts";
import { verifyPassword } from "./passwords.ts";
import type { Services } from "./services.ts";

/** What deleting an account did (printed by `wsync admin delete` and `wsync account delete --json`). */
export interface DeletionReport {
  did: string;
  handle: string;
  /** Channels and conversations it was removed from. */
  channels: number;
  /** Of those, the ones it owned that passed to their longest-standing member. */
  handedOver: number;
  /** Of those, the ones it owned that are left with nobody (closed: no owner, no members). */
  closed: number;
  /** Its messages, now tombstones. */
  messages: number;
  /** Its sessions that were still live, now revoked. */
  sessions: number;
}

/**
 * Deletes an account (docs/decisions/admin.md), on the storage alone, so `wsync admin delete` can run
 * from its own process beside a running server, and the self-service route runs the same code:
 * 1. It leaves every channel and conversation (ChannelStore.removeMember: the member version moves,
 *    so every member's next message first makes a new epoch without it, and a channel it owned
 *    passes to the longest-standing member, or is left without owner or members), with a "left" notice
 *    in each, all stamped `now`.
 * 2. AdminStore.eraseAccount: marked deleted at the same `now`; email and password hash erased;
 *    sessions and its bots revoked; key backup, trust state, read markers, device links, invites,
 *    conversation states, blocks removed; its messages made tombstones.
 * Running servers find it in their poll (server/ops/account-watch.ts): they close its sockets with
 * 4410 and tell the members' open sockets of the notices stamped `now`. Run again after a crash, it
 * finishes what is left. Null when there is no such account (or it was deleted and nothing is left).
 */
export async function deleteAccount(
  storage: Storage,
  did: string,
  now: number,
): Promise<DeletionReport | null> {
  const account = await storage.accounts.byDid(did);
  if (!account) return null;
  const report: DeletionReport = {
    did,
    handle: account.handle,
    channels: 0,
    handedOver: 0,
    closed: 0,
    messages: 0,
    sessions: 0,
  };
  for (const channelId of await storage.channels.channelIdsOf(did)) {
    const before = await storage.channels.get(channelId);
    if (!before || !(await storage.channels.removeMember(channelId, did))) continue;
    report.channels++;
    await storage.timeline.appendNotify({
      channelId,
      rkey: newRkey(now),
      subjectDid: did,
      subjectHandle: account.handle,
      action: "left",
      createdAt: now,
    });
    if (before.ownerDid === did) {
      const after = await storage.channels.get(channelId);
      if (after?.ownerDid) report.handedOver++;
      else report.closed++;
    }
  }
  const erased = await storage.admin.eraseAccount(did, now);
  if (!erased && account.deletedAt != null && report.channels === 0) return null;
  report.messages = erased?.messages ?? 0;
  report.sessions = erased?.sessions ?? 0;
  return report;
}

/** How recent an ATProto account's sign-in must be for it to delete itself. */
export const ATPROTO_FRESH_SIGNIN_MS = 10 * 60 * 1000;

export const AccountDeletionText = {
  atprotoSignInAgain:
    "Sign in with ATProto again to delete this account: it needs a sign-in from the last 10 minutes",
} as const;

/**
 * `POST /auth/account/delete` (`wsync account delete`, the web's settings): the caller's own account,
 * with its password (a stolen access token alone cannot delete anyone), as `wsync admin delete` does.
 * This process's sockets close and its members hear at once; other processes within their poll.
 */
export async function selfDelete(
  s: Services,
  ctx: AuthContext,
  body: RouteBody<"accountDelete">,
): Promise<{ success: true; channels: number; messages: number }> {
  const account = await s.storage.accounts.byDid(ctx.did);
  if (!account || account.deletedAt != null) throw new ApiError("Unauthorized", "Session is no longer valid");
  if (await s.storage.atproto.byDid(ctx.did)) {
    // No wsync password exists: the handle typed, and a fresh sign-in at the PDS (this session was
    // made by one within ATPROTO_FRESH_SIGNIN_MS), stand for it.
    if (body.handle !== account.handle)
      throw new ApiError("Forbidden", "Type this account's handle to delete it");
    const session = await s.storage.sessions.get(ctx.sessionId);
    if (!session || s.clock.now() - session.createdAt > ATPROTO_FRESH_SIGNIN_MS)
      throw new ApiError("Forbidden", AccountDeletionText.atprotoSignInAgain);
  } else {
    if (body.password === undefined) throw new ApiError("InvalidRequest", "password: required");
    // Forbidden rather than InvalidCredentials: a 401 would send the client to refresh its token.
    if (!(await verifyPassword(body.password, account.passwordHash)))
      throw new ApiError("Forbidden", "That is not this account's password");
  }
  // What other parts undo first, while the account still exists (its ATProto key proof).
  for (const hook of s.beforeAccountDeletion) {
    await hook(ctx.did).catch((e: unknown) =>
      s.logger.warn("before account deletion: a step failed", { did: ctx.did, error: (e as Error).message }),
    );
  }
  const report = await deleteAccount(s.storage, ctx.did, s.clock.now());
  s.logger.info("account deleted by its owner", { did: ctx.did, channels: report?.channels ?? 0 });
  await s.accountWatch.tick();
  return { success: true, channels: report?.channels ?? 0, messages: report?.messages ?? 0 };
}
