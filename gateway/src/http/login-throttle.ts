import { RateLimiter } from "./rate-limit.ts";

export interface LoginThrottleOptions {
  /** Failed sign-ins allowed in a burst per login, then `perMinute` more a minute. */
  perLogin: { burst: number; perMinute: number };
  /** The same per client address (the socket's; forwarded-for headers are not trusted). */
  perAddress: { burst: number; perMinute: number };
}

/**
 * Limits failed sign-ins per login and per client address. Keys never depend on a
 * credential header, so junk `X-API-Key` or `Authorization` values change nothing; a
 * success consumes nothing.
 */
export class LoginThrottle {
  private readonly byLogin: RateLimiter;
  private readonly byAddress: RateLimiter;

  constructor(options: LoginThrottleOptions) {
    this.byLogin = new RateLimiter(options.perLogin.perMinute / 60, options.perLogin.burst);
    this.byAddress = new RateLimiter(options.perAddress.perMinute / 60, options.perAddress.burst);
  }

  /** 0 when a sign-in may be tried, else the seconds to wait. */
  wait(login: string, address: string): number {
    return Math.max(this.byLogin.peek(loginKey(login)), this.byAddress.peek(address));
  }

  failed(login: string, address: string): void {
    this.byLogin.take(loginKey(login));
    this.byAddress.take(address);
  }
}

/** Logins are case-insensitive: `ROOT` and `root` share one bucket. */
const loginKey = (login: string) => login.trim().toLowerCase();
