import v8 from 'node:v8';

/** V8's default is 1,800,000; see tuneWasmTiering. */
const TIERING_BUDGET = 180_000_000;
let tuned = false;

/**
 * PGlite is PostgreSQL compiled to WebAssembly. V8 first compiles each function quickly (Liftoff)
 * and recompiles those that run often with its optimising compiler, on background threads. At
 * start-up that "often" is reached by hundreds of functions PostgreSQL runs only while starting,
 * so the optimising compiler spends ~0.3 s of CPU — on a 2-core machine, CPU the start needs.
 * A budget 100× V8's default leaves start-up code alone and still optimises what queries keep
 * running (measured: same steady-state query times; BENCHMARKS.md "Start-up"). The flag is the
 * process's (every thread's) and is read when a module compiles: call before PGlite loads.
 */
export function tuneWasmTiering(): void {
  if (tuned) return;
  tuned = true;
  v8.setFlagsFromString(`--wasm-tiering-budget=${TIERING_BUDGET}`);
}
