import { useEffect, useState } from "react";
import { API_BASE, RouteMeta, type Weather } from "../../../core/protocol/runtime.ts";

/** `GET /api/board/weather`, from the protocol's route table. */
export const WEATHER_URL = API_BASE + RouteMeta.weather.path;

/** HH:MM in UTC on the server and in the first browser render (so they match), local after. */
export function hhmm(iso: string | null, local: boolean): string {
  if (!iso) return "--:--";
  const d = new Date(iso);
  const h = local ? d.getHours() : d.getUTCHours();
  const m = local ? d.getMinutes() : d.getUTCMinutes();
  return `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}${local ? "" : " UTC"}`;
}

/**
 * The header weather widget (spec §1, §3): an island of its own. The server renders it with the
 * cached weather; the browser refreshes it every 10 minutes (the server's cache period).
 */
export function WeatherWidget({ initial }: { initial: Weather | null }) {
  const [w, setW] = useState<Weather | null>(initial);
  const [local, setLocal] = useState(false);
  useEffect(() => setLocal(true), []);
  useEffect(() => {
    const timer = setInterval(
      () => {
        fetch(WEATHER_URL)
          .then((r) => r.json() as Promise<{ data: Weather }>)
          .then((r) => setW(r.data))
          .catch(() => undefined);
      },
      10 * 60 * 1000,
    );
    return () => clearInterval(timer);
  }, []);
  if (!w) return <span className="weather">--</span>;
  return (
    <span className="weather" title={w.description ?? "weather unavailable"}>
      {w.temperature !== null ? `${Math.round(w.temperature)}°C` : "--°C"}
      {w.humidity !== null ? ` · ${Math.round(w.humidity)}%` : ""}
      {w.description ? ` · ${w.description}` : ""} · ☀ {hhmm(w.sunrise, local)} ↓ {hhmm(w.sunset, local)}
    </span>
  );
}
