import { type ComponentProps, lazy, Suspense } from "react";
import { Spinner } from "../../components/Spinner.tsx";

/**
 * The key modals load when they are needed (after login or registration decides), not with the
 * page: they carry the Shadow Cipher codec and clipboard/download code.
 */
const LazyValidation = lazy(() =>
  import("./PrivateKeyValidationModal.tsx").then((m) => ({ default: m.PrivateKeyValidationModal })),
);
const LazyLost = lazy(() => import("./KeysLostModal.tsx").then((m) => ({ default: m.KeysLostModal })));
const LazyKeys = lazy(() => import("./KeysModal.tsx").then((m) => ({ default: m.KeysModal })));
const LazyLogout = lazy(() => import("./LogoutDialog.tsx").then((m) => ({ default: m.LogoutDialog })));

export function PrivateKeyValidationModal() {
  return (
    <Suspense fallback={<Spinner label="Loading" />}>
      <LazyValidation />
    </Suspense>
  );
}

export function KeysLostModal() {
  return (
    <Suspense fallback={<Spinner label="Loading" />}>
      <LazyLost />
    </Suspense>
  );
}

export function KeysModal(props: ComponentProps<typeof LazyKeys>) {
  return (
    <Suspense fallback={<Spinner label="Generating..." />}>
      <LazyKeys {...props} />
    </Suspense>
  );
}

/** The logout confirmation (LogoutDialog); nothing shows while its code loads. */
export function LogoutDialog(props: ComponentProps<typeof LazyLogout>) {
  return (
    <Suspense fallback={null}>
      <LazyLogout {...props} />
    </Suspense>
  );
}
