"""Many independent L-BFGS-B minimisations stepped together, with scipy's own numbers.

The noise-aware MLE is one small optimisation per release, and a Monte Carlo study runs thousands;
driving each through `scipy.optimize.minimize` costs a Python round trip per function evaluation.
Here every problem keeps its own state of scipy's L-BFGS-B routine (`_lbfgsb.setulb`, the code
`minimize(method="L-BFGS-B")` calls) and the loop of `scipy.optimize._lbfgsb_py._minimize_lbfgsb`
is replayed per problem; what the problems ask for in one round (the objective and its forward
differences) is evaluated in one batched call. The gradient is scipy's default for L-BFGS-B without
`jac`: 2-point forward differences with absolute step `eps` (`approx_derivative(..., abs_step=eps)`).
Given an objective whose rows do not interact, each problem follows exactly the iterates
`minimize` would produce for it alone (tests/unit/test_dp_batched.py checks this against `minimize`).
`setulb` is private to scipy: pyproject.toml allows only the minor release that
tests/unit/test_dp_batched.py checks against scipy's own `minimize` (the pin in envs/requirements.txt).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import _lbfgsb

# scipy.optimize.minimize(method="L-BFGS-B") defaults
MAXCOR, FTOL, GTOL, EPS, MAXFUN, MAXITER, MAXLS = 10, 2.2204460492503131e-09, 1e-5, 1e-8, 15000, 15000, 20
_FG, _NEW_X, _STOP = 3, 1, 5  # setulb task codes: wants f and g / new iterate / stopped by the caller


class _Problem:
    """One L-BFGS-B run: setulb's work arrays and the bookkeeping _minimize_lbfgsb keeps."""

    def __init__(self, x0: np.ndarray):
        q = len(x0)
        self.x = np.array(x0, dtype=np.float64)
        self.f = np.array(0.0, dtype=np.float64)
        self.g = np.zeros(q, dtype=np.float64)
        self.wa = np.zeros(2 * MAXCOR * q + 5 * q + 11 * MAXCOR ** 2 + 8 * MAXCOR, np.float64)
        self.iwa = np.zeros(3 * q, dtype=np.int32)
        self.task = np.zeros(2, dtype=np.int32)
        self.ln_task = np.zeros(2, dtype=np.int32)
        self.lsave = np.zeros(4, dtype=np.int32)
        self.isave = np.zeros(44, dtype=np.int32)
        self.dsave = np.zeros(29, dtype=np.float64)
        self.iterations = 0
        self.nfev = 0
        self.evaluated_at = None  # ScalarFunction's memo: f and g are reused at the same x


def _forward_steps(x: np.ndarray) -> np.ndarray:
    """approx_derivative's absolute steps: eps, or sqrt(machine eps) * max(1, |x|) with x's sign
    where x + eps == x."""
    sign = (x >= 0).astype(float) * 2 - 1
    h = np.full(x.shape, EPS)
    return np.where((x + h) - x == 0, np.finfo(np.float64).eps ** 0.5 * sign * np.maximum(1.0, np.abs(x)), h)


def lbfgsb_lockstep(objective, x0: np.ndarray) -> np.ndarray:
    """Minimise objective(x (m, q), rows (m,)) -> (m,) independently for each row of x0 (rows, q),
    where `rows` says which problem each point belongs to. Returns the final x of every problem,
    identical to scipy.optimize.minimize(f_r, x0[r], method="L-BFGS-B").x with f_r the objective of
    problem r alone."""
    x0 = np.asarray(x0, dtype=np.float64)
    count, q = x0.shape
    problems = [_Problem(row) for row in x0]
    low, high, nbd = np.zeros(q), np.zeros(q), np.zeros(q, np.int32)
    factr = FTOL / np.finfo(float).eps
    # minimize evaluates f and g at x0 before its first setulb call
    _evaluate(objective, problems, list(range(count)), q)
    running = list(range(count))
    while running:
        wanted, still = [], []
        for r in running:
            p = problems[r]
            _lbfgsb.setulb(MAXCOR, p.x, low, high, nbd, p.f, p.g, factr, GTOL, p.wa, p.iwa, p.task,
                           p.lsave, p.isave, p.dsave, MAXLS, p.ln_task)
            if p.task[0] == _FG:
                wanted.append(r)
            elif p.task[0] == _NEW_X:
                p.iterations += 1
                if p.iterations >= MAXITER:
                    p.task[:] = (_STOP, 504)
                elif p.nfev > MAXFUN:
                    p.task[:] = (_STOP, 502)
            else:
                continue  # converged or stopped: setulb is not called again
            still.append(r)
        _evaluate(objective, problems, wanted, q)
        running = still
    return np.stack([p.x for p in problems])


def _evaluate(objective, problems: list, wanted: list, q: int) -> None:
    """f and its forward-difference gradient at each wanted problem's x, in one objective call;
    a problem asking again at the point of its last evaluation keeps its f and g (as scipy's
    ScalarFunction does)."""
    fresh = []
    for r in wanted:
        p = problems[r]
        if p.evaluated_at is None or not np.array_equal(p.x, p.evaluated_at):
            fresh.append(r)
    if not fresh:
        return
    base = np.stack([problems[r].x for r in fresh])
    steps = _forward_steps(base)
    shifted = np.repeat(base[:, None, :], q, axis=1)
    index = np.arange(q)
    shifted[:, index, index] = base + steps
    points = np.concatenate([base[:, None, :], shifted], axis=1).reshape(-1, q)
    rows = np.repeat(np.asarray(fresh), q + 1)
    values = np.asarray(objective(points, rows), dtype=np.float64).reshape(len(fresh), q + 1)
    # approx_derivative's 2-point quotient, element by element: (f(x + h e_i) - f(x)) / ((x_i + h) - x_i)
    gradients = (values[:, 1:] - values[:, :1]) / ((base + steps) - base)
    for k, r in enumerate(fresh):
        p = problems[r]
        p.f = values[k, 0]
        p.g = gradients[k].copy()
        p.nfev += 1 + q
        p.evaluated_at = p.x.copy()
