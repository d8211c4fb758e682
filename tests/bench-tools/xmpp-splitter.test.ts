/**
 * The benchmark's XMPP client splits the peer's stream into stanzas however TCP cuts it: across the
 * sign-in's stream restart, with self-closing stanzas, and with a stanza in many pieces.
 */
import { expect, test } from "bun:test";
import { escapeXml, StanzaSplitter, unescapeXml } from "../../bench/lib/xmpp.ts";

const STREAM =
  "<?xml version='1.0'?><stream:stream xmlns='jabber:client' version='1.0' from='bench.local' id='a'>" +
  "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>ANONYMOUS</mechanism></mechanisms></stream:features>" +
  "<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>" +
  "<?xml version='1.0'?><stream:stream xmlns='jabber:client' version='1.0' from='bench.local' id='b'>" +
  "<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>" +
  "<iq type='result' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>x@bench.local/r</jid></bind></iq>" +
  "<message from='r@conference.bench.local/m0' type='groupchat'><body>7 a &lt;b&gt; &amp; c</body><stanza-id id='1'/></message>";

const EXPECTED = [
  "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>ANONYMOUS</mechanism></mechanisms></stream:features>",
  "<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>",
  "<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>",
  "<iq type='result' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>x@bench.local/r</jid></bind></iq>",
  "<message from='r@conference.bench.local/m0' type='groupchat'><body>7 a &lt;b&gt; &amp; c</body><stanza-id id='1'/></message>",
];

test("whole, or cut into pieces of every size, the stream gives the same stanzas", () => {
  for (const size of [STREAM.length, 1, 2, 3, 7, 64]) {
    const split = new StanzaSplitter();
    const out: string[] = [];
    for (let i = 0; i < STREAM.length; i += size) split.push(STREAM.slice(i, i + size), (s) => out.push(s));
    expect(out).toEqual(EXPECTED);
  }
});

test("bodies are escaped on the way out and read back as written", () => {
  const text = `3 <x> & 'y' "z"`;
  expect(escapeXml(text)).toBe("3 &lt;x&gt; &amp; &apos;y&apos; &quot;z&quot;");
  expect(unescapeXml(escapeXml(text))).toBe(text);
});
