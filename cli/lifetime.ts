/** Set by commands that keep the process running after their action returns (serve). */
export const lifetime = { keepAlive: false };
