import { hydrateRoot } from "react-dom/client";
import { SphereIsland, type SphereProps } from "../features/community/SphereIsland.tsx";
import { Islands, islandProps } from "../islands.ts";

const el = document.getElementById(Islands.community);
if (el) hydrateRoot(el, <SphereIsland {...islandProps<SphereProps>("community")} />);
