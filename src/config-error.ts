/** A configuration that cannot start the server; its message names every bad variable. */
export class ConfigError extends Error {}
