"""The Python entry point: `synthrisk.audit` on DataFrames (or files) in a notebook or a script.

    import synthrisk
    result = synthrisk.audit(train, synthetic, holdout, sensitive="income")
    result.risks                      # one row per risk: level, strongest attack, value, interval
    result.to_html("audit.html")

It runs exactly what `synthrisk audit` runs (the same checks where the data enter, the same measures
and verdicts: `synthrisk.release_audit`), in memory: nothing is written until you ask for the page
or the JSON.
"""

from __future__ import annotations

import contextlib
import io

from .release_audit.result import Audit

__all__ = ["Audit", "audit"]


def audit(train, synthetic, holdout=None, *, schema=None, sensitive=None, policy=None, aux=None,
          read_options: dict | None = None, progress: bool = False, generator=None,
          shadow_fits: int | None = None) -> Audit:
    """Audit a synthetic release: every applicable risk measure and utility, with verdicts.

    Parameters
    ----------
    train : DataFrame or path
        The records the generator was trained on (the members).
    synthetic : DataFrame or path
        The synthetic release.
    holdout : DataFrame or path, optional
        Records of the same population that the generator never saw. Without them the membership,
        control-set and utility measures are skipped (with the reason).
    schema : DatasetSchema, dict or path, optional
        Column types and roles. Default: inferred from `train` (`DatasetSchema.infer`), with every
        column but the sensitive ones a quasi-identifier.
    sensitive : str or list of str, optional
        The sensitive column(s); needed without `schema`, and replace the schema's when given with it.
    policy : Policy, dict or path, optional
        Release policy (family-wise level, power, threshold per risk). Default: `Policy()`, level 0.05
        and the published threshold 0.09 for every risk (`synthrisk.measures.policy`).
    aux : DataFrame or path, optional
        Population records that are neither members nor holdout (the attacker's sample; DOMIAS).
    read_options : dict, optional
        Reader options of text files (`sep`, `encoding`, `na_values`, ...; `synthrisk.io.ReadOptions`).
    progress : bool
        Show a progress bar and the audit's steps on stderr (default: quiet).
    generator : str or dict, optional
        The generator that made the release: a backend name (``"cart"``, ``"mst"``, ...) or
        ``"package.module:Class"``, or its config entry (``{"backend": "mst", "params": {"epsilon": 1}}``).
        The attacks that refit it then run: shadow models (on the records that are not targets:
        members, holdout and `aux`, with and without each target) and, for MST, MAMA-MIA; without
        it they are skipped.
    shadow_fits : int, optional
        Refits of `generator`, half to train the shadow models and half to judge them (default 400).

    Returns
    -------
    Audit
        Typed fields: the answer, the verdicts (`risks`), the members named (`identified`), the
        measures' status (`measures`) and tables, every attack's `evidence`, the page (`html`); the
        JSON from `to_json()`.

    Raises
    ------
    synthrisk.errors.SynthriskError
        Bad input (a `DataError`, `SchemaError` or `ConfigError`), naming the input and the column,
        before any measure runs.
    """
    from .errors import ConfigError
    from .measures.policy import as_policy
    from .release_audit import compute, read_inputs
    from .release_audit.generator import check_shadow_fits, generator_in_hand
    from .release_audit.run import silent

    if not isinstance(progress, bool):
        raise ConfigError(f"progress: give True or False, not {progress!r}")
    policy = as_policy(policy)
    shadow_fits = check_shadow_fits(shadow_fits, generator)  # first: the generator's check may take seconds
    in_hand = generator_in_hand(generator)
    data = read_inputs(train, synthetic, holdout, schema, sensitive, read_options=read_options, aux=aux)
    # The measures' one-line summaries are for the workflow's logs; the Audit holds them all.
    with contextlib.redirect_stdout(io.StringIO()):
        return compute(data, bar=progress, policy=policy, say=None if progress else silent, generator=in_hand,
                       shadow_fits=shadow_fits)
