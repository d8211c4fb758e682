import { hydrateRoot } from "react-dom/client";
import { LANDING_ISLAND_ID, PROVIDER_FALLBACK } from "../features/landing/constants.ts";
import { LandingIsland } from "../features/landing/Landing.tsx";

const el = document.getElementById(LANDING_ISLAND_ID);
if (el) hydrateRoot(el, <LandingIsland provider={el.dataset.provider ?? PROVIDER_FALLBACK} />);
