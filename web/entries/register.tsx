import { hydrateRoot } from "react-dom/client";
import { Islands, islandProps } from "../islands.ts";
import { RegisterIsland } from "../pages.tsx";

const el = document.getElementById(Islands.register);
if (el) hydrateRoot(el, <RegisterIsland {...islandProps<{ suffix: string }>("register")} />);
