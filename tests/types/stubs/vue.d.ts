// Types-only stand-in for the parts of Vue 3 the web/README.md composable uses,
// with Vue's own signatures (the real `vue` package pulls in its compiler:
// too heavy for a type check). Only type-checked, never run.
declare module 'vue' {
  export interface Ref<T> { value: T }
  export type ShallowRef<T> = Ref<T>;
  export function shallowRef<T>(value: T): ShallowRef<T>;
  export function onScopeDispose(fn: () => void): void;
  export function toValue<T>(source: T | Ref<T> | (() => T)): T;
  export type MaybeRefOrGetter<T> = T | Ref<T> | (() => T);
  export function watchEffect(effect: (onCleanup: (cleanupFn: () => void) => void) => void): () => void;
}
