"""synthcity plugins (ADS-GAN, DPGAN, PATE-GAN, TabDDPM, Bayesian network, PrivBayes, AIM, ...).

Runs only inside the isolated `.venv-synthcity` (envs/synthcity.txt): synthcity pins torch<2.3
and numpy<2, which the main environment cannot share. The workflow's generate_synthcity rule
calls scripts/generate_isolated.py with that interpreter; data crosses over only as the files of
the data-flow contract.

Our schema is mapped to what synthcity's loaders understand: categorical columns become integer
codes over the training levels (missing values a level of their own), and plugins that take an
`encoder` get one that treats exactly those columns as discrete, whatever their number of levels
(synthcity's default guess calls any column with more than 10 distinct values continuous). On the
way back codes are rounded and clipped into the training domain, and integer columns rounded.

The DP plugins (DP_PLUGINS) state the (epsilon, delta) they are configured with, and that the
release is NOT differentially private end to end: the levels, the numeric ranges and synthcity's
own encoder are read from the training data, so a record can move the domain (a value beyond the
others widens the range that every synthetic value is clipped to). The empirical epsilon audit
(synthrisk.epsilon_audit, config/audit_synthcity.yaml) measures what that costs.

DP noise (synthrisk.stats.noise). synthcity draws its DP plugins' noise from the global generators it
seeds with the `random_state` we give (`enable_reproducible_results`: numpy's global generator for
PrivBayes' Laplace and AIM's Gaussian noise, torch's for Opacus' DP-SGD noise in DPGAN and PATE-GAN),
so passing it the ordinary seed would make the noise replayable. For the DP plugins (NOISY_PLUGINS)
the fit is therefore seeded with a seed drawn from the operating system's entropy, or, with
`params.noise_seed`, derived from SeedSequence([noise_seed, seed, stream]) (and then marked not
private). synthcity takes that seed as one 32-bit integer (numpy's legacy `np.random.seed`), so its
noise has at most 32 bits of entropy, a limit of synthcity we cannot lift from outside. AIM runs its
whole mechanism in `generate` (each call measures anew), so its sampling is seeded the same way;
the other plugins sample, as post-processing, with the ordinary seed.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd

from ..data.encoding import MISSING_LEVEL, category_strings
from ..data.schema import CATEGORICAL, INTEGER, DatasetSchema
from ..errors import ConfigError, DataError
from ..stats.noise import check_noise_seed, guarantee, noise_integer
from .base import Generator, register

#: synthcity's DP plugins: the delta each uses when none is configured. PATE-GAN is not listed: it
#: sets delta to 1 / n^1.5 from the data whatever it is given.
DP_PLUGINS = {"dpgan": None, "privbayes": 0.0, "aim": 1e-9}
#: the neighbour relation each DP plugin's accounting assumes (read in synthcity 0.2.12's source), stated in
#: privacy() and built by the empirical audit (synthrisk.epsilon_audit.neighbours):
#:   dpgan: DP-SGD through Opacus (models/gan.py, make_private_with_epsilon): Opacus accounts the
#:     subsampled Gaussian mechanism under add/remove;
#:   privbayes: PrivBayes (Zhang et al. 2017) is DP for datasets differing in one tuple, n fixed:
#:     plugin_privbayes.py's Laplace scale 2 (d - k) / (n epsilon) and its Lemma 4.1 sensitivity;
#:   aim: private-pgm's AIM (models/aim.py): every Gaussian measurement charged rho = 1 / (2 sigma^2)
#:     (l2 sensitivity 1) and the selection's score sensitivity the marginal's weight, 1: add/remove.
NEIGHBOURS = {"dpgan": "add-remove", "privbayes": "replace-one", "aim": "add-remove"}
#: synthcity's default epsilon per DP plugin (its constructors' defaults)
DEFAULT_EPSILON = {"dpgan": 1.0, "privbayes": 1.0, "aim": 1.0}
NOT_DP_DOMAIN = "not DP: domain read from the data (levels, ranges and synthcity's encoder)"
#: what else a plugin's code does that breaks its claim (read in synthcity 0.2.12's source)
NOT_DP_ALSO = {
    "privbayes": "synthcity's PrivBayes adds to counts Laplace noise scaled for probabilities (n times too "
                 "small), only on the cells the data occupy, and takes every distinct value as a level",
}
#: plugins that draw DP noise, whose fits are seeded apart from the ordinary seed (module doc)
NOISY_PLUGINS = frozenset(DP_PLUGINS) | {"pategan"}
#: plugins whose DP mechanism runs in `generate`: their sampling draws DP noise too
MECHANISM_IN_GENERATE = frozenset({"aim"})
#: words telling the fit's noise seed from the sampling one's (in a generate job both have `seed`)
FIT_STREAM, SAMPLE_STREAM = 0, 1


@register("synthcity")
class SynthcityGenerator(Generator):
    libraries = ("synthcity", "torch", "opacus")

    def __init__(self, seed: int = 0, plugin: str | None = None, **params):
        if not plugin:
            raise ConfigError("synthcity backend: set `plugin` (e.g. adsgan, dpgan, ddpm, bayesian_network)")
        if plugin == "privbayes" and "delta" in params:
            raise ConfigError("synthcity backend: plugin privbayes takes no `delta` (it claims pure epsilon-DP); "
                              "remove params.delta")
        noise_seed = check_noise_seed(params.pop("noise_seed", None), "synthcity backend: params.noise_seed")
        if noise_seed is not None and plugin not in DP_PLUGINS:
            # PATE-GAN's noise is seeded apart too, but it states no guarantee that could say "not private"
            raise ConfigError(f"synthcity backend: params.noise_seed applies only to the DP plugins whose guarantee "
                              f"synthrisk states ({sorted(DP_PLUGINS)}), not to {plugin}; remove it")
        super().__init__(seed=seed, **params)
        self.plugin_name, self.noise_seed = plugin, noise_seed

    @classmethod
    def takes_noise_seed(cls, spec: dict) -> bool:
        # the constructor takes `noise_seed` from params, for the DP plugins only (PATE-GAN's refits
        # therefore draw the operating system's noise: an audit of it does not repeat exactly)
        return (spec.get("plugin") or (spec.get("params") or {}).get("plugin")) in DP_PLUGINS

    def fit_seed(self) -> int:
        """The random_state of the fit: the ordinary seed, or for a DP plugin a noise seed (module doc)."""
        if self.plugin_name not in NOISY_PLUGINS:
            return self.seed
        return noise_integer(self.noise_seed, self.seed, FIT_STREAM)

    def sample_seed(self, seed: int) -> int:
        """The random_state of sampling: `seed`, or a noise seed where sampling reruns the mechanism."""
        if self.plugin_name not in MECHANISM_IN_GENERATE:
            return seed
        return noise_integer(self.noise_seed, seed, SAMPLE_STREAM)

    def privacy(self) -> dict | None:
        if self.plugin_name not in DP_PLUGINS:
            return None
        delta = self.params.get("delta", DP_PLUGINS[self.plugin_name])
        also = NOT_DP_ALSO.get(self.plugin_name)
        # PrivBayes claims pure epsilon-DP (delta 0): its claim, not a property of this code (NOT_DP_ALSO)
        return {"epsilon": float(self.params.get("epsilon", DEFAULT_EPSILON[self.plugin_name])),
                # DPGAN without a delta uses 1 / n (synthcity's GAN): known only once fitted
                "delta": None if delta is None else float(delta),
                "neighbours": NEIGHBOURS[self.plugin_name], "domain": "from_data",
                "noise_seed": self.noise_seed,
                "guarantee": guarantee([NOT_DP_DOMAIN] + ([also] if also else []), self.noise_seed)}

    def _encode(self, train: pd.DataFrame, schema: DatasetSchema) -> pd.DataFrame:
        numeric_missing = [c for c in schema.numeric if train[c].isna().any()]
        if numeric_missing:
            raise DataError(f"synthcity backend: numeric column(s) {numeric_missing} have missing values, "
                            "which synthcity's plugins cannot fit; impute them or declare them categorical")
        frame, self._levels = {}, {}
        for column, kind in schema.columns.items():
            if kind == CATEGORICAL:
                levels, codes = np.unique(category_strings(train[column]), return_inverse=True)
                self._levels[column] = levels
                frame[column] = codes.astype(np.int64)
            else:
                frame[column] = train[column].astype("float64")
        self._ranges = {c: (frame[c].min(), frame[c].max()) for c in schema.numeric}
        return pd.DataFrame(frame)

    def _decode(self, out: pd.DataFrame) -> pd.DataFrame:
        decoded = {}
        for column, kind in self._schema.columns.items():
            values = pd.to_numeric(out[column], errors="coerce").to_numpy(dtype="float64")
            if kind == CATEGORICAL:
                levels = self._levels[column]
                codes = np.clip(np.rint(np.nan_to_num(values, nan=0.0)), 0, len(levels) - 1).astype(int)
                labels = levels[codes].astype(object)
                labels[labels == MISSING_LEVEL] = None
                decoded[column] = labels
            else:
                low, high = self._ranges[column]
                values = np.clip(values, low, high)
                decoded[column] = np.rint(values) if kind == INTEGER else values
        return pd.DataFrame(decoded)

    def _plugins(self):
        """synthcity's plugin registry, once it knows this plugin."""
        from synthcity.plugins import Plugins

        plugins = Plugins()
        if self.plugin_name not in plugins.list():
            raise ConfigError(f"synthcity backend: unknown plugin {self.plugin_name!r}; "
                              f"known: {sorted(plugins.list())}")
        return plugins

    def check(self) -> None:
        """The plugin exists and takes the entry's parameters (it is built, not fitted)."""
        plugins = self._plugins()
        try:
            plugins.get(self.plugin_name, **self.params)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"synthcity backend: plugin {self.plugin_name!r} refuses its params: {exc}") from None

    def fit(self, train: pd.DataFrame, schema: DatasetSchema) -> SynthcityGenerator:
        from synthcity.utils.reproducibility import enable_reproducible_results

        self._schema = schema
        frame = self._encode(train, schema)
        seed = self.fit_seed()
        enable_reproducible_results(seed)
        plugins = self._plugins()
        params = dict(self.params)
        accepted = inspect.signature(type(plugins.get(self.plugin_name)).__init__).parameters
        if "encoder" in accepted and "encoder" not in params:
            from synthcity.plugins.core.models.tabular_encoder import TabularEncoder

            categorical = list(self._levels)
            params["encoder"] = TabularEncoder(
                max_clusters=params.get("encoder_max_clusters", 5),
                categorical_limit=max([len(v) for v in self._levels.values()] + [10]) + 1,
            ).fit(frame, discrete_columns=categorical)
        # synthcity's fit reseeds numpy, torch and random with random_state: the DP plugins' noise seed
        self._plugin = plugins.get(self.plugin_name, random_state=seed, **params)
        self._plugin.fit(frame)
        return self

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        from synthcity.utils.reproducibility import enable_reproducible_results

        seed = self.sample_seed(seed)
        enable_reproducible_results(seed)
        out = self._plugin.generate(count=n, random_state=seed).dataframe()
        return self._decode(out)


#: PrivBayes's own parameters (synthcity's PrivBayes constructor): the plugin's others do not touch its search
PRIVBAYES_SEARCH_PARAMS = ("epsilon", "K", "n_bins", "mi_thresh", "target_usefulness")


def privbayes_networks(job: dict) -> list[list]:
    """synthcity PrivBayes's network search alone, round by round: MAMA-MIA's focal points on PrivBayes
    (`synthrisk.mia.mama_mia_privbayes`, which runs `python -m synthrisk.generators.synthcity` in this
    environment with the job on stdin). The job holds the real records (`environment_fits.records_json`), the
    schema (its dict), the plugin's parameters and, per round, the positions of the records it samples
    and its seed. Each round encodes its sample as `fit` does, then runs synthcity 0.2.12's own first
    step of PrivBayes: its encoding (`PrivBayes._encode`) and its exponential-mechanism search of the
    network (`PrivBayes._greedy_bayes`), seeded as the plugin seeds a fit. No counts are measured and
    nothing is sampled. Both are private methods of the synthcity pinned in envs/synthcity.txt; the slow
    test that runs this fails on a synthcity without them. Returns each round's network, [[child,
    [parents]], ...], in the order the search chose the children."""
    from synthcity.plugins.privacy.plugin_privbayes import PrivBayes
    from synthcity.utils.reproducibility import enable_reproducible_results

    from .environment_fits import records_frame

    schema = DatasetSchema.from_dict(job["schema"], origin="MAMA-MIA's PrivBayes job")
    records = records_frame(job["records"], schema, "MAMA-MIA's real records")
    params = {k: v for k, v in job["params"].items() if k in PRIVBAYES_SEARCH_PARAMS}
    found = []
    for positions, seed in zip(job["samples"], job["seeds"]):
        encoded = SynthcityGenerator(plugin="privbayes")._encode(records.iloc[positions], schema)
        search = PrivBayes(**params)
        codes, _ = search._encode(encoded)
        enable_reproducible_results(seed)
        found.append([[str(child), [str(p) for p in parents]] for child, parents in search._greedy_bayes(codes)])
    return found


def _answer_privbayes_job() -> int:
    """stdin: a `privbayes_networks` job (JSON); stdout: its networks (JSON) and nothing else."""
    import contextlib
    import json
    import sys

    job = json.load(sys.stdin)
    with contextlib.redirect_stdout(sys.stderr):  # synthcity's logs and progress bars
        found = privbayes_networks(job)
    json.dump(found, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(_answer_privbayes_job())
