import { useEffect, useState } from "react";
import { Spinner } from "../../components/Spinner.tsx";
import { hasStoredAuth } from "../../state/browser-store.ts";
import { useWeather, WeatherHeader } from "../weather/WeatherHeader.tsx";
import { Forest } from "./Forest.tsx";
import { NodeView } from "./NodeView.tsx";

export type SphereProps =
  | { view: "forest"; sphereHash: string }
  | { view: "node"; sphereHash: string; nodeHash: string };

/**
 * The guarded weather-header layout of `/{sphereHash}` and `/{sphereHash}/{nodeHash}` (spec §2.1):
 * the server renders the header (weather loading) and the spinner; once the browser has read the
 * stored credentials it shows the page, or goes to /login (replacing history) when there are none.
 */
export function SphereIsland(props: SphereProps) {
  const [signedIn, setSignedIn] = useState(false);
  const weather = useWeather();
  useEffect(() => {
    if (hasStoredAuth()) setSignedIn(true);
    else window.location.replace("/login");
  }, []);
  return (
    <div className="sphere-layout">
      <header className="top-bar sphere-bar">
        <a className="brand-small" href="/community">
          wsync · community
        </a>
        <WeatherHeader load={weather} />
      </header>
      <main className="sphere-main">
        {!signedIn ? (
          <Spinner label="Loading" />
        ) : props.view === "forest" ? (
          <Forest sphereHash={props.sphereHash} />
        ) : (
          <NodeView />
        )}
      </main>
    </div>
  );
}
