import { createRequire } from 'node:module';
import type { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { CompileQueue } from './compile-queue.js';

type RouteDefinition = Parameters<ReturnType<ReturnType<typeof SerializerSelector>>>[0];
type Serializer = (data: unknown) => string;
type Compile = ReturnType<ReturnType<typeof SerializerSelector>>;

const require = createRequire(import.meta.url);

/**
 * Response serializers (fast-json-stringify, from each route's response schemas) compiled on
 * first use instead of when the app is built — Fastify compiles every one of them, HEAD routes
 * included, before `ready`, which was the largest single piece of start-up after module loading.
 * The serializers are the same ones Fastify builds by default (same options, same shared
 * schemas); only the moment of compiling moves. `warm()` compiles the remaining ones in the
 * background once the server is ready, one per event-loop turn so requests keep flowing (HEAD
 * routes are left to their first request). The compiler itself (fast-json-stringify, which loads
 * Ajv) is loaded with the first serializer compiled, not while the server starts (~40 ms).
 */
export function lazySerializers(): {
  buildSerializer: (externalSchemas: unknown, options: unknown) => (route: RouteDefinition) => Serializer;
  warm: () => void;
  pending: () => number;
} {
  const queue = new CompileQueue();
  const buildSerializer = (externalSchemas: unknown, options: unknown) => {
    let compile: Compile | undefined;
    const compiler = (): Compile => {
      if (compile) return compile;
      const { SerializerSelector: select } = require('@fastify/fast-json-stringify-compiler') as { SerializerSelector: typeof SerializerSelector };
      return (compile = select()(externalSchemas, options as never));
    };
    return (route: RouteDefinition): Serializer => {
      // HEAD routes are left to their first request.
      const ready = queue.defer(() => compiler()(route), route.method !== 'HEAD');
      return (data) => ready()(data);
    };
  };
  return { buildSerializer, warm: queue.warm, pending: () => queue.pending() };
}
