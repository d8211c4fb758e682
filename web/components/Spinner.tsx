/** The loading indicator used while auth or data loads (spec §2.1, §2.3). */
export function Spinner({ label = "Loading" }: { label?: string }) {
  return (
    <div className="spinner" role="status" aria-live="polite">
      <span className="spinner-dot" aria-hidden="true" />
      <span className="spinner-label">{label}</span>
    </div>
  );
}
