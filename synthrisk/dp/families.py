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
from scipy.stats import poisson

from ..errors import DataError
from .mechanism import clip_rows

NEWTON_STEPS = 60
BETA_LIMIT = 30.0
RECORD_BLOCK = 100_000  # per-record draws held in memory at once (a block stays in cache)
# Count responses are drawn as a histogram over 0..Q (Q: where the survival function of every cell
# falls below this) plus, for the rare records above Q, one exact draw each from the tail.
HISTOGRAM_TAIL = 1e-7
HISTOGRAM_MAX = 512  # wider histograms (rates in the hundreds) are drawn record by record instead


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

    def clipped_mean_statistic(self, theta: np.ndarray, n: int, clip: float, rng: np.random.Generator,
                               size: tuple = ()) -> np.ndarray:
        """Mean of the clipped statistics clip((y, y^2)) of n fresh records, `size` times, for one
        parameter vector `theta`: shape size + (2,). Clipping is non-linear in y, so the records
        are drawn one by one (in blocks of about RECORD_BLOCK draws to bound memory; the normal
        stream does not depend on the blocking)."""
        mu, sd = float(theta[0]), float(np.sqrt(theta[1]))
        releases = int(np.prod(size, dtype=int))
        out = np.empty((releases, 2))
        block = max(1, RECORD_BLOCK // max(1, n))
        for start in range(0, releases, block):
            y = rng.normal(mu, sd, size=(min(block, releases - start), n))
            squares = y * y
            out[start:start + len(y), 0] = y.sum(axis=-1)
            out[start:start + len(y), 1] = squares.sum(axis=-1)
            # clip_rows for s = (y, y^2), applied only where it binds (||s||^2 = y^2 + y^4 > B^2):
            # those records' statistics are scaled by B / ||s||
            release, record = np.nonzero(squares * (1.0 + squares) > clip * clip)
            if len(release):
                scale = clip / np.sqrt(squares[release, record] * (1.0 + squares[release, record])) - 1.0
                np.add.at(out[:, 0], start + release, y[release, record] * scale)
                np.add.at(out[:, 1], start + release, squares[release, record] * scale)
        return (out / n).reshape(tuple(size) + (2,))

    def synthetic_mean_statistic(self, theta: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """Mean statistic of n fresh records per parameter row, drawn exactly through the sample
        mean and the chi-square sum of squares (no per-record draws needed)."""
        mu, var = theta[..., 0], theta[..., 1]
        mean = rng.normal(mu, np.sqrt(var / n))
        squares = var * rng.chisquare(n - 1, size=mu.shape)
        return np.stack([mean, squares / n + mean ** 2], axis=-1)

    def free_to_theta(self, free: np.ndarray) -> np.ndarray:
        free = np.asarray(free, dtype=float)
        return np.stack([free[..., 0], np.exp(free[..., 1])], axis=-1)

    def theta_to_free(self, theta: np.ndarray) -> np.ndarray:
        return np.array([theta[0], np.log(theta[1])])


def _binary_histogram(rng, count, mu):
    """Responses of `count` (..., K) records with mean mu (K,) as counts of y = 0, 1: (..., K, 2)."""
    ones = rng.binomial(count, mu)
    return np.stack([count - ones, ones], axis=-1), []


def _count_width(mu) -> int:
    """Number of response values (0..Q) _count_histogram counts for cell means mu."""
    return int(max(poisson.isf(HISTOGRAM_TAIL, np.asarray(mu, dtype=float)).max(), 1)) + 1


def _count_histogram(rng, count, mu):
    """Poisson responses of `count` (..., K) records with means mu (K,): counts of y = 0..Q, shape
    (..., K, Q + 1), and the records above Q as (flat index into (..., K), y) pairs. Each cell's
    counts are one multinomial draw over 0..Q and "above Q"; each record above Q then gets its own
    exact draw from the Poisson law conditioned on y > Q (inverse survival function)."""
    q = _count_width(mu) - 1
    values = np.arange(q + 1)
    probabilities = poisson.pmf(values[None, :], mu[:, None])
    tail = np.maximum(1.0 - probabilities.sum(axis=-1), 0.0)
    counts = np.empty(np.shape(count) + (q + 2,), dtype=np.int64)
    for k in range(len(mu)):
        counts[..., k, :] = rng.multinomial(count[..., k], np.append(probabilities[k], tail[k]))
    above = counts[..., q + 1].reshape(-1)
    extreme = []
    if above.any():
        where = np.repeat(np.arange(above.size), above)
        cell = where % len(mu)
        uniform = rng.random(where.size)
        # smallest y > Q with P(Y > y) <= u P(Y > Q): y drawn from Y | Y > Q
        y = np.maximum(poisson.isf(uniform * poisson.sf(q, mu[cell]), mu[cell]), q + 1)
        extreme = list(zip(where, y))
    return counts[..., : q + 1], extreme


@dataclass(frozen=True)
class _Link:
    mean: callable
    derivative: callable
    log_partition: callable
    second_moment: callable
    # total response of `count` records with mean mu each (one record: count = 1)
    draw_sum: callable
    # responses of `count` records per cell as a histogram (see _binary_histogram), and its width
    draw_histogram: callable
    histogram_width: callable


LINKS = {
    "logistic": _Link(expit, lambda eta: expit(eta) * (1 - expit(eta)),
                      lambda eta: np.logaddexp(0.0, eta), lambda mu: mu,
                      lambda rng, count, mu: rng.binomial(count, mu), _binary_histogram,
                      lambda mu: 2),
    "poisson": _Link(np.exp, np.exp, np.exp, lambda mu: mu + mu ** 2,
                     lambda rng, count, mu: rng.poisson(count * mu), _count_histogram,
                     _count_width),
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

    # The two products with the design are einsums, not matmuls: BLAS may sum a row differently
    # depending on how many rows the batch has, and a replicate's numbers must not depend on its
    # batch (experiments.coverage_rows and reference.coverage_rows_one_at_a_time agree exactly).
    def _eta(self, beta):
        """Linear predictor of every cell, x_k' beta: (..., K)."""
        return np.einsum("...p,kp->...k", beta, self.cells)

    def _moment(self, weights):
        """sum_k weights_k x_k: (..., p)."""
        return np.einsum("...k,kp->...p", weights, self.cells)

    def mean_map(self, theta: np.ndarray) -> np.ndarray:
        pi, beta = self._split(theta)
        mu = self.link.mean(self._eta(beta))
        return np.concatenate([pi, self._moment(pi * mu)], axis=-1)

    def _hessian(self, pi, beta):
        weight = pi * self.link.derivative(self._eta(beta))
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

        def objective(b, weights, totals):
            return np.sum(weights * self.link.log_partition(self._eta(b)), -1) - np.sum(totals * b, -1)

        # Rows leave the iteration once they diverge (|beta| > BETA_LIMIT: no finite solution), and
        # each row stops after the step taken at a gradient below 1e-12. Only the rows still
        # iterating are computed, every operation row by row: a row's iterates never depend on the
        # other rows of the batch, so solving replicates together or one at a time gives the same
        # numbers.
        shape = beta.shape[:-1]
        flat_pi, flat_target = pi.reshape(-1, self.n_cells), target.reshape(-1, self.p)
        beta = beta.reshape(-1, self.p)
        active = np.ones(len(beta), dtype=bool)
        moving = active.copy()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for _ in range(NEWTON_STEPS):
                rows = np.flatnonzero(active & moving)
                if not len(rows):
                    break
                b, weights, totals = beta[rows], flat_pi[rows], flat_target[rows]
                grad = self._moment(weights * self.link.mean(self._eta(b))) - totals
                hess = self._hessian(weights, b)
                ridge = 1e-10 * (np.trace(hess, axis1=-2, axis2=-1)[..., None, None] + 1e-12)
                step = np.linalg.solve(hess + ridge * np.eye(self.p), grad[..., None])[..., 0]
                step = np.where(np.isfinite(step), step, 0.0)
                current, t = objective(b, weights, totals), np.ones(len(rows))
                for _ in range(30):
                    trial = b - t[..., None] * step
                    worse = ~(objective(trial, weights, totals) <= current + 1e-14 * np.abs(current))
                    if not worse.any():
                        break
                    t = np.where(worse, t / 2, t)
                b = b - t[..., None] * step
                beta[rows] = b
                active[rows] &= np.all(np.abs(b) < BETA_LIMIT, axis=-1)
                moving[rows] &= ~np.all(np.abs(grad) < 1e-12, axis=-1)
            beta, active = beta.reshape(shape + (self.p,)), active.reshape(shape)
            grad = self._moment(pi * self.link.mean(self._eta(beta))) - target
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
            mu = self.link.mean(self._eta(beta))
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
        mu = self.link.mean(self._eta(beta))
        m_xy = self._moment(pi * mu)
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

    def clipped_mean_statistic(self, theta: np.ndarray, n: int, clip: float, rng: np.random.Generator,
                               size: tuple = ()) -> np.ndarray:
        """Mean of the clipped statistics of n fresh records, `size` times, for one parameter vector
        `theta`: shape size + (dim,). Records with the same cell and response have the same
        statistic, so the release depends on the records only through how many fall on each (cell,
        y): those counts are drawn exactly (multinomial cell counts, then the responses of each
        cell as a histogram, see the link's draw_histogram), and each distinct statistic is
        clipped once. The same law as drawing the n records one by one, at a cost free of n."""
        pi, beta = self._split(np.asarray(theta, dtype=float))
        mu = self.link.mean(self._eta(beta))
        if not np.all(np.isfinite(mu)) or self.link.histogram_width(mu) > HISTOGRAM_MAX:
            return self._clipped_mean_by_record(theta, n, clip, rng, size)
        cells = rng.multinomial(n, _shares(pi), size=size)
        histogram, extreme = self.link.draw_histogram(rng, cells, mu)
        values = np.arange(histogram.shape[-1], dtype=float)
        statistics = clip_rows(self._statistic_of(np.arange(self.n_cells)[:, None], values[None, :]), clip)
        total = np.einsum("...kv,kvd->...d", histogram.astype(float), statistics)
        if extreme:
            flat = total.reshape(-1, self.dim)
            for where, y in extreme:
                flat[where // self.n_cells] += clip_rows(self._statistic_of(where % self.n_cells, y), clip)
        return total / n

    def _clipped_mean_by_record(self, theta, n, clip, rng, size):
        """clipped_mean_statistic by drawing every record (for rates too large to histogram)."""
        releases = int(np.prod(size, dtype=int))
        out = np.empty((releases, self.dim))
        block = max(1, RECORD_BLOCK // max(1, n))
        for start in range(0, releases, block):
            data = self.sample(theta, n, rng, size=(min(block, releases - start),))
            out[start:start + len(data["y"])] = clip_rows(self.statistic(data), clip).sum(axis=-2)
        return (out / n).reshape(tuple(size) + (self.dim,))

    def _statistic_of(self, cell, y) -> np.ndarray:
        """The statistic (onehot(cell), x_cell * y) of records given by broadcastable cell and y."""
        cell, y = np.broadcast_arrays(np.asarray(cell), np.asarray(y, dtype=float))
        return self.statistic({"cell": cell, "y": y})

    def synthetic_mean_statistic(self, theta: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """Mean statistic of n fresh records per parameter row, drawn exactly through the cell
        counts (multinomial) and the per-cell response sums (binomial / Poisson)."""
        pi, beta = self._split(theta)
        counts = rng.multinomial(n, _shares(pi))
        # Diverged fits (flagged by solve) are kept finite so that one does not stop the batch.
        mu = self.link.mean(np.clip(self._eta(beta), -BETA_LIMIT, BETA_LIMIT))
        sums = self.link.draw_sum(rng, counts, mu)
        return np.concatenate([counts / n, self._moment(sums / n)], axis=-1)

    def free_to_theta(self, free: np.ndarray) -> np.ndarray:
        """(pi, beta) from free parameters (logits of the first K-1 cells against the last, beta);
        leading axes are batches."""
        free = np.asarray(free, dtype=float)
        logits = np.concatenate([free[..., : self.n_cells - 1], np.zeros(free.shape[:-1] + (1,))], axis=-1)
        pi = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return np.concatenate([pi / pi.sum(axis=-1, keepdims=True), free[..., self.n_cells - 1:]], axis=-1)

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
    def from_levels(cls, levels: dict) -> Design:
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
