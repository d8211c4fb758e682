import type { Socket, TCPSocketListener } from "bun";

/**
 * A TCP load balancer for the scale-out tests, as any round-robin balancer without sticky sessions:
 * each new connection goes to the next backend in turn, and to the one after it when that one refuses
 * (a process that died). HTTP requests and WebSocket upgrades pass through untouched.
 */
export interface Balancer {
  readonly url: string;
  readonly wsUrl: string;
  /** How many connections went to each backend. */
  readonly counts: number[];
  stop(): void;
}

interface Pair {
  upstream: Socket<unknown> | null;
  pending: Uint8Array[];
  closed: boolean;
}

/**
 * `round-robin`: each new connection to the next backend. `failover`: always the first backend that
 * accepts (a balancer with health checks and a preferred backend), so a test knows where a client is.
 */
export function balancer(backends: string[], mode: "round-robin" | "failover" = "round-robin"): Balancer {
  const ports = backends.map((b) => Number(new URL(b).port));
  const counts = ports.map(() => 0);
  const open = new Set<Socket<unknown>>();
  let next = 0;

  const connect = (client: Socket<Pair>, tries: number) => {
    if (tries >= ports.length || client.data.closed) {
      client.end();
      return;
    }
    const i = mode === "failover" ? tries : next++ % ports.length;
    Bun.connect({
      hostname: "127.0.0.1",
      port: ports[i] as number,
      socket: {
        open(up) {
          if (client.data.closed) {
            up.end();
            return;
          }
          counts[i] = (counts[i] ?? 0) + 1;
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
    }).catch(() => connect(client, tries + 1));
  };

  const listener: TCPSocketListener<Pair> = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        open.add(client);
        client.data = { upstream: null, pending: [], closed: false };
        connect(client, 0);
      },
      data(client, chunk) {
        if (client.data.upstream) client.data.upstream.write(chunk);
        else client.data.pending.push(new Uint8Array(chunk));
      },
      close(client) {
        client.data.closed = true;
        open.delete(client);
        client.data.upstream?.end();
      },
      error() {},
    },
  });
  return {
    url: `http://127.0.0.1:${listener.port}`,
    wsUrl: `ws://127.0.0.1:${listener.port}/api/ws`,
    counts,
    stop() {
      listener.stop(true);
      for (const s of open) s.terminate();
      open.clear();
    },
  };
}
