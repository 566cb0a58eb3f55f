// Child process of the poll benchmark: a bare express hello-world, the reference of what
// this machine serves with no work behind a request.
import express from "express";

const app = express();
app.disable("x-powered-by");
app.get("/", (_req, res) => {
  res.json({ hello: "world" });
});
const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
server.keepAliveTimeout = 65_000;
process.on("SIGTERM", () => server.close(() => process.exit(0)));
