import { useEffect, useState } from "react";
import type { Weather } from "../../../core/protocol/runtime.ts";
import { hhmm, WEATHER_URL } from "./WeatherWidget.tsx";

export type WeatherLoad =
  | { state: "loading" }
  | { state: "unavailable" }
  | { state: "ready"; weather: Weather };

/** Reads `GET /api/board/weather` once on mount (the community layout has no server-rendered weather). */
export function useWeather(): WeatherLoad {
  const [load, setLoad] = useState<WeatherLoad>({ state: "loading" });
  useEffect(() => {
    let live = true;
    fetch(WEATHER_URL, { headers: { accept: "application/json" } })
      .then(async (r) => {
        if (!r.ok) throw new Error(`weather ${r.status}`);
        return ((await r.json()) as { data: Weather }).data;
      })
      .then((weather) => live && setLoad({ state: "ready", weather }))
      .catch(() => live && setLoad({ state: "unavailable" }));
    return () => {
      live = false;
    };
  }, []);
  return load;
}

/**
 * The weather header of the community layout (spec §2.1): description, °C, humidity, sunrise and
 * sunset, with a loading state and an unavailable state (no answer, or a source that gave no
 * conditions; sunrise and sunset are computed by the server and still show then).
 */
export function WeatherHeader({ load }: { load: WeatherLoad }) {
  if (load.state === "loading")
    return (
      <span className="weather weather-loading" data-weather="loading">
        weather: loading…
      </span>
    );
  if (load.state === "unavailable")
    return (
      <span className="weather weather-unavailable" data-weather="unavailable">
        weather unavailable
      </span>
    );
  const w = load.weather;
  const conditions = w.description !== null || w.temperature !== null || w.humidity !== null;
  return (
    <span className="weather" data-weather={conditions ? "ready" : "unavailable"}>
      {conditions ? (
        <>
          <span className="w-desc">{w.description ?? "—"}</span>
          <span className="w-temp">{w.temperature !== null ? `${Math.round(w.temperature)}°C` : "--°C"}</span>
          <span className="w-hum">{w.humidity !== null ? `${Math.round(w.humidity)}%` : "--%"}</span>
        </>
      ) : (
        <span className="w-desc">weather unavailable</span>
      )}
      <span className="w-sun">
        ☀ {hhmm(w.sunrise, true)} ↓ {hhmm(w.sunset, true)}
      </span>
    </span>
  );
}
