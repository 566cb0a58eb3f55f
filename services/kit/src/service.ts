import type { EventBus, Subscription } from "./bus.ts";
import { openDatabase, type Database, type DatabaseOptions } from "./db.ts";
import { OutboxRelay, startConsumer, type ConsumerOptions } from "./events.ts";
import type { Logger } from "./log.ts";
import { stopService } from "./runtime.ts";
import { startGrpcServer, type ServedService } from "./server.ts";

export interface ServiceRuntimeOptions {
  /** The service's name: its schema and its server's name. */
  name: string;
  databaseUrl: string;
  migrations: DatabaseOptions["migrations"];
  poolMax?: number;
  bus: EventBus;
  log: Logger;
  /** Whether the service publishes events (an outbox relay); analytics only reads. */
  publishes?: boolean;
}

/** A started service: its address and how it stops. */
export interface RunningService {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A periodic job or worker of a service: started with it, stopped with it. */
export interface ServiceJob {
  start(): void | Promise<void>;
  stop(): Promise<unknown>;
}

/**
 * What every service's start shares: its database (opened and migrated), its outbox relay,
 * its consumers (the server reports SERVING once they have joined their groups), its jobs,
 * its gRPC server, and its stop (the server, jobs, consumers and relay together, then the
 * database: `stopService`). A service's `app.ts` says only what is its own.
 */
export class ServiceRuntime {
  private readonly relay?: OutboxRelay;
  private readonly consumers: Subscription[] = [];
  private readonly parts: (() => Promise<unknown>)[] = [];

  private constructor(
    readonly db: Database,
    private readonly options: ServiceRuntimeOptions,
  ) {
    if (options.publishes ?? true) {
      this.relay = new OutboxRelay(db, options.bus, options.log);
      this.relay.start();
    }
  }

  /** Opens and migrates the service's database, then starts its outbox relay. */
  static async open(options: ServiceRuntimeOptions): Promise<ServiceRuntime> {
    const db = await openDatabase({
      log: options.log,
      url: options.databaseUrl,
      schema: options.name,
      migrations: options.migrations,
      poolMax: options.poolMax,
    });
    return new ServiceRuntime(db, options);
  }

  /** Tells the relay that outbox rows were committed (the flows' `published`). */
  readonly published = (): void => this.relay?.kick();

  /** Starts a consumer of the service's database; the server is ready once it has joined. */
  async consume(options: Omit<ConsumerOptions, "bus" | "db" | "log">): Promise<Subscription> {
    const { bus, log } = this.options;
    const subscription = await startConsumer({ bus, db: this.db, log, ...options });
    this.consumers.push(subscription);
    return subscription;
  }

  /** Starts a job now; it stops with the service. */
  async run<J extends ServiceJob>(job: J): Promise<J> {
    await job.start();
    this.parts.push(() => job.stop());
    return job;
  }

  /** Something else the service started that stops with it (before the database closes). */
  stopsWith(stop: () => Promise<unknown> | void): void {
    this.parts.push(async () => stop());
  }

  /** Starts the gRPC server on `port`; the answer stops the whole service. */
  async serve(port: number, services: ServedService[]): Promise<RunningService> {
    const { name, log } = this.options;
    const server = await startGrpcServer({
      name,
      port,
      log,
      ready: this.consumers.map((c) => c.joined),
      // Ready means able to serve: a connection of the pool within its budget.
      probe: () => this.db.ready(),
      services,
    });
    const relay = this.relay;
    return {
      url: server.url,
      port: server.port,
      stop: () =>
        stopService(
          [
            () => server.close(),
            ...this.parts,
            ...this.consumers.map((c) => () => c.close()),
            ...(relay ? [() => relay.stop()] : []),
          ],
          () => this.db.close(),
        ),
    };
  }
}
