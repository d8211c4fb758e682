/**
 * The floor: raw Bun pub/sub. A socket joins a topic with `join <topic>` (answered `joined`) and
 * every other text it sends is published to that topic as is. No auth, no storage, no checks.
 * Usage: bun bench/peers/bun-raw-server.ts <port>
 */
const port = Number(process.argv[2]);
const server = Bun.serve<{ topic: string | null }>({
  port,
  hostname: "127.0.0.1",
  fetch(req, srv) {
    return srv.upgrade(req, { data: { topic: null } }) ? undefined : new Response("ws only", { status: 400 });
  },
  websocket: {
    perMessageDeflate: false,
    message(ws, text) {
      if (typeof text !== "string") return;
      if (text.startsWith("join ")) {
        ws.data.topic = text.slice(5);
        ws.subscribe(ws.data.topic);
        ws.send("joined");
      } else if (ws.data.topic) server.publish(ws.data.topic, text);
    },
  },
});
console.log("listening");
