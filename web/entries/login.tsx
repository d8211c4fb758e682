import { hydrateRoot } from "react-dom/client";
import type { AtprotoSignInErrorCode } from "../../core/protocol/atproto-signin.ts";
import { Islands, islandProps } from "../islands.ts";
import { LoginIsland } from "../pages.tsx";

const el = document.getElementById(Islands.login);
if (el) hydrateRoot(el, <LoginIsland {...islandProps<{ atprotoError?: AtprotoSignInErrorCode }>("login")} />);
