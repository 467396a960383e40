// Types-only stand-in for svelte/store (the signatures of Svelte 4 and 5; the
// real `svelte` package brings its compiler: too heavy for a type check).
// Only type-checked, never run.
declare module 'svelte/store' {
  export type Subscriber<T> = (value: T) => void;
  export type Unsubscriber = () => void;
  export type Updater<T> = (value: T) => T;
  export type StartStopNotifier<T> = (set: (value: T) => void, update: (fn: Updater<T>) => void) => void | (() => void);
  export interface Readable<T> { subscribe(run: Subscriber<T>, invalidate?: () => void): Unsubscriber }
  export function readable<T>(value?: T, start?: StartStopNotifier<T>): Readable<T>;
}
