import {
  type CSSProperties,
  type KeyboardEvent,
  type MouseEvent,
  type ReactNode,
  useEffect,
  useRef,
  useState,
  useSyncExternalStore,
} from "react";
import { LANDING, LANDING_ISLAND_ID, LANDING_TEXT } from "./constants.ts";
import { INITIAL_SNAPSHOT, LandingMachine } from "./machine.ts";
import { LandingRenderer } from "./renderer.ts";
import { useScramble } from "./scramble.ts";

/** The layout wrapper called launch (spec §2.2): it only centres its content. */
export function Launch({ children }: { children: ReactNode }) {
  return <div className="launch">{children}</div>;
}

export type WebglStatus = "pending" | "on" | "off";

export interface LandingProps {
  /** The provider's name in the POWERED BY footer. */
  provider: string;
  /** Tests pass their own machine (with a fake clock). */
  machine?: LandingMachine;
  /** Overrides the prefers-reduced-motion media query (tests). */
  reducedMotion?: boolean;
  /** Tests without a canvas implementation skip WebGL (the status reads "off"). */
  webgl?: boolean;
}

const REDUCED_MOTION = "(prefers-reduced-motion: reduce)";
const isMobileWidth = () => window.innerWidth < LANDING.mobileBreakpointPx;

/**
 * The landing page (spec §2.2, §4.7): a full-screen WebGL2 animation; before entry the logo bar and
 * ENTER (TAP TO ENTER on mobile); one click runs the entry, then the two choices slide in; later
 * clicks on the canvas cycle the colour modes. The canvas carries data-state, data-mode,
 * data-transform, data-glitch and data-webgl for tests.
 */
export function LandingIsland({ provider, machine: given, reducedMotion, webgl = true }: LandingProps) {
  const [machine] = useState(() => given ?? new LandingMachine());
  const snap = useSyncExternalStore(machine.subscribe, machine.getSnapshot, () => INITIAL_SNAPSHOT);
  const canvas = useRef<HTMLCanvasElement>(null);
  const firstChoice = useRef<HTMLAnchorElement>(null);
  const keyboardEntry = useRef(false);
  const [gl, setGl] = useState<WebglStatus>("pending");
  const [mobile, setMobile] = useState(false);

  useEffect(() => {
    machine.start();
    return () => machine.dispose();
  }, [machine]);

  // Reduced motion: the prop when given, else the media query (followed while the page is open).
  useEffect(() => {
    if (reducedMotion !== undefined) {
      machine.setReducedMotion(reducedMotion);
      return;
    }
    const mq = typeof window.matchMedia === "function" ? window.matchMedia(REDUCED_MOTION) : null;
    if (!mq) return;
    const apply = () => machine.setReducedMotion(mq.matches);
    apply();
    mq.addEventListener?.("change", apply);
    return () => mq.removeEventListener?.("change", apply);
  }, [machine, reducedMotion]);

  useEffect(() => {
    const apply = () => setMobile(isMobileWidth());
    apply();
    window.addEventListener("resize", apply);
    return () => window.removeEventListener("resize", apply);
  }, []);

  useEffect(() => {
    const el = canvas.current;
    if (!webgl || !el) {
      setGl("off");
      return;
    }
    const renderer = new LandingRenderer(el, machine.getSnapshot);
    if (!renderer.init()) {
      setGl("off");
      return;
    }
    setGl("on");
    renderer.syncLoop();
    const unsubscribe = machine.subscribe(() => renderer.syncLoop());
    const onResize = () => renderer.syncLoop();
    window.addEventListener("resize", onResize);
    return () => {
      unsubscribe();
      window.removeEventListener("resize", onResize);
      renderer.dispose();
    };
  }, [machine, webgl]);

  // Entered with the keyboard: the ENTER button is gone, so focus moves to the first choice.
  useEffect(() => {
    if (snap.phase === "active" && keyboardEntry.current) {
      keyboardEntry.current = false;
      firstChoice.current?.focus();
    }
  }, [snap.phase]);

  const onClick = (e: MouseEvent<HTMLDivElement>) => {
    // Following a choice is navigation, not a mode change.
    if ((e.target as Element).closest("a")) return;
    machine.click();
  };
  const onCanvasKey = (e: KeyboardEvent<HTMLCanvasElement>) => {
    if (snap.phase !== "active" || (e.key !== "Enter" && e.key !== " ")) return;
    e.preventDefault();
    machine.click();
  };

  const active = snap.phase === "active";
  const style = { "--entry": snap.entry } as CSSProperties;
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents lint/a11y/noStaticElementInteractions: the canvas and ENTER button are the keyboard paths.
    <div
      className="landing"
      data-phase={snap.phase}
      data-layout={mobile ? "mobile" : "desktop"}
      style={style}
      onClick={onClick}
    >
      <canvas
        ref={canvas}
        className="landing-canvas"
        data-state={snap.phase}
        data-mode={snap.mode}
        data-transform={snap.transform}
        data-glitch={snap.glitch ? "on" : "off"}
        data-webgl={gl}
        data-reduced-motion={snap.reducedMotion ? "on" : "off"}
        tabIndex={active ? 0 : -1}
        role={active ? "button" : undefined}
        aria-label={active ? LANDING_TEXT.cycleLabel : undefined}
        aria-hidden={active ? undefined : true}
        onKeyDown={onCanvasKey}
      />
      <Launch>
        <LogoBar glitch={snap.brandGlitch} seed={snap.brandSeed} still={snap.reducedMotion} />
        {active ? (
          <nav className="landing-choices" aria-label="Choose an area">
            <Choice
              side="left"
              linkRef={firstChoice}
              href={LANDING_TEXT.messagingHref}
              index="01"
              title={LANDING_TEXT.messagingTitle}
              subtitle={LANDING_TEXT.messagingSubtitle}
              mobile={mobile}
              still={snap.reducedMotion}
            />
            <Choice
              side="right"
              href={LANDING_TEXT.communityHref}
              index="02"
              title={LANDING_TEXT.communityTitle}
              subtitle={LANDING_TEXT.communitySubtitle}
              mobile={mobile}
              still={snap.reducedMotion}
            />
          </nav>
        ) : (
          <button
            type="button"
            className="landing-enter"
            disabled={snap.phase === "entering"}
            // A click with no pointer (detail 0) came from the keyboard.
            onClick={(e) => {
              keyboardEntry.current = e.detail === 0;
            }}
          >
            <span className="enter-desktop">{LANDING_TEXT.enter}</span>
            <span className="enter-mobile">{LANDING_TEXT.tapToEnter}</span>
          </button>
        )}
      </Launch>
      <PoweredBy provider={provider} still={snap.reducedMotion} />
    </div>
  );
}

function LogoBar({ glitch, seed, still }: { glitch: boolean; seed: number; still: boolean }) {
  const [subtitle] = useScramble(LANDING_TEXT.brandSubtitle, {
    letterMs: LANDING.scrambleSubtitleLetterMs,
    disabled: still,
    autoStart: true,
  });
  return (
    <header className="landing-logo-bar">
      <span className="landing-logo-mark" aria-hidden="true">
        {">_"}
      </span>
      <h1
        className={glitch ? "landing-brand glitching" : "landing-brand"}
        data-text={LANDING_TEXT.brand}
        data-variant={seed % 3}
      >
        {LANDING_TEXT.brand}
      </h1>
      <p className="landing-brand-sub">
        <span className="visually-hidden">{LANDING_TEXT.brandSubtitle}</span>
        <span aria-hidden="true">{subtitle}</span>
      </p>
    </header>
  );
}

interface ChoiceProps {
  side: "left" | "right";
  href: string;
  index: string;
  title: string;
  subtitle: string;
  mobile: boolean;
  still: boolean;
  linkRef?: React.Ref<HTMLAnchorElement>;
}

function Choice({ side, href, index, title, subtitle, mobile, still, linkRef }: ChoiceProps) {
  const [shownTitle, runTitle] = useScramble(title, { disabled: still });
  const [shownSub, runSub] = useScramble(subtitle, {
    letterMs: LANDING.scrambleSubtitleLetterMs,
    disabled: still,
    autoStart: true,
  });
  // The scramble is a desktop hover effect (and follows keyboard focus); touch screens skip it.
  const hover = () => {
    if (mobile) return;
    runTitle();
    runSub();
  };
  return (
    <a
      ref={linkRef}
      className={`landing-choice landing-choice-${side}`}
      href={href}
      onMouseEnter={hover}
      onFocus={hover}
    >
      <span className="visually-hidden">{`${title}: ${subtitle}`}</span>
      <span className="choice-index" aria-hidden="true">
        [{index}]
      </span>
      <span className="choice-title" aria-hidden="true">
        {shownTitle}
      </span>
      <span className="choice-sub" aria-hidden="true">
        {shownSub}
      </span>
      <span className="choice-go" aria-hidden="true">
        {side === "left" ? "<< CONNECT" : "CONNECT >>"}
      </span>
    </a>
  );
}

function PoweredBy({ provider, still }: { provider: string; still: boolean }) {
  const [shown, run] = useScramble(provider.toUpperCase(), { disabled: still });
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: the hover scramble is decoration only.
    <footer className="landing-footer" onMouseEnter={run}>
      <span className="powered-by">{LANDING_TEXT.poweredBy}</span>{" "}
      <span className="visually-hidden">{provider.toUpperCase()}</span>
      <span className="powered-name" aria-hidden="true">
        {shown}
      </span>
    </footer>
  );
}

/** The island root as the server renders it: the real preview, no spinner. */
export function LandingPage({ provider }: { provider: string }) {
  return (
    <div id={LANDING_ISLAND_ID} data-provider={provider}>
      <LandingIsland provider={provider} />
    </div>
  );
}
