/** Every authorization rule of Atrium, each in JavaScript and in SQL side by side (README.md). */
export * from './principal.js';
export * from './workspaces.js';
export * from './threads.js';
export * from './context.js';
export * from './plus.js';
export * from './activity.js';
export * from './saved-prompts.js';
export * from './audit.js';
export * from './models.js';
