import { Router, makeRouter, Method } from '@acme/core';
import * as core from '@acme/core';
import start from './start';

namespace Server {
  export function listen(router: Router): void {
    router.add('/').handle();
  }
}

export class App {
  constructor(private readonly router: Router) {}

  serve = (): void => {
    this.router.run(this.router.add('/x'));
    Server.listen(this.router);
  };
}

const app = new App(makeRouter());
app.serve();
start(core.makeRouter());
unknown.call();
const m = Method.Get;
