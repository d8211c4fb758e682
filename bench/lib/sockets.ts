/**
 * The generator's cheap clients: a WebSocket client and an IRC client over Bun.connect that count
 * what they receive by parsing frame headers (or scanning for line ends) only, and hand the text of
 * a frame to `onText` only when one is set (the sampled receivers, and setup).
 */

/** Which delivered frames a member counts. */
export type FrameFilter = (b: Buffer, start: number, len: number) => boolean;

export class WsClient {
  /** Frames that passed the filter. */
  count = 0;
  onText: ((text: string, at: number) => void) | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private sock!: Bun.Socket<undefined>;
  closed = false;

  private constructor(private readonly filter: FrameFilter) {}

  static open(
    port: number,
    path: string,
    headers: Record<string, string>,
    filter: FrameFilter,
  ): Promise<WsClient> {
    const c = new WsClient(filter);
    return new Promise((resolve, reject) => {
      let head = "";
      let upgraded = false;
      Bun.connect({
        hostname: "127.0.0.1",
        port,
        socket: {
          open(s) {
            c.sock = s as Bun.Socket<undefined>;
            const extra = Object.entries(headers)
              .map(([k, v]) => `${k}: ${v}\r\n`)
              .join("");
            s.write(
              `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
                `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
            );
          },
          data(_s, d) {
            if (upgraded) return c.feed(d as Buffer);
            head += d.toString("latin1");
            const end = head.indexOf("\r\n\r\n");
            if (end < 0) return;
            if (!head.startsWith("HTTP/1.1 101")) return reject(new Error(head.split("\r\n")[0]));
            upgraded = true;
            resolve(c);
            const rest = Buffer.from(head.slice(end + 4), "latin1");
            if (rest.length) c.feed(rest);
          },
          close() {
            c.closed = true;
          },
          error(_s, e) {
            c.closed = true;
            reject(e);
          },
          connectError(_s, e) {
            reject(e);
          },
        },
      }).catch(reject);
    });
  }

  /** Sends a masked text frame (mask 0: the payload goes as is). */
  send(text: string): void {
    const p = Buffer.from(text);
    const n = p.length;
    const h = n < 126 ? Buffer.alloc(6) : n < 65536 ? Buffer.alloc(8) : Buffer.alloc(14);
    h[0] = 0x81;
    if (n < 126) h[1] = 0x80 | n;
    else if (n < 65536) {
      h[1] = 0x80 | 126;
      h.writeUInt16BE(n, 2);
    } else {
      h[1] = 0x80 | 127;
      h.writeBigUInt64BE(BigInt(n), 2);
    }
    this.sock.write(Buffer.concat([h, p]));
  }

  /** Resolves with the first frame's text that `match` accepts (rejects on an `error` frame). */
  until(match: (text: string) => boolean, ms = 30_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for a frame")), ms);
      this.onText = (text) => {
        if (match(text)) {
          clearTimeout(timer);
          this.onText = null;
          resolve(text);
        } else if (text.startsWith('{"type":"error"')) {
          clearTimeout(timer);
          this.onText = null;
          reject(new Error(text.slice(0, 300)));
        }
      };
    });
  }

  close(): void {
    this.sock?.end();
  }

  private feed(d: Buffer): void {
    const b = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    let o = 0;
    const now = performance.now();
    for (;;) {
      if (b.length - o < 2) break;
      let len = (b[o + 1] as number) & 127;
      let hl = 2;
      if (len === 126) {
        if (b.length - o < 4) break;
        len = b.readUInt16BE(o + 2);
        hl = 4;
      } else if (len === 127) {
        if (b.length - o < 10) break;
        len = Number(b.readBigUInt64BE(o + 2));
        hl = 10;
      }
      if (b.length - o < hl + len) break;
      if (this.filter(b, o + hl, len)) this.count++;
      if (this.onText) this.onText(b.toString("utf8", o + hl, o + hl + len), now);
      o += hl + len;
    }
    this.buf = o === b.length ? Buffer.alloc(0) : Buffer.from(b.subarray(o));
  }
}

/**
 * A TCP connection to 127.0.0.1:`port` for a line or stream client (IRC, XMPP): resolves once open;
 * `data` gets every chunk, `closed` is told when it ends or fails.
 */
export function openTcp(
  port: number,
  on: { data(d: Buffer): void; closed(): void },
): Promise<Bun.Socket<undefined>> {
  return new Promise((resolve, reject) => {
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(s) {
          resolve(s as Bun.Socket<undefined>);
        },
        data(_s, d) {
          on.data(d as Buffer);
        },
        close() {
          on.closed();
        },
        error(_s, e) {
          on.closed();
          reject(e);
        },
        connectError(_s, e) {
          reject(e);
        },
      },
    }).catch(reject);
  });
}

const PRIVMSG = Buffer.from(" PRIVMSG ");

export class IrcClient {
  /** PRIVMSG lines received. */
  count = 0;
  onLine: ((line: string, at: number) => void) | null = null;
  private sock!: Bun.Socket<undefined>;
  private tail = "";
  private carry = Buffer.alloc(0);
  closed = false;

  static async open(port: number): Promise<IrcClient> {
    const c = new IrcClient();
    c.sock = await openTcp(port, {
      data: (d) => c.feed(d),
      closed: () => {
        c.closed = true;
      },
    });
    return c;
  }

  send(line: string): void {
    this.sock.write(`${line}\r\n`);
  }

  /** Resolves with the first line that `match` accepts (answers PING meanwhile). */
  until(match: (line: string) => boolean, ms = 30_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for a line")), ms);
      this.onLine = (line) => {
        if (match(line)) {
          clearTimeout(timer);
          this.onLine = null;
          resolve(line);
        } else if (/^:\S+ (4\d\d|5\d\d) /.test(line) && !/ 421 | 451 /.test(line)) {
          clearTimeout(timer);
          this.onLine = null;
          reject(new Error(line));
        }
      };
    });
  }

  close(): void {
    this.sock?.end();
  }

  private feed(d: Buffer): void {
    // Counting: every " PRIVMSG " in the chunk, and one that straddles the previous chunk's end.
    const edge = Buffer.concat([this.carry, d.subarray(0, PRIVMSG.length - 1)]);
    if (edge.indexOf(PRIVMSG) >= 0) this.count++;
    for (let i = d.indexOf(PRIVMSG); i >= 0; i = d.indexOf(PRIVMSG, i + PRIVMSG.length)) this.count++;
    this.carry = Buffer.from(d.subarray(Math.max(0, d.length - (PRIVMSG.length - 1))));
    if (!this.onLine) {
      this.tail = "";
      return;
    }
    const text = this.tail + d.toString("utf8");
    const lines = text.split("\r\n");
    this.tail = lines.pop() ?? "";
    const now = performance.now();
    for (const line of lines) {
      if (line.startsWith("PING ")) this.send(`PONG ${line.slice(5)}`);
      else if (this.onLine) this.onLine(line, now);
    }
  }
}
