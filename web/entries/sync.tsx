import { createBrowserHistory } from "@tanstack/react-router";
import { hydrateRoot } from "react-dom/client";
import type { Weather } from "../../core/protocol/runtime.ts";
import { SyncIsland } from "../features/chat/SyncIsland.tsx";
import { createSyncRouter } from "../features/chat/sync-router.tsx";
import { WeatherWidget } from "../features/weather/WeatherWidget.tsx";
import { Islands, islandProps } from "../islands.ts";

async function main() {
  const weather = document.getElementById(Islands.weather);
  if (weather)
    hydrateRoot(
      weather,
      <WeatherWidget initial={islandProps<{ weather: Weather | null }>("weather").weather} />,
    );
  const el = document.getElementById(Islands.sync);
  if (el) {
    const router = createSyncRouter(createBrowserHistory());
    // Load the route's chunk while hydrating the loading state the server sent.
    const loaded = router.load();
    hydrateRoot(el, <SyncIsland router={router} />);
    await loaded;
  }
}

void main();
