import { Component, type ComponentType, type ReactNode, useEffect, useState } from "react";

/**
 * A part of the page whose code loads when it is first shown, and that recovers.
 *
 * `React.lazy` keeps a failed import for good: a dialog opened while the server was down stays
 * broken (and, thrown to the router, replaced the whole board with "Something went wrong!") until a
 * reload. Here a failed load is tried again after a moment, and when it still fails the part shows a
 * small error in its own place with a retry button; the next time the part is shown, when the browser
 * comes back online, or on retry, the import runs again. An error thrown while the part renders is
 * caught at the part too (`PartBoundary`), so one broken view never takes the page with it.
 */

const RETRY_DELAYS_MS = [300, 1000];

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
    const [failed, setFailed] = useState(false);
    const [attempt, setAttempt] = useState(0);
    // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` is the retry trigger.
    useEffect(() => {
      if (C) return;
      let live = true;
      setFailed(false);
      get().then(
        (c) => {
          if (live) setC(() => c);
        },
        () => {
          if (live) setFailed(true);
        },
      );
      return () => {
        live = false;
      };
    }, [C, attempt]);
    useEffect(() => {
      if (!failed) return;
      const again = () => setAttempt((a) => a + 1);
      window.addEventListener("online", again);
      return () => window.removeEventListener("online", again);
    }, [failed]);
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
