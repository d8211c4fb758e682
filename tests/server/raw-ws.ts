/**
 * A bare WebSocket client over node:net, for tests that need what a browser socket cannot do: stop
 * reading (pause) so the server's queue grows, choose the local address, and see the raw close frame.
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";

/**
 * The kernel's state of the server's end of a loopback connection (IPv4, or IPv4 mapped into IPv6),
 * as /proc/net/tcp{,6} give it: "01" ESTABLISHED while the server process still holds the socket;
 * "04" (FIN_WAIT1) and later states once it closed it, even while a client that reads nothing keeps
 * its own end open; null once the kernel forgot it. Linux only.
 */
export function serverSideTcpState(serverPort: number, clientPort: number): string | null {
  const hex = (p: number) => p.toString(16).toUpperCase().padStart(4, "0");
  const v4 = (p: number) => `0100007F:${hex(p)}`;
  const v6 = (p: number) => `0000000000000000FFFF00000100007F:${hex(p)}`;
  for (const [file, addr] of [
    ["/proc/net/tcp", v4],
    ["/proc/net/tcp6", v6],
  ] as const) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      const f = line.trim().split(/\s+/);
      if (f[1] === addr(serverPort) && f[2] === addr(clientPort)) return f[3] ?? null;
    }
  }
  return null;
}

export interface RawFrame {
  opcode: number;
  payload: Buffer;
}

export class RawWs {
  readonly frames: RawFrame[] = [];
  /** The code of the close frame the server sent, if one arrived. */
  closeCode: number | null = null;
  /** True once the TCP connection is gone (end, reset or close). */
  ended = false;
  private buf = Buffer.alloc(0);
  private upgraded = false;
  private listeners: (() => void)[] = [];

  private constructor(readonly sock: Socket) {
    sock.on("data", (d: Buffer) => this.onData(d));
    const gone = () => {
      this.ended = true;
      this.notify();
    };
    sock.on("close", gone);
    sock.on("end", gone);
    sock.on("error", gone);
  }

  /** Connects (optionally from `localAddress`) and completes the upgrade; rejects on a non-101. */
  static open(wsUrl: string, localAddress?: string): Promise<RawWs> {
    const u = new URL(wsUrl);
    return new Promise((resolve, reject) => {
      const sock = connect({ host: u.hostname, port: Number(u.port), localAddress }, () => {
        const key = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
        sock.write(
          `GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
      const ws = new RawWs(sock);
      sock.once("error", reject);
      ws.until(() => ws.upgraded || ws.ended, 5000).then(
        () => (ws.upgraded ? resolve(ws) : reject(new Error("upgrade refused"))),
        reject,
      );
    });
  }

  private notify() {
    for (const l of this.listeners) l();
  }

  private onData(d: Buffer) {
    this.buf = Buffer.concat([this.buf, d]);
    if (!this.upgraded) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = this.buf.subarray(0, end).toString();
      if (!head.startsWith("HTTP/1.1 101")) {
        this.sock.destroy();
        return;
      }
      this.upgraded = true;
      this.buf = this.buf.subarray(end + 4);
    }
    for (;;) {
      if (this.buf.length < 2) break;
      const b0 = this.buf[0] as number;
      let len = (this.buf[1] as number) & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) break;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) break;
        len = Number(this.buf.readBigUInt64BE(2));
        off = 10;
      }
      if (this.buf.length < off + len) break;
      const payload = this.buf.subarray(off, off + len);
      this.buf = this.buf.subarray(off + len);
      const opcode = b0 & 0x0f;
      if (opcode === 8) this.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      this.frames.push({ opcode, payload: Buffer.from(payload) });
    }
    this.notify();
  }

  /** Sends one masked text frame. */
  send(text: string): void {
    const payload = Buffer.from(text);
    const mask = Buffer.from(crypto.getRandomValues(new Uint8Array(4)));
    const len = payload.length;
    const head =
      len < 126
        ? Buffer.from([0x81, 0x80 | len])
        : Buffer.from([0x81, 0x80 | 126, (len >> 8) & 0xff, len & 0xff]);
    const masked = Buffer.alloc(len);
    for (let i = 0; i < len; i++) masked[i] = (payload[i] as number) ^ (mask[i % 4] as number);
    this.sock.write(Buffer.concat([head, mask, masked]));
  }

  /** Text frames parsed as JSON. */
  json(): { type: string; id?: string; data?: Record<string, unknown> }[] {
    return this.frames.filter((f) => f.opcode === 1).map((f) => JSON.parse(f.payload.toString()));
  }

  until(pred: () => boolean, timeoutMs = 5000): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((l) => l !== check);
        reject(new Error("timed out"));
      }, timeoutMs);
      const check = () => {
        if (!pred()) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== check);
        resolve();
      };
      this.listeners.push(check);
    });
  }

  pause(): void {
    this.sock.pause();
  }

  resume(): void {
    this.sock.resume();
  }

  destroy(): void {
    this.sock.destroy();
  }
}
