import { type Static, Type } from "@sinclair/typebox";
import { ChannelUri } from "./models.ts";

export * from "./blob-paths.ts";

/** The create body's schema (blob-paths.ts BlobCreateBody), for the server. */
export const BlobCreateBodySchema = Type.Object(
  {
    channelUri: ChannelUri,
    /** The message that will name this blob: deleting it deletes the blob; without it, collected after 24 h. */
    clientMsgId: Type.String({ pattern: "^[0-9a-f]{32}$" }),
    /** Ciphertext bytes: chunks × FILE_CIPHER_CHUNK. */
    size: Type.Integer({ minimum: 1 }),
    chunks: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);
export type BlobCreateBodyChecked = Static<typeof BlobCreateBodySchema>;
