"""Exponential families with per-record sufficient statistics, written for batches of parameters.

Each family maps a full parameter vector theta to the mean of its per-record statistic
(`mean_map`, the gradient of the log-partition), solves the moment equation back (`solve`: the MLE
given a mean statistic), and gives the Jacobian of the *reported* parameters with respect to the
mean statistic and the covariance of the statistic (the Fisher information in the natural
parameter). With them, the variance of the DP estimator is

    Var(theta_hat) = J Cov(s) J' / n + sigma^2 J J',

which is the paper's I^-1/n + sigma^2 I^-2 written for any smooth parameterisation: for the natural
parameter J = I^-1 and Cov(s) = I (delta method). All arrays carry leading batch axes so that a
Monte Carlo study solves every replicate at once.

Regression families (logistic, Poisson). sum_i x_i y_i is sufficient only given X, and the
log-partition sum_i a(x_i'beta) depends on every record's covariates. We therefore release the
statistic of the *joint* model of (X, Y): covariates are categorical (binned if need be), X takes
one of K public cells with unknown shares pi_k, and Y | X follows the GLM. The joint law is a
regular exponential family with per-record statistic s = (onehot(cell), x*y) and natural
parameter (log pi_k - a(x_k'beta), beta), so the paper's theory applies to it unchanged; the
noise in the cell shares enters beta's variance through J. The covariates are protected like
every other attribute.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from ..errors import DataError

NEWTON_STEPS = 60
BETA_LIMIT = 30.0


class _Family:
    def natural_clip(self, data: dict) -> float:
        """The largest per-record statistic norm: the clip bound at which nothing is clipped."""
        return float(np.linalg.norm(self.statistic(data), axis=-1).max())


class GaussianFamily(_Family):
    """N(mean, variance); s(x) = (x, x^2); reported parameters: mean and variance."""

    name = "gaussian"
    parameter_names = ("mean", "variance")
    reported = slice(0, 2)
    dim = 2

    def statistic(self, data: dict) -> np.ndarray:
        y = np.asarray(data["y"], dtype=float)
        return np.stack([y, y ** 2], axis=-1)

    def mean_map(self, theta: np.ndarray) -> np.ndarray:
        mu, var = theta[..., 0], theta[..., 1]
        return np.stack([mu, mu ** 2 + var], axis=-1)

    def solve(self, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """MLE from mean statistics. A noisy second moment below the squared mean lies outside the
        mean space; the estimate is then projected onto the parameter space's boundary (variance
        -> a tiny positive floor), which is the constrained MLE: always a valid estimate."""
        mu = m[..., 0]
        var = m[..., 1] - mu ** 2
        floor = 1e-12 * np.maximum(1.0, np.abs(m[..., 1]))
        return np.stack([mu, np.maximum(var, floor)], axis=-1), np.ones(mu.shape, dtype=bool)

    def jacobian(self, theta: np.ndarray) -> np.ndarray:
        mu = theta[..., 0]
        jac = np.zeros(theta.shape[:-1] + (2, 2))
        jac[..., 0, 0] = 1.0
        jac[..., 1, 0] = -2.0 * mu
        jac[..., 1, 1] = 1.0
        return jac

    def stat_cov(self, theta: np.ndarray) -> np.ndarray:
        mu, var = theta[..., 0], theta[..., 1]
        cov = np.empty(theta.shape[:-1] + (2, 2))
        cov[..., 0, 0] = var
        cov[..., 0, 1] = cov[..., 1, 0] = 2.0 * mu * var
        cov[..., 1, 1] = 4.0 * mu ** 2 * var + 2.0 * var ** 2
        return cov

    def fisher_information(self, theta: np.ndarray) -> np.ndarray:
        """Per-record Fisher information of (mean, variance)."""
        var = theta[..., 1]
        info = np.zeros(theta.shape[:-1] + (2, 2))
        info[..., 0, 0] = 1.0 / var
        info[..., 1, 1] = 1.0 / (2.0 * var ** 2)
        return info

    def log_likelihood(self, theta: np.ndarray, data: dict) -> float:
        y = np.asarray(data["y"], dtype=float)
        mu, var = theta[0], theta[1]
        return float(np.mean(-0.5 * np.log(2 * np.pi * var) - (y - mu) ** 2 / (2 * var)))

    def sample(self, theta: np.ndarray, n: int, rng: np.random.Generator, size: tuple = ()) -> dict:
        theta = np.asarray(theta, dtype=float)
        return {"y": rng.normal(theta[..., 0, None], np.sqrt(theta[..., 1, None]), size=size + (n,))}

    def synthetic_mean_statistic(self, theta: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """Mean statistic of n fresh records per parameter row, drawn exactly through the sample
        mean and the chi-square sum of squares (no per-record draws needed)."""
        mu, var = theta[..., 0], theta[..., 1]
        mean = rng.normal(mu, np.sqrt(var / n))
        squares = var * rng.chisquare(n - 1, size=mu.shape)
        return np.stack([mean, squares / n + mean ** 2], axis=-1)

    def free_to_theta(self, free: np.ndarray) -> np.ndarray:
        return np.array([free[0], np.exp(free[1])])

    def theta_to_free(self, theta: np.ndarray) -> np.ndarray:
        return np.array([theta[0], np.log(theta[1])])


@dataclass(frozen=True)
class _Link:
    mean: callable
    derivative: callable
    log_partition: callable
    second_moment: callable
    # total response of `count` records with mean mu each (one record: count = 1)
    draw_sum: callable


LINKS = {
    "logistic": _Link(expit, lambda eta: expit(eta) * (1 - expit(eta)),
                      lambda eta: np.logaddexp(0.0, eta), lambda mu: mu,
                      lambda rng, count, mu: rng.binomial(count, mu)),
    "poisson": _Link(np.exp, np.exp, np.exp, lambda mu: mu + mu ** 2,
                     lambda rng, count, mu: rng.poisson(count * mu)),
}


def _shares(pi: np.ndarray) -> np.ndarray:
    """Cell probabilities from (possibly noisy) shares: negatives to 0, renormalised; uniform when
    noise left nothing positive."""
    shares = np.maximum(np.nan_to_num(pi, nan=0.0), 0.0)
    total = shares.sum(-1, keepdims=True)
    uniform = np.full_like(shares, 1.0 / shares.shape[-1])
    return np.where(total > 0, shares / np.where(total > 0, total, 1.0), uniform)


class GLMFamily(_Family):
    """Joint model of categorical covariate cells and a logistic or Poisson response.

    `cells` (K, p) are the public covariate rows (intercept and dummy columns), one per
    combination of covariate levels; `covariate_names` name the p columns. Full parameter:
    (pi_1..pi_K, beta_1..beta_p); reported: beta.
    """

    def __init__(self, kind: str, cells: np.ndarray, covariate_names: list[str]):
        if kind not in LINKS:
            raise DataError(f"unknown regression family {kind!r}; choose logistic or poisson")
        self.name = kind
        self.link = LINKS[kind]
        self.cells = np.asarray(cells, dtype=float)
        self.n_cells, self.p = self.cells.shape
        self.parameter_names = tuple(covariate_names)
        self.reported = slice(self.n_cells, self.n_cells + self.p)
        self.dim = self.n_cells + self.p

    # -- statistics and moments -------------------------------------------------------------
    def statistic(self, data: dict) -> np.ndarray:
        cell, y = np.asarray(data["cell"]), np.asarray(data["y"], dtype=float)
        onehot = (cell[..., None] == np.arange(self.n_cells)).astype(float)
        return np.concatenate([onehot, self.cells[cell] * y[..., None]], axis=-1)

    def _split(self, theta):
        return theta[..., : self.n_cells], theta[..., self.n_cells:]

    def mean_map(self, theta: np.ndarray) -> np.ndarray:
        pi, beta = self._split(theta)
        mu = self.link.mean(beta @ self.cells.T)
        return np.concatenate([pi, (pi * mu) @ self.cells], axis=-1)

    def _hessian(self, pi, beta):
        weight = pi * self.link.derivative(beta @ self.cells.T)
        return np.einsum("...k,kp,kq->...pq", weight, self.cells, self.cells)

    def solve(self, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """beta solving sum_k pi_k x_k mu(x_k'beta) = m_xy by damped Newton on the convex
        objective sum_k pi_k a(x_k'beta) - m_xy'beta. Noisy negative cell shares are set to 0
        (post-processing). Rows whose moment equation has no finite solution (possible when noise
        pushes m_xy outside the attainable set) are flagged as not valid."""
        m = np.asarray(m, dtype=float)
        pi = np.maximum(m[..., : self.n_cells], 0.0)
        target = m[..., self.n_cells:]
        beta = np.zeros(m.shape[:-1] + (self.p,))
        if self.name == "poisson":
            # Start at a constant rate: the intercept matching the overall mean response.
            overall = np.maximum(target[..., 0] / np.maximum(pi.sum(-1), 1e-12), 1e-6)
            beta[..., 0] = np.log(overall)

        def objective(b):
            return np.sum(pi * self.link.log_partition(b @ self.cells.T), -1) - np.sum(target * b, -1)

        # Rows leave the iteration once they diverge (|beta| > BETA_LIMIT: no finite solution).
        active = np.ones(beta.shape[:-1], dtype=bool)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for _ in range(NEWTON_STEPS):
                grad = (pi * self.link.mean(beta @ self.cells.T)) @ self.cells - target
                hess = self._hessian(pi, beta)
                ridge = 1e-10 * (np.trace(hess, axis1=-2, axis2=-1)[..., None, None] + 1e-12)
                hess = np.where(active[..., None, None], hess + ridge * np.eye(self.p), np.eye(self.p))
                step = np.linalg.solve(hess, np.where(active[..., None], grad, 0.0)[..., None])[..., 0]
                step = np.where(np.isfinite(step), step, 0.0)
                current, t = objective(beta), np.ones(beta.shape[:-1])
                for _ in range(30):
                    trial = beta - t[..., None] * step
                    worse = ~(objective(trial) <= current + 1e-14 * np.abs(current))
                    if not worse.any():
                        break
                    t = np.where(worse, t / 2, t)
                beta = beta - t[..., None] * step
                active &= np.all(np.abs(beta) < BETA_LIMIT, axis=-1)
                if np.all(np.abs(np.where(active[..., None], grad, 0.0)) < 1e-12):
                    break
            grad = (pi * self.link.mean(beta @ self.cells.T)) @ self.cells - target
        scale = 1.0 + np.abs(target)
        valid = active & np.all(np.abs(grad) <= 1e-7 * scale, axis=-1)
        return np.concatenate([pi, beta], axis=-1), valid

    def jacobian(self, theta: np.ndarray) -> np.ndarray:
        """d beta / d (m_pi, m_xy) = H^-1 [-M, I], M[:, k] = x_k mu_k (implicit function theorem)."""
        pi, beta = self._split(theta)
        # Rows whose solve diverged (flagged invalid by `solve`) must not stop a whole batch: their
        # non-finite Hessians are replaced, and pinv copes with underflowed weights.
        with np.errstate(over="ignore", invalid="ignore"):
            hess = self._hessian(pi, beta)
            mu = self.link.mean(beta @ self.cells.T)
        finite = np.all(np.isfinite(hess), axis=(-2, -1)) & np.all(np.isfinite(mu), axis=-1)
        hess = np.where(finite[..., None, None], hess, np.eye(self.p))
        mu = np.where(finite[..., None], mu, 0.0)
        hinv = np.linalg.pinv(hess)
        m_block = np.einsum("kp,...k->...pk", self.cells, mu)
        right = np.concatenate([-m_block, np.broadcast_to(np.eye(self.p), m_block.shape[:-2] + (self.p, self.p))],
                               axis=-1)
        return hinv @ right

    def stat_cov(self, theta: np.ndarray) -> np.ndarray:
        pi, beta = self._split(theta)
        mu = self.link.mean(beta @ self.cells.T)
        m_xy = (pi * mu) @ self.cells
        cov_pi = np.einsum("...k,kl->...kl", pi, np.eye(self.n_cells)) - pi[..., :, None] * pi[..., None, :]
        cross = np.einsum("...k,kp->...kp", pi * mu, self.cells) - pi[..., :, None] * m_xy[..., None, :]
        second = np.einsum("...k,kp,kq->...pq", pi * self.link.second_moment(mu), self.cells, self.cells)
        cov_xy = second - m_xy[..., :, None] * m_xy[..., None, :]
        top = np.concatenate([cov_pi, cross], axis=-1)
        bottom = np.concatenate([np.swapaxes(cross, -1, -2), cov_xy], axis=-1)
        return np.concatenate([top, bottom], axis=-2)

    def fisher_information(self, theta: np.ndarray) -> np.ndarray:
        """Per-record Fisher information of beta: sum_k pi_k a''(x_k'beta) x_k x_k'."""
        pi, beta = self._split(theta)
        return self._hessian(pi, beta)

    def log_likelihood(self, theta: np.ndarray, data: dict) -> float:
        """Mean conditional log-likelihood of y given the covariates (up to terms free of beta)."""
        _, beta = self._split(np.asarray(theta, dtype=float))
        eta = self.cells[np.asarray(data["cell"])] @ beta
        y = np.asarray(data["y"], dtype=float)
        return float(np.mean(y * eta - self.link.log_partition(eta)))

    # -- sampling -------------------------------------------------------------------------------
    def sample(self, theta: np.ndarray, n: int, rng: np.random.Generator, size: tuple = ()) -> dict:
        pi, beta = self._split(np.asarray(theta, dtype=float))
        cell = rng.choice(self.n_cells, size=size + (n,), p=_shares(pi))
        mu = self.link.mean(self.cells[cell] @ beta)
        return {"cell": cell, "y": self.link.draw_sum(rng, 1, mu).astype(float)}

    def synthetic_mean_statistic(self, theta: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """Mean statistic of n fresh records per parameter row, drawn exactly through the cell
        counts (multinomial) and the per-cell response sums (binomial / Poisson)."""
        pi, beta = self._split(theta)
        counts = rng.multinomial(n, _shares(pi))
        # Diverged fits (flagged by solve) are kept finite so that one does not stop the batch.
        mu = self.link.mean(np.clip(beta @ self.cells.T, -BETA_LIMIT, BETA_LIMIT))
        sums = self.link.draw_sum(rng, counts, mu)
        return np.concatenate([counts / n, (sums / n) @ self.cells], axis=-1)

    def free_to_theta(self, free: np.ndarray) -> np.ndarray:
        logits = np.concatenate([free[: self.n_cells - 1], [0.0]])
        pi = np.exp(logits - logits.max())
        return np.concatenate([pi / pi.sum(), free[self.n_cells - 1:]])

    def theta_to_free(self, theta: np.ndarray) -> np.ndarray:
        pi, beta = self._split(theta)
        logpi = np.log(np.maximum(pi, 1e-8))
        return np.concatenate([logpi[:-1] - logpi[-1], beta])

    # -- checks ---------------------------------------------------------------------------------
    def check_identifiable(self, shares: np.ndarray) -> None:
        """Raise naming the covariate that is constant or collinear among the observed cells."""
        seen = self.cells[np.asarray(shares) > 0]
        rank = np.linalg.matrix_rank(seen)
        if rank == self.p:
            return
        covariates = list(enumerate(self.parameter_names))[1:]  # the intercept is never the culprit
        for j, name in covariates:
            if np.ptp(seen[:, j]) == 0:
                raise DataError(f"singular Fisher information: covariate {name!r} is constant in the data")
        for j, name in covariates:
            if np.linalg.matrix_rank(np.delete(seen, j, axis=1)) == rank:
                raise DataError(
                    f"singular Fisher information: covariate {name!r} is collinear with the other covariates"
                )
        raise DataError("singular Fisher information: the covariates are collinear")


@dataclass
class Design:
    """Categorical covariates dummy-coded against their first level, one row per cell."""

    columns: list[str]
    levels: dict
    cells: np.ndarray
    names: list[str]
    cell_labels: list[tuple]

    @classmethod
    def from_levels(cls, levels: dict) -> "Design":
        columns = list(levels)
        grids = np.meshgrid(*[np.arange(len(levels[c])) for c in columns], indexing="ij")
        codes = np.stack([g.ravel() for g in grids], axis=-1) if columns else np.zeros((1, 0), int)
        blocks, names = [np.ones((len(codes), 1))], ["intercept"]
        for j, column in enumerate(columns):
            for k, level in enumerate(levels[column][1:], start=1):
                blocks.append((codes[:, j] == k).astype(float)[:, None])
                names.append(f"{column}[{level}]")
        labels = [tuple(levels[c][code] for c, code in zip(columns, row)) for row in codes]
        return cls(columns, levels, np.hstack(blocks), names, labels)

    def cell_index(self, frame: pd.DataFrame) -> np.ndarray:
        """Each record's cell number; every covariate value must be one of the declared levels."""
        index = np.zeros(len(frame), dtype=int)
        stride = 1
        for column in reversed(self.columns):
            lookup = {level: k for k, level in enumerate(self.levels[column])}
            values = frame[column].astype(str)
            codes = values.map(lookup)
            if codes.isna().any():
                bad = sorted(set(values[codes.isna()]))[:5]
                raise DataError(f"covariate {column!r}: values {bad} are not among its levels {self.levels[column]}")
            index += codes.to_numpy(int) * stride
            stride *= len(self.levels[column])
        return index
