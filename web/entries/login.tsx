import { hydrateRoot } from "react-dom/client";
import { Islands } from "../islands.ts";
import { LoginIsland } from "../pages.tsx";

const el = document.getElementById(Islands.login);
if (el) hydrateRoot(el, <LoginIsland />);
