import type { Timers } from "../../../web/features/landing/machine.ts";

/** A fake clock for the landing machine: timers fire only when advance() moves time past them. */
export class FakeClock implements Timers {
  now = 0;
  private seq = 0;
  private readonly tasks = new Map<number, { at: number; fn: () => void; every: number | null }>();
  /** Values random() returns in order; 0.99 (no glitch) once they run out. */
  randoms: number[] = [];
  rolls = 0;

  random = (): number => {
    this.rolls += 1;
    return this.randoms.shift() ?? 0.99;
  };
  setTimeout = (fn: () => void, ms: number): number => this.add(fn, ms, null);
  setInterval = (fn: () => void, ms: number): number => this.add(fn, ms, ms);
  clearTimeout = (id: unknown): void => {
    this.tasks.delete(id as number);
  };
  clearInterval = (id: unknown): void => {
    this.tasks.delete(id as number);
  };

  private add(fn: () => void, ms: number, every: number | null): number {
    const id = ++this.seq;
    this.tasks.set(id, { at: this.now + ms, fn, every });
    return id;
  }

  /** Pending timers (intervals count once). */
  get pending(): number {
    return this.tasks.size;
  }

  /** Moves time forward by `ms`, firing every timer due on the way, in order. */
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void; every: number | null }] | null = null;
      for (const entry of this.tasks)
        if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      const [id, task] = next;
      this.now = task.at;
      if (task.every === null) this.tasks.delete(id);
      else task.at += task.every;
      task.fn();
    }
    this.now = end;
  }
}
