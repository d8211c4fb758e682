import type { Socket, TCPSocketListener } from "bun";

/**
 * A TCP proxy on loopback in front of a test server, whose connections the test can cut: `cut()`
 * closes every open connection and closes new ones at once (a lost network) until `restore()`. It
 * counts HTTP request lines going up (`requests("PUT /api/blobs/")`) so a test can wait for
 * conditions (so many chunks sent, so many refused attempts) instead of times.
 */
export interface CutProxy {
  url: string;
  cut(): void;
  restore(): void;
  /** Connections closed at once while cut. */
  readonly refused: number;
  /** Request lines seen going up that start with `prefix`. */
  requests(prefix: string): number;
  /** Resolves once `pred()` holds (checked on every byte going up and every refused connection). */
  until(pred: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  stop(): void;
}

interface Pair {
  client: Socket<Pair>;
  upstream: Socket<{ peer: Socket<Pair> }> | null;
  pending: Uint8Array[];
}

export async function startCutProxy(target: string): Promise<CutProxy> {
  const t = new URL(target);
  const open = new Set<Pair>();
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let isCut = false;
  let refused = 0;
  const poke = () => {
    for (const w of waiters) w();
  };
  const decoder = new TextDecoder("latin1");
  const listener: TCPSocketListener<Pair> = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      async open(client) {
        if (isCut) {
          refused++;
          client.end();
          poke();
          return;
        }
        const pair: Pair = { client, upstream: null, pending: [] };
        client.data = pair;
        open.add(pair);
        pair.upstream = await Bun.connect<{ peer: Socket<Pair> }>({
          hostname: t.hostname,
          port: Number(t.port),
          data: { peer: client },
          socket: {
            data(up, bytes) {
              up.data.peer.write(bytes);
            },
            close(up) {
              up.data.peer.end();
            },
            error(up) {
              up.data.peer.end();
            },
          },
        });
        for (const p of pair.pending) pair.upstream.write(p);
        pair.pending = [];
      },
      data(client, bytes) {
        const pair = client.data;
        if (!pair || isCut) return;
        // Request lines: "METHOD /path HTTP/1.1" at the start of a line (bodies are ciphertext).
        for (const m of decoder.decode(bytes).matchAll(/(?:^|\r\n)([A-Z]+ \/[^\s]* HTTP\/1\.1)/g))
          if (m[1]) lines.push(m[1]);
        if (pair.upstream) pair.upstream.write(bytes);
        else pair.pending.push(new Uint8Array(bytes));
        poke();
      },
      close(client) {
        const pair = client.data;
        if (!pair) return;
        open.delete(pair);
        pair.upstream?.end();
      },
      error(client) {
        client.data?.upstream?.end();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${listener.port}`,
    cut() {
      isCut = true;
      for (const p of open) {
        p.client.end();
        p.upstream?.end();
      }
      open.clear();
    },
    restore() {
      isCut = false;
    },
    get refused() {
      return refused;
    },
    requests: (prefix) => lines.filter((l) => l.startsWith(prefix)).length,
    until(pred, what, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        if (pred()) return resolve();
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}`));
        }, timeoutMs);
        const check = () => {
          if (!pred()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    stop() {
      for (const p of open) {
        p.client.end();
        p.upstream?.end();
      }
      listener.stop(true);
    },
  };
}
