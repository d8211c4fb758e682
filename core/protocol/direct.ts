import { type Static, Type } from "@sinclair/typebox";
import { DirectKinds, DirectLimits, DirectRouteMeta } from "./direct-meta.ts";
import { Channel, ChannelUri, Did, Member } from "./models.ts";

const strict = { additionalProperties: false } as const;
const Success = Type.Object({ success: Type.Literal(true) });
const Person = Type.Object({ did: Did, handle: Type.String() });

/**
 * One conversation as its member sees it: the channel (type `direct`), who is in it, and whether it
 * is a message request for the caller (someone who shares no channel with them and whom they never
 * wrote to opened it: protocol-extensions "Direct conversations").
 */
export const Conversation = Type.Object({
  channel: Channel,
  kind: Type.Union(DirectKinds.map((k) => Type.Literal(k))),
  members: Type.Array(Person),
  /** The one who opened it (the did of the channel's uri, who makes epoch 1). */
  openedBy: Person,
  request: Type.Boolean(),
});
export type Conversation = Static<typeof Conversation>;

/** Like http.ts `route` (which this module cannot import without a cycle): the definition as is. */
const route = <T extends object>(def: T): T & { maxBytes?: number } => def;

/** The direct-conversation routes (Routes spreads these in). */
export const DirectRoutes = {
  dmOpen: route({
    ...DirectRouteMeta.dmOpen,
    /**
     * `handles`: the others (none: notes to self; one: the pair's unique conversation; more: a new
     * group). The caller's own handle, if listed, is ignored.
     */
    body: Type.Object(
      {
        handles: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
          maxItems: DirectLimits.maxMembers - 1,
        }),
        name: Type.Optional(Type.String({ maxLength: DirectLimits.nameMaxChars })),
      },
      strict,
    ),
    response: Type.Object({
      conversation: Conversation,
      members: Type.Array(Member),
      /** False when the pair's (or self's) conversation already existed. */
      created: Type.Boolean(),
    }),
  }),
  dmList: route({
    ...DirectRouteMeta.dmList,
    body: Type.Object({}, strict),
    response: Type.Object({ conversations: Type.Array(Conversation), blocked: Type.Array(Person) }),
  }),
  dmAccept: route({
    ...DirectRouteMeta.dmAccept,
    body: Type.Object({ channelUri: ChannelUri }, strict),
    response: Success,
  }),
  dmBlock: route({
    ...DirectRouteMeta.dmBlock,
    body: Type.Object({ did: Did }, strict),
    response: Success,
  }),
  dmUnblock: route({
    ...DirectRouteMeta.dmUnblock,
    body: Type.Object({ did: Did }, strict),
    response: Success,
  }),
} as const;
