import type { RouteBody, RouteName, RouteResponse } from "../../core/protocol/index.ts";
import { checkReady } from "../ops/health.ts";
import { selfDelete } from "../services/account-deletion.ts";
import type { AuthContext } from "../services/auth-service.ts";
import type { Services } from "../services/services.ts";
import { VERSION } from "../version.ts";
import { refreshFromCookie } from "./session-cookie.ts";

interface Args<N extends RouteName> {
  body: RouteBody<N>;
  request: Request;
  /** Set for routes whose `auth` is "access" (checked before the handler runs). */
  auth: AuthContext | null;
  /** The client's address (app.ts: the TCP peer, or a trusted proxy's X-Forwarded-For). */
  address: string | null;
  /** The path's `:name` parameters (raw, as the router decoded them). */
  params: Record<string, string>;
}

type Handler<N extends RouteName> = (s: Services, a: Args<N>) => Promise<RouteResponse<N>>;

/** The caller, for routes that require an access token; the app checks it before calling. */
function caller(a: { auth: AuthContext | null }): AuthContext {
  if (!a.auth) throw new Error("route declared auth: access but no context was resolved");
  return a.auth;
}

/** One adapter per protocol call: HTTP shape in, service call, HTTP shape out. */
export const handlers: { [N in RouteName]: Handler<N> } = {
  register: (s, a) => s.auth.register(a.body),
  login: (s, a) => s.auth.login(a.body, a.address),
  session: (s, a) => s.auth.user(caller(a)),
  refresh: (s, a) => {
    // A browser's cookie session (http/session-cookie.ts); otherwise the bearer token of protocol §3.
    const cookie = a.request.headers.get("authorization") ? null : refreshFromCookie(a.request);
    return s.auth.refresh(cookie ? `Bearer ${cookie}` : a.request.headers.get("authorization"));
  },
  authorize: (s, a) => s.auth.authorize(a.body),
  logout: (s, a) => s.auth.logout(a.body),
  logoutCookie: async (s, a) => {
    const token = refreshFromCookie(a.request);
    // No cookie: nothing to end here (the app clears the cookie either way).
    return token ? s.auth.logout({ did: a.body.did, refreshJwt: token }) : { success: true as const };
  },
  listSessions: (s, a) => s.auth.listSessions(caller(a)),
  revokeSession: (s, a) => s.auth.revokeSession(caller(a), a.body),
  accountDelete: (s, a) => selfDelete(s, caller(a), a.body),
  revokeOtherSessions: (s, a) => s.auth.revokeOtherSessions(caller(a)),
  keyBackupPut: (s, a) => s.keyBackups.put(caller(a), a.body),
  keyBackupGet: (s, a) => s.keyBackups.get(caller(a)),
  keyBackupDelete: (s, a) => s.keyBackups.delete(caller(a)),
  trustStatePut: (s, a) => s.keyBackups.putTrustState(caller(a), a.body),
  trustStateGet: (s, a) => s.keyBackups.getTrustState(caller(a)),
  savePublicKey: (s, a) => s.auth.savePublicKey(caller(a), a.body),
  getKeys: (s, a) => s.auth.getKeys(a.body),
  resolveUser: (s, a) => {
    caller(a);
    return s.auth.resolveUser(a.body);
  },
  getChannels: async (s, a) => {
    const page = await s.channels.list(caller(a), a.body);
    return { ...page, channels: s.bots.visible(caller(a), page.channels) };
  },
  createChannel: (s, a) => s.channels.create(caller(a), a.body),
  joinChannel: async (s, a) => {
    const { channel, members } = await s.channels.join(caller(a), a.body);
    return { channel, members };
  },
  leaveChannel: (s, a) => s.channels.leave(caller(a), a.body),
  invite: (s, a) => s.channels.invite(caller(a), a.body),
  getInvites: async (s, a) => {
    const { invites } = await s.channels.invites(caller(a));
    const shown = new Set(
      s.bots
        .visible(
          caller(a),
          invites.map((i) => i.channel),
        )
        .map((c) => c.id),
    );
    return { invites: invites.filter((i) => shown.has(i.channel.id)) };
  },
  markRead: (s, a) => s.channels.markRead(caller(a), a.body),
  getReadMarkers: (s, a) => s.channels.readMarkers(caller(a)),
  kick: (s, a) => s.channels.kick(caller(a), a.body),
  getMembers: (s, a) => s.channels.members(caller(a), a.body),
  getEpochKeys: (s, a) => s.epochs.keys(caller(a), a.body),
  getEpochInfo: (s, a) => s.epochs.getInfo(caller(a), a.body),
  createEpoch: (s, a) => s.epochs.create(caller(a), a.body),
  getMessages: (s, a) => s.messages.list(caller(a), a.body),
  send: (s, a) => s.messages.send(caller(a), a.body),
  deleteMessage: (s, a) => s.messages.delete(caller(a), a.body),
  deviceLinkOpen: (s, a) => s.deviceLinks.open(caller(a), a.body),
  deviceLinkLookup: (s, a) => s.deviceLinks.lookup(caller(a), a.body),
  deviceLinkComplete: (s, a) => s.deviceLinks.complete(caller(a), a.body),
  deviceLinkFetch: (s, a) => s.deviceLinks.fetch(caller(a), a.params.code ?? "", a.request.signal),
  botCreate: (s, a) => s.bots.create(caller(a), a.body),
  botList: (s, a) => s.bots.list(caller(a)),
  botRevoke: (s, a) => s.bots.revoke(caller(a), a.body),
  botSelf: (s, a) => s.bots.self(caller(a)),
  dmOpen: (s, a) => s.direct.open(caller(a), a.body),
  dmList: (s, a) => s.direct.list(caller(a)),
  dmAccept: (s, a) => s.direct.accept(caller(a), a.body),
  dmBlock: (s, a) => s.direct.block(caller(a), a.body),
  dmUnblock: (s, a) => s.direct.unblock(caller(a), a.body),
  weather: async (s) => ({ data: await s.weather.get() }),
  health: async () => ({ ok: true as const, version: VERSION }),
  serverInfo: async (s) => ({ version: VERSION, retentionMaxDays: s.config.retentionMaxDays ?? null }),
  ready: (s) => checkReady(s),
};
