import { defineCommand } from "./define.ts";
import type { MsgCommand, QueryCommand } from "./types.ts";

/** A handle as typed (`bob`, `@bob`, `bob.example.org`); the server adds its suffix. */
const HANDLE_RE = /^@?[a-z0-9][a-z0-9.-]{0,252}$/i;

/**
 * `/msg handle text` (irssi's private message): opens your conversation with that person, the same
 * one every time, and sends the rest of the line. The text keeps its words as typed, joined by one
 * space (the line was split on whitespace).
 */
export const msg = defineCommand<MsgCommand>({
  name: "msg",
  aliases: ["/msg"],
  arguments: [
    { name: "handle", required: true, description: "the person to write to" },
    { name: "text", required: true, description: "the message" },
  ],
  usage: "/wsync/msg <handle> <text>",
  summary: "send a direct message to a person",
  details: ["Opens your conversation with them (encrypted like a channel), then sends."],
  parse(args, fail) {
    const [handle, ...words] = args;
    if (handle === undefined) return fail("Missing handle.");
    if (!HANDLE_RE.test(handle)) return fail(`Not a handle: ${handle}.`);
    if (words.length === 0) return fail("Missing message text.");
    return { name: "msg", handle: handle.replace(/^@/, ""), text: words.join(" ") };
  },
});

/** `/query handle` (irssi's query window): opens the conversation with that person, without sending. */
export const query = defineCommand<QueryCommand>({
  name: "query",
  aliases: ["/query"],
  arguments: [{ name: "handle", required: true, description: "the person to talk to" }],
  usage: "/wsync/query <handle>",
  summary: "open your conversation with a person",
  details: ["The same conversation every time, from either side."],
  parse(args, fail) {
    const handle = args[0];
    if (handle === undefined) return fail("Missing handle.");
    if (!HANDLE_RE.test(handle)) return fail(`Not a handle: ${handle}.`);
    return { name: "query", handle: handle.replace(/^@/, "") };
  },
});
