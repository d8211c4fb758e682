/**
 * Benchmark: the bytes one message costs on the wire under protocol v2 and v3 (section 8 adds the
 * signed sender chain `chain: {device, n}` to EncryptedContent). The same text is encrypted both
 * ways; printed are the EncryptedContent JSON and the whole `channel:message` frame a member
 * receives (the record with that content as a string), for a short and a long message, and a chain
 * number of 1 and of 100,000. Target: v3 under 80 bytes more than v2 per frame.
 * Usage: bun tests/bench/frame-size.ts
 */
import {
  encryptMessage,
  generateEpochKey,
  generateIdentity,
  importIdentity,
  newEpochId,
} from "../../core/crypto/index.ts";
import { messageUri, WsEvent } from "../../core/protocol/index.ts";

const keys = await generateIdentity();
const identity = await importIdentity(keys.privateKey);
const senderDid = "did:plc:abcdefghijklmnopqrstuvwx";
const channelId = "abcdefghijklmnop";
const epochKey = generateEpochKey();
const epochId = newEpochId();
const device = "0123456789abcdef0123456789abcdef";

function frame(content: string): string {
  return JSON.stringify({
    type: WsEvent.channelMessage,
    data: {
      record: {
        uri: messageUri(senderDid, "3lbcdefghijk2"),
        channelUri: `at://${senderDid}/chat.wsync.channel/${channelId}`,
        seq: 123456,
        indexedAt: new Date(1_790_000_000_000).toISOString(),
        value: {
          $type: "chat.wsync.message",
          author: { did: senderDid, handle: "alice.example.org" },
          createdAt: new Date(1_790_000_000_000).toISOString(),
          content,
        },
      },
    },
  });
}

for (const text of ["ok", "x".repeat(400)]) {
  const base = {
    identity,
    senderDid,
    channelId,
    epochId,
    epochNumber: 7,
    epochKey,
    text,
    timestamp: 1_790_000_000_000,
  };
  const v2 = await encryptMessage(base);
  for (const n of [1, 100_000]) {
    const v3 = await encryptMessage({ ...base, clientMsgId: v2.clientMsgId, chain: { device, n } });
    const c2 = v2.contentJson.length;
    const c3 = v3.contentJson.length;
    const f2 = frame(v2.contentJson).length;
    const f3 = frame(v3.contentJson).length;
    console.log(
      `frame-size: text ${text.length} chars, n=${n}: content v2 ${c2} B, v3 ${c3} B (+${c3 - c2}); channel:message frame v2 ${f2} B, v3 ${f3} B (+${f3 - f2}); target < +80`,
    );
  }
}
