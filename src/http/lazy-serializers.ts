import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type RouteDefinition = Parameters<ReturnType<ReturnType<typeof SerializerSelector>>>[0];
type Serializer = (data: unknown) => string;

/**
 * Response serializers (fast-json-stringify, from each route's response schemas) compiled on
 * first use instead of when the app is built — Fastify compiles every one of them, HEAD routes
 * included, before `ready`, which was the largest single piece of start-up after module loading.
 * The serializers are the same ones Fastify builds by default (same options, same shared
 * schemas); only the moment of compiling moves. `warm()` compiles the remaining ones in the
 * background once the server is ready, one per event-loop turn so requests keep flowing (HEAD
 * routes are left to their first request).
 */
export function lazySerializers(): {
  buildSerializer: (externalSchemas: unknown, options: unknown) => (route: RouteDefinition) => Serializer;
  warm: () => void;
  pending: () => number;
} {
  const waiting = new Set<() => Serializer>();
  const buildSerializer = (externalSchemas: unknown, options: unknown) => {
    const compile = SerializerSelector()(externalSchemas, options as never);
    return (route: RouteDefinition): Serializer => {
      let serializer: Serializer | null = null;
      const ready = (): Serializer => {
        if (serializer === null) {
          serializer = compile(route);
          waiting.delete(ready);
        }
        return serializer;
      };
      if (route.method !== 'HEAD') waiting.add(ready);
      return (data) => ready()(data);
    };
  };
  const warm = (): void => {
    const next = waiting.values().next();
    if (next.done) return;
    try {
      next.value();
    } catch {
      // A schema fast-json-stringify cannot compile fails that route's responses, not the process.
      waiting.delete(next.value);
    }
    setImmediate(warm);
  };
  return { buildSerializer, warm, pending: () => waiting.size };
}
