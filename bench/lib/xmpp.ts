/**
 * The generator's XMPP client for the storing peer (bench/systems/xmpp.ts): a stream over
 * Bun.connect with SASL ANONYMOUS, resource binding and one multi-user chat room, the six stanzas the
 * suite needs and nothing else. Written here rather than taken from @xmpp/client for the same reason
 * as IrcClient: a thousand of these share the generator's core with the measurement, so a member only
 * counts the `<body>` elements it receives (a byte search, as IrcClient counts PRIVMSG), and only
 * the sampled receivers and the senders split the stream into stanzas once set up (`countOnly`).
 * No TLS: the peer listens on 127.0.0.1 only, as the other peers do.
 */

import { openTcp } from "./sockets.ts";

const BODY = Buffer.from("<body>");

/** Unescapes the five XML entities Prosody writes (its serializer escapes all of them). */
export function unescapeXml(s: string): string {
  return s.replace(/&(lt|gt|amp|apos|quot);/g, (_m, e: string) =>
    e === "lt" ? "<" : e === "gt" ? ">" : e === "amp" ? "&" : e === "apos" ? "'" : '"',
  );
}

export function escapeXml(s: string): string {
  return s.replace(/[<>&'"]/g, (c) =>
    c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "&" ? "&amp;" : c === "'" ? "&apos;" : "&quot;",
  );
}

/**
 * Splits an XMPP stream into its top-level stanzas: the stream's own element stays open at depth 1,
 * and a stanza is complete when the depth comes back to 1. Attribute values and text never hold a
 * raw `<` or `>` (the peer escapes them).
 */
export class StanzaSplitter {
  private buf = "";
  private depth = 0;
  private start = -1;
  private at = 0;

  push(chunk: string, out: (stanza: string) => void): void {
    this.buf += chunk;
    for (;;) {
      const lt = this.buf.indexOf("<", this.at);
      if (lt < 0) break;
      const gt = this.buf.indexOf(">", lt);
      if (gt < 0) break;
      const tag = this.buf.slice(lt, gt + 1);
      this.at = gt + 1;
      if (tag.startsWith("<?")) continue;
      // The stream's own element (again after the sign-in's restart): what follows is at depth 1.
      if (tag.startsWith("<stream:stream")) {
        this.depth = 1;
        this.start = -1;
        continue;
      }
      if (tag.startsWith("</")) {
        this.depth--;
        if (this.depth === 1 && this.start >= 0) {
          out(this.buf.slice(this.start, gt + 1));
          this.start = -1;
        }
      } else if (tag.endsWith("/>")) {
        if (this.depth === 1) out(tag);
      } else {
        if (this.depth === 1) this.start = lt;
        this.depth++;
      }
    }
    // Keep only what an unfinished stanza still needs.
    const keep = this.start >= 0 ? this.start : this.at;
    if (keep > 0) {
      this.buf = this.buf.slice(keep);
      this.at -= keep;
      if (this.start >= 0) this.start = 0;
    }
  }
}

export class XmppClient {
  /** `<body>` elements received (a room's messages). */
  count = 0;
  /** Every complete stanza, while set. */
  onStanza: ((stanza: string, at: number) => void) | null = null;
  /** This connection's full JID, once bound. */
  jid = "";
  /**
   * Whether the stream is split into stanzas (until `countOnly`): on from the start, so the splitter
   * never joins the stream in the middle of a stanza.
   */
  private parse = true;
  private sock!: Bun.Socket<undefined>;
  private readonly split = new StanzaSplitter();
  private carry = Buffer.alloc(0);
  closed = false;

  private constructor(private readonly domain: string) {}

  /** Connects, signs in anonymously and binds a resource. */
  static async open(port: number, domain: string): Promise<XmppClient> {
    const c = new XmppClient(domain);
    c.sock = await openTcp(port, {
      data: (d) => c.feed(d),
      closed: () => {
        c.closed = true;
      },
    });
    try {
      await c.handshake();
    } catch (e) {
      c.close();
      throw e;
    }
    return c;
  }

  private header(): void {
    this.sock.write(
      `<?xml version='1.0'?><stream:stream to='${this.domain}' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>`,
    );
  }

  private async handshake(): Promise<void> {
    let features = this.until((s) => s.startsWith("<stream:features"));
    this.header();
    if (!(await features).includes(">ANONYMOUS<")) throw new Error("the peer offers no ANONYMOUS sign-in");
    const auth = this.until((s) => s.startsWith("<success") || s.startsWith("<failure"));
    this.sock.write("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='ANONYMOUS'/>");
    if (!(await auth).startsWith("<success")) throw new Error("anonymous sign-in refused");
    features = this.until((s) => s.startsWith("<stream:features"));
    this.header();
    await features;
    const bound = this.until((s) => s.startsWith("<iq") && s.includes("id='bind'"));
    this.sock.write("<iq type='set' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></iq>");
    const jid = /<jid>([^<]+)<\/jid>/.exec(await bound)?.[1];
    if (!jid) throw new Error("no resource bound");
    this.jid = jid;
  }

  /**
   * Enters a room as `nick` (no history), when the room says so (status 110: this is you). The room
   * first sends the presence of everyone in it, and tells them all of the newcomer: in a room of
   * 1,000 the last joins wait behind the server's backlog, hence `ms`.
   */
  async join(room: string, nick: string, ms = 30_000): Promise<void> {
    const joined = this.until(
      (s) => s.startsWith("<presence") && s.includes(`from='${room}/${nick}'`) && s.includes("code='110'"),
      ms,
    );
    this.sock.write(
      `<presence to='${room}/${nick}'><x xmlns='http://jabber.org/protocol/muc'><history maxstanzas='0'/></x></presence>`,
    );
    await joined;
  }

  groupchat(room: string, body: string): void {
    this.sock.write(`<message to='${room}' type='groupchat'><body>${escapeXml(body)}</body></message>`);
  }

  /** Resolves with the first stanza `match` accepts; an error stanza or stream error rejects. */
  until(match: (stanza: string) => boolean, ms = 30_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for a stanza")), ms);
      this.onStanza = (s) => {
        if (match(s)) {
          clearTimeout(timer);
          this.onStanza = null;
          resolve(s);
        } else if (s.startsWith("<stream:error") || /^<\w+[^>]* type='error'/.test(s)) {
          clearTimeout(timer);
          this.onStanza = null;
          reject(new Error(s.slice(0, 300)));
        }
      };
    });
  }

  /** From now on only `<body>` elements are counted (a member nobody samples). */
  countOnly(): void {
    this.parse = false;
    this.onStanza = null;
  }

  close(): void {
    if (this.closed) return;
    this.sock?.write("</stream:stream>");
    this.sock?.end();
  }

  private feed(d: Buffer): void {
    const edge = Buffer.concat([this.carry, d.subarray(0, BODY.length - 1)]);
    if (edge.indexOf(BODY) >= 0) this.count++;
    for (let i = d.indexOf(BODY); i >= 0; i = d.indexOf(BODY, i + BODY.length)) this.count++;
    this.carry = Buffer.from(d.subarray(Math.max(0, d.length - (BODY.length - 1))));
    if (!this.parse) return;
    const now = performance.now();
    this.split.push(d.toString("utf8"), (s) => this.onStanza?.(s, now));
  }
}
