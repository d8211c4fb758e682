import { Component, type ComponentType, type ReactNode, useEffect, useState } from "react";

/**
 * A part of the page whose code loads when it is first shown, and that recovers.
 *
 * `React.lazy` keeps a failed import for good: a dialog opened while the server was down stays
 * broken (and, thrown to the router, replaced the whole board with "Something went wrong!") until a
 * reload. Here a failed load is tried again after a moment, and when it still fails the part shows a
 * small error in its own place with a retry button; the import runs again by itself (backoff from 2 s
 * to 30 s), at once when the browser comes back online or the board's socket reconnects, on retry,
 * and the next time the part is shown. An error thrown while the part renders is
 * caught at the part too (`PartBoundary`), so one broken view never takes the page with it.
 */

const RETRY_DELAYS_MS = [300, 1000];
/** After that, a failed part tries again by itself: 2 s, doubling, at most every 30 s. */
const BACKOFF_FIRST_MS = 2000;
const BACKOFF_MAX_MS = 30_000;

export function partBackoff(failures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, failures - 1));
}

/** Parts showing their error now, each with its retry (see retryFailedParts). */
const failedParts = new Set<() => void>();

/**
 * The server is reachable again (the socket reconnected): every part that failed to load tries at
 * once rather than at its next backoff step. The board calls this; a part never needs a reload.
 */
export function retryFailedParts(): void {
  for (const retry of [...failedParts]) retry();
}

/** The in-place error of a part that could not load or render. */
export function PartError({ label, onRetry }: { label: string; onRetry: () => void }) {
  return (
    <div className="part-error" role="alert">
      <span>Could not load {label}. Check the connection.</span>
      <button type="button" onClick={onRetry}>
        RETRY
      </button>
    </div>
  );
}

interface BoundaryProps {
  label: string;
  children: ReactNode;
}

/** Catches what a part throws while rendering and shows PartError in its place; retry renders it again. */
export class PartBoundary extends Component<BoundaryProps, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override componentDidCatch(error: unknown): void {
    console.error(`[wsync] ${this.props.label} failed`, error);
  }

  override render(): ReactNode {
    if (this.state.failed)
      return <PartError label={this.props.label} onRetry={() => this.setState({ failed: false })} />;
    return this.props.children;
  }
}

async function withRetries<T>(load: () => Promise<T>): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await load();
    } catch (e) {
      const delay = RETRY_DELAYS_MS[n];
      if (delay === undefined) throw e;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/**
 * A component that loads `load` on first render. `fallback` shows while it loads (null: nothing);
 * `label` names it in the error ("Could not load the network overview.").
 */
export function lazyPart<P extends object>(
  load: () => Promise<ComponentType<P>>,
  label: string,
  fallback: ReactNode = null,
): ((props: P) => ReactNode) & { preload: () => Promise<void> } {
  let loaded: ComponentType<P> | null = null;
  let loading: Promise<ComponentType<P>> | null = null;
  const get = () => {
    loading ??= withRetries(load).then(
      (c) => {
        loaded = c;
        return c;
      },
      (e) => {
        // Forget the failure: the next show (or retry) imports again.
        loading = null;
        throw e;
      },
    );
    return loading;
  };

  function Part(props: P) {
    const [C, setC] = useState<ComponentType<P> | null>(() => loaded);
    /** How many loads failed in a row (0: none yet); the error shows while a retry runs. */
    const [failures, setFailures] = useState(0);
    const [attempt, setAttempt] = useState(0);
    // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` is the retry trigger.
    useEffect(() => {
      if (C) return;
      let live = true;
      get().then(
        (c) => {
          if (live) setC(() => c);
        },
        () => {
          if (live) setFailures((n) => n + 1);
        },
      );
      return () => {
        live = false;
      };
    }, [C, attempt]);
    const failed = failures > 0;
    // A failed part does not wait for a click: it tries again with backoff, and at once when the
    // browser comes back online or the board's socket reconnects (retryFailedParts).
    useEffect(() => {
      if (failures === 0) return;
      let done = false;
      const again = () => {
        if (done) return;
        done = true;
        setAttempt((a) => a + 1);
      };
      const timer = setTimeout(again, partBackoff(failures));
      window.addEventListener("online", again);
      failedParts.add(again);
      return () => {
        clearTimeout(timer);
        window.removeEventListener("online", again);
        failedParts.delete(again);
      };
    }, [failures]);
    if (C)
      return (
        <PartBoundary label={label}>
          <C {...props} />
        </PartBoundary>
      );
    if (failed) return <PartError label={label} onRetry={() => setAttempt((a) => a + 1)} />;
    return <>{fallback}</>;
  }
  Part.displayName = `lazyPart(${label})`;
  return Object.assign(Part, {
    preload: () =>
      get().then(
        () => undefined,
        () => undefined,
      ),
  });
}
