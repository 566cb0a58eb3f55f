import { RateLimiter } from "./rate-limit.ts";

export interface LoginThrottleOptions {
  /** Failed sign-ins allowed in a burst per login from one client address, then `perMinute` more a minute. */
  perLogin: { burst: number; perMinute: number };
  /** The same per client address, whatever the login. */
  perAddress: { burst: number; perMinute: number };
  /**
   * The ceiling per login from every address together: larger than `perLogin`, so that one
   * address guessing cannot lock the user out from another, yet bounded, so that many
   * addresses together cannot guess without end. Reaching it reports the login under attack.
   */
  perLoginGlobal?: { burst: number; perMinute: number };
  /** Called (at most once per login per `attackReportEveryMs`) when a login reaches its global ceiling. */
  onAttack?: (login: string) => void;
  /** 15 minutes by default. */
  attackReportEveryMs?: number;
}

export const DEFAULT_LOGIN_GLOBAL = { burst: 100, perMinute: 20 };

/**
 * Limits failed sign-ins per login and client address together, per client address, and per
 * login from everywhere (a slower ceiling). Keys never depend on a credential header, so junk
 * `X-API-Key` or `Authorization` values change nothing; a success consumes nothing.
 */
export class LoginThrottle {
  private readonly byLoginAddress: RateLimiter;
  private readonly byAddress: RateLimiter;
  private readonly byLogin: RateLimiter;
  private readonly reported = new Map<string, number>();

  constructor(private readonly options: LoginThrottleOptions) {
    const global = options.perLoginGlobal ?? DEFAULT_LOGIN_GLOBAL;
    this.byLoginAddress = new RateLimiter(options.perLogin.perMinute / 60, options.perLogin.burst);
    this.byAddress = new RateLimiter(options.perAddress.perMinute / 60, options.perAddress.burst);
    this.byLogin = new RateLimiter(global.perMinute / 60, global.burst);
  }

  /** 0 when a sign-in may be tried, else the seconds to wait. */
  wait(login: string, address: string): number {
    return Math.max(
      this.byLoginAddress.peek(pairKey(login, address)),
      this.byAddress.peek(address),
      this.byLogin.peek(loginKey(login)),
    );
  }

  failed(login: string, address: string, now = Date.now()): void {
    this.byLoginAddress.take(pairKey(login, address), now);
    this.byAddress.take(address, now);
    this.byLogin.take(loginKey(login), now);
    if (this.byLogin.peek(loginKey(login), now) > 0) this.underAttack(loginKey(login), now);
  }

  private underAttack(login: string, now: number): void {
    const last = this.reported.get(login);
    if (last !== undefined && now - last < (this.options.attackReportEveryMs ?? 15 * 60_000)) return;
    if (this.reported.size >= 10_000) this.reported.clear();
    this.reported.set(login, now);
    this.options.onAttack?.(login);
  }
}

/** Logins are case-insensitive: `ROOT` and `root` share one bucket. */
const loginKey = (login: string) => login.trim().toLowerCase();
const pairKey = (login: string, address: string) => `${loginKey(login)}|${address}`;
