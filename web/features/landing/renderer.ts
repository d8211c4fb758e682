import { LANDING } from "./constants.ts";
import type { LandingSnapshot } from "./machine.ts";
import { FRAGMENT_SHADER, VERTEX_SHADER } from "./shader.ts";

/**
 * Draws the landing shader into a canvas with WebGL2 directly. The loop runs on requestAnimationFrame
 * and stops while the tab is hidden (time resumes where it stopped). With reduced motion there is no
 * loop: one still frame is drawn for each state change.
 */
export class LandingRenderer {
  private gl: WebGL2RenderingContext | null = null;
  private program: WebGLProgram | null = null;
  private u: Record<string, WebGLUniformLocation | null> = {};
  private raf = 0;
  private running = false;
  private time = 0;
  private last = 0;
  /** Average gap between animation frames (ms), and the least gap between two draws (adaptive). */
  private gapAvg = 16;
  private minGap = 0;
  private readonly onVisibility = () => this.syncLoop();

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly snapshot: () => LandingSnapshot,
    private readonly log: (message: string) => void = (m) => console.warn(m),
  ) {}

  /** Creates the context and program; false (and a log line) when WebGL2 is missing or fails. */
  init(): boolean {
    const gl = this.canvas.getContext("webgl2", {
      alpha: false,
      antialias: false,
      depth: false,
      stencil: false,
      powerPreference: "low-power",
    });
    if (!gl) {
      this.log("[landing] WebGL2 is not available: the animation is off, the choices still work");
      return false;
    }
    const program = link(gl);
    if (!program) {
      this.log("[landing] the WebGL2 shader did not compile: the animation is off");
      return false;
    }
    this.gl = gl;
    this.program = program;
    // biome-ignore lint/correctness/useHookAtTopLevel: WebGL's useProgram, not a React hook.
    gl.useProgram(program);
    for (const name of ["uRes", "uTime", "uEntry", "uTransform", "uMode", "uPrevMode", "uGlitch", "uCell"])
      this.u[name] = gl.getUniformLocation(program, name);
    // gl_VertexID draws need a bound vertex array in WebGL2.
    gl.bindVertexArray(gl.createVertexArray());
    document.addEventListener("visibilitychange", this.onVisibility);
    return true;
  }

  /** Starts or stops the loop to match visibility and the reduced-motion preference. */
  syncLoop(): void {
    if (!this.gl) return;
    const want = !document.hidden && !this.snapshot().reducedMotion;
    if (want && !this.running) {
      this.running = true;
      this.last = performance.now();
      this.raf = requestAnimationFrame(this.frame);
    } else if (!want && this.running) {
      this.running = false;
      cancelAnimationFrame(this.raf);
    }
    if (!this.running && !document.hidden) this.draw();
  }

  /** Whether the animation loop is running (tests and the benchmark read it). */
  get animating(): boolean {
    return this.running;
  }

  private readonly frame = (now: number) => {
    if (!this.running) return;
    this.raf = requestAnimationFrame(this.frame);
    const gap = Math.max(0, now - this.last);
    if (gap < this.minGap) return;
    // A device that cannot keep up draws less often (LANDING.slowFrameMs): same picture, less work.
    this.gapAvg = this.gapAvg * 0.8 + gap * 0.2;
    if (
      this.gapAvg > Math.max(LANDING.slowFrameMs, this.minGap * 1.5) &&
      this.minGap < LANDING.maxFrameGapMs
    ) {
      this.minGap = Math.min(LANDING.maxFrameGapMs, Math.max(33, this.minGap * 2));
      this.gapAvg = this.minGap;
    }
    // Clamp the step so a stalled frame does not jump the rain.
    this.time += Math.min(0.1, gap / 1000);
    this.last = now;
    this.draw();
  };

  /** Draws one frame of the current state. */
  draw(): void {
    const gl = this.gl;
    if (!gl || gl.isContextLost()) return;
    const s = this.snapshot();
    const w = Math.max(1, Math.round(this.canvas.clientWidth * LANDING.renderScale));
    const h = Math.max(1, Math.round(this.canvas.clientHeight * LANDING.renderScale));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    gl.viewport(0, 0, w, h);
    gl.uniform2f(this.u.uRes ?? null, w, h);
    // Reduced motion: a fixed moment of the rain, never advancing.
    gl.uniform1f(this.u.uTime ?? null, s.reducedMotion ? 7.3 : this.time);
    gl.uniform1f(this.u.uEntry ?? null, s.entry);
    gl.uniform1f(this.u.uTransform ?? null, s.transform);
    gl.uniform1i(this.u.uMode ?? null, s.mode);
    gl.uniform1i(this.u.uPrevMode ?? null, s.prevMode);
    gl.uniform1f(this.u.uGlitch ?? null, s.glitch ? 1 : 0);
    gl.uniform1f(this.u.uCell ?? null, LANDING.cellPx);
    gl.drawArrays(gl.TRIANGLES, 0, 3);
  }

  dispose(): void {
    this.running = false;
    cancelAnimationFrame(this.raf);
    document.removeEventListener("visibilitychange", this.onVisibility);
    if (this.gl && this.program) this.gl.deleteProgram(this.program);
    this.gl = null;
  }
}

function compile(gl: WebGL2RenderingContext, type: number, source: string): WebGLShader | null {
  const shader = gl.createShader(type);
  if (!shader) return null;
  gl.shaderSource(shader, source);
  gl.compileShader(shader);
  if (gl.getShaderParameter(shader, gl.COMPILE_STATUS)) return shader;
  console.warn(`[landing] shader: ${gl.getShaderInfoLog(shader)}`);
  gl.deleteShader(shader);
  return null;
}

function link(gl: WebGL2RenderingContext): WebGLProgram | null {
  const vs = compile(gl, gl.VERTEX_SHADER, VERTEX_SHADER);
  const fs = compile(gl, gl.FRAGMENT_SHADER, FRAGMENT_SHADER);
  const program = gl.createProgram();
  if (!vs || !fs || !program) return null;
  gl.attachShader(program, vs);
  gl.attachShader(program, fs);
  gl.linkProgram(program);
  gl.deleteShader(vs);
  gl.deleteShader(fs);
  if (gl.getProgramParameter(program, gl.LINK_STATUS)) return program;
  console.warn(`[landing] program: ${gl.getProgramInfoLog(program)}`);
  gl.deleteProgram(program);
  return null;
}
