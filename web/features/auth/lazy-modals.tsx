import { lazyPart } from "../../components/lazy-part.tsx";
import { Spinner } from "../../components/Spinner.tsx";

/**
 * The key modals load when they are needed (after login or registration decides), not with the
 * page: they carry the Shadow Cipher codec and clipboard/download code. A failed load shows a retry
 * in place (web/components/lazy-part.tsx).
 */
export const PrivateKeyValidationModal = lazyPart(
  () => import("./PrivateKeyValidationModal.tsx").then((m) => m.PrivateKeyValidationModal),
  "the key check",
  <Spinner label="Loading" />,
);

export const KeysLostModal = lazyPart(
  () => import("./KeysLostModal.tsx").then((m) => m.KeysLostModal),
  "the key recovery",
  <Spinner label="Loading" />,
);

export const KeysModal = lazyPart(
  () => import("./KeysModal.tsx").then((m) => m.KeysModal),
  "your keys",
  <Spinner label="Generating..." />,
);

/** The logout confirmation (LogoutDialog); nothing shows while its code loads. */
export const LogoutDialog = lazyPart(
  () => import("./LogoutDialog.tsx").then((m) => m.LogoutDialog),
  "the logout dialog",
);
