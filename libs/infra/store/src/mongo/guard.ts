import { asStoreError } from './errors';

/**
 * The facet with every method's failure passed through `asStoreError`, so no caller (the gateway,
 * the kernel's retry logic) ever sees a raw driver error where a coded one applies.
 */
export function withStoreErrors<T extends object>(facet: T): T {
  return new Proxy(facet, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result: unknown = value.apply(target, args);
          return result instanceof Promise ? result.catch((e: unknown) => Promise.reject(asStoreError(e))) : result;
        } catch (e) {
          throw asStoreError(e);
        }
      };
    },
  });
}
