import type { Socket, TCPSocketListener } from "bun";

/**
 * A TCP relay in front of a test server, for outages as a browser sees them: `down()` closes every
 * open connection and stops listening (new connections are refused, as with a stopped server);
 * `up()` listens on the same port again. The server itself, and its data, are untouched.
 */
export interface Outage {
  readonly url: string;
  down(): void;
  up(): void;
}

interface Pair {
  upstream: Socket<Pair> | null;
  pending: Uint8Array[];
}

export async function relay(target: string): Promise<Outage> {
  const to = new URL(target);
  const open = new Set<Socket<unknown>>();
  let listener: TCPSocketListener<Pair> | null = null;
  let port = 0;

  const listen = () => {
    listener = Bun.listen<Pair>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          open.add(client);
          client.data = { upstream: null, pending: [] };
          void Bun.connect<Pair>({
            hostname: to.hostname,
            port: Number(to.port),
            socket: {
              open(up) {
                open.add(up);
                client.data.upstream = up;
                for (const chunk of client.data.pending) up.write(chunk);
                client.data.pending = [];
              },
              data(_up, chunk) {
                client.write(chunk);
              },
              close(up) {
                open.delete(up);
                client.end();
              },
              error() {
                client.end();
              },
            },
          }).catch(() => client.end());
        },
        data(client, chunk) {
          if (client.data.upstream) client.data.upstream.write(chunk);
          else client.data.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          open.delete(client);
          client.data.upstream?.end();
        },
        error() {},
      },
    });
    port = listener.port;
  };
  listen();
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    down() {
      listener?.stop(true);
      listener = null;
      for (const s of open) s.terminate();
      open.clear();
    },
    up() {
      if (!listener) listen();
    },
  };
}
