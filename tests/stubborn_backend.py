"""A test generator that ignores every signal and exception while it "fits" (as JAX's garbage-
collection callback swallowed SIGALRM): only a time limit enforced from outside can stop it."""

import time

from synthrisk.generators.base import Generator, register


@register("stubborn")
class Stubborn(Generator):
    def fit(self, train, schema):
        end = time.monotonic() + float(self.params.get("seconds", 60))
        while time.monotonic() < end:
            try:
                time.sleep(0.05)
            except BaseException:  # noqa: BLE001 - the point of this generator
                pass
        self.train_ = train
        return self

    def sample(self, n, seed):
        print(f"stubborn: sampling {n} rows")
        return self.train_.sample(n, replace=True, random_state=seed).reset_index(drop=True)
