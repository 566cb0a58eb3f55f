// A service address in front of several replicas, as a Kubernetes Service is: each TCP
// connection goes to the next replica in turn (a connection, not a call: gRPC clients keep
// one HTTP/2 connection, so a caller sticks to a replica until that connection breaks). A
// replica that refuses the connection (stopped, restarting) is skipped.
import net from "node:net";

export class RoundRobinProxy {
  private next = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;

  constructor(
    readonly port: number,
    private readonly backends: number[],
  ) {
    this.server = net.createServer((client) => this.pipe(client, 0));
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.port, "127.0.0.1", () => resolve());
    });
  }

  private pipe(client: net.Socket, tried: number): void {
    client.pause();
    const port = this.backends[this.next++ % this.backends.length];
    const upstream = net.connect(port, "127.0.0.1");
    let connected = false;
    this.sockets.add(client).add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    upstream.once("connect", () => {
      connected = true;
      client.pipe(upstream).pipe(client);
      client.resume();
    });
    upstream.on("error", () => {
      if (connected || tried + 1 >= this.backends.length) return close();
      this.sockets.delete(upstream);
      this.pipe(client, tried + 1);
    });
    upstream.on("close", () => connected && close());
    client.on("error", close);
    client.on("close", close);
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
