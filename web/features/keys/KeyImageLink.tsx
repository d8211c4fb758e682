import { useRouter } from "@tanstack/react-router";

/**
 * The board menu's way to /sync/qr (export the private key as a picture). A client-side navigation
 * inside the messaging router; a plain link where there is no router (component tests, no JS yet).
 */
export function KeyImageLink() {
  const router = useRouter({ warn: false }) as ReturnType<typeof useRouter> | undefined;
  return (
    <a
      href="/sync/qr"
      className="sb-key-image"
      title="Export your private key as a Shadow Cipher picture"
      onClick={(e) => {
        if (!router || e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        void router.navigate({ to: "/sync/qr" });
      }}
    >
      ▦ key image
    </a>
  );
}
