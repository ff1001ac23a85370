"""synthpop's identity and attribute disclosure measures (Raab, Nowok & Dibben 2024, *Practical
privacy metrics for synthetic data*, arXiv 2406.16826; `disclosure()` in synthpop >= 1.9-0).

Why native: synthpop is an R package and is not installable here. This module re-implements
`disclosure()` of synthpop 1.9-2 from the paper and from the R function's logic, which is the
authority where the two texts differ (the percentage base of UiS, what the filters change). It is
checked against outputs of the R function on a hand-checkable table (tests/unit/test_disclosure.py).

On the keys q (quasi-identifiers, joined into one label per record) and a target t, over the
original records (Nd of them) and the synthetic ones (Ns):
- every value is a label: a number as R's `as.character` writes it (15 significant digits, `57`
  for 57.0), a missing value as the level `Missing` (in the original and the synthetic data alike);
- d[t, q] and s[t, q] count the original and synthetic records of each cell; a q group is
  *homogeneous* in a table when all its records share one t (decided before any exclusion).

Identity, in percent: UiO, original records unique on q in the original (of Nd); UiS, synthetic
records unique on q in the synthetic data (of Ns, as the R code has it; the paper writes Nd);
UiOiS, original uniques whose q appears in the synthetic data; repU, original uniques whose q is
unique in the synthetic data too (replicated uniques, of Nd).

Attribute, in percent of Nd (Dsyn of Ns): Dorig, original records in a q group homogeneous in
the original; Dsyn, synthetic records in a group homogeneous in the synthetic data; iS, original
records whose q appears in the synthetic data; DiS, those whose synthetic q group is homogeneous;
DiSCO, those whose synthetic q group is homogeneous *and* holds the record's own t (disclosive in
the synthetic data, correct in the original); DiSDiO, DiSCO records whose original group is
homogeneous too. `max_denom` and `mean_denom` are the largest and the mean (over cells) original
cell count among the DiSCO cells.

Correct attribution probabilities, in percent: baseCAPd (the target's own concentration),
CAPd, CAPs, DCAP and TCAP as synthpop 1.9-2 computes them (TCAP there is DiSCO over the original
records whose q appears in the synthetic data, not the TCAP of the earlier literature).

Exclusions zero table cells after homogeneity is decided, and never change Nd or Ns:
`not_target_levels` (target levels that are common knowledge), `use_target_na=False` (the
`Missing` target level, when the original target has missing values), `use_keys_na` (per key,
False drops q groups missing on that key), and, only with `exclude_over_denom_lim=True`, every
cell whose count exceeds `denom_lim` (synthpop's defaults: `denom_lim=5`, off). Because they shrink
groups, exclusions can raise UiO and repU. synthpop's threshold checks (`thresh_1way`,
`thresh_2way`) only flag target levels and key-target pairs for a human to look at: they change
no number, and are reported as `checks`.

Per original record (`records`): whether it is unique in the original, a replicated unique, and
DiSCO (no values, only flags), so that the same measures on members and on holdout records give a
member excess.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import ConfigError

MISSING = "Missing"
SEPARATOR = " | "
IDENTITY = ("UiO", "UiS", "UiOiS", "repU")
ATTRIBUTE = ("Dorig", "Dsyn", "iS", "DiS", "DiSCO", "DiSDiO", "max_denom", "mean_denom")
CAPS = ("baseCAPd", "CAPd", "CAPs", "DCAP", "TCAP")
#: synthpop's defaults for the filters and checks (synthpop 1.9-2's code)
DEFAULT_DENOM_LIM = 5
DEFAULT_THRESH_1WAY = (50.0, 90.0)
DEFAULT_THRESH_2WAY = (4.0, 80.0)


@dataclass(frozen=True)
class DisclosureResult:
    """The measures (percent; `max_denom` and `mean_denom` are counts), the settings, the threshold
    checks and the per-record flags of the original records."""

    keys: tuple[str, ...]
    target: str
    n_original: int
    n_synthetic: int
    identity: dict
    attribute: dict
    caps: dict
    settings: dict
    checks: dict
    #: row position, unique_original, replicated_unique, disco (one row per original record)
    records: pd.DataFrame = field(repr=False, compare=False)

    def to_json(self) -> dict:
        return {"keys": list(self.keys), "target": self.target, "n_original": self.n_original,
                "n_synthetic": self.n_synthetic, **self.identity, **self.attribute, **self.caps,
                "settings": self.settings, "checks": self.checks}


def labels(column: pd.Series) -> pd.Series:
    """Each value as one label: numbers as R writes them (15 significant digits: 57.0 -> "57"),
    text as it is, a missing value as `Missing`."""
    if pd.api.types.is_bool_dtype(column):
        out = column.map({True: "TRUE", False: "FALSE"})
    elif pd.api.types.is_numeric_dtype(column):
        out = column.map(lambda v: f"{v:.15g}" if pd.notna(v) else np.nan)
    else:
        out = column.map(lambda v: str(v) if pd.notna(v) else np.nan)
    return out.fillna(MISSING).astype(str)


def _key_labels(frame: pd.DataFrame, keys: list[str]) -> pd.Series:
    parts = [labels(frame[k]) for k in keys]
    q = parts[0]
    for part in parts[1:]:
        q = q + SEPARATOR + part
    return q


def _check(original: pd.DataFrame, synthetic: pd.DataFrame, keys, target: str) -> list[str]:
    keys = [keys] if isinstance(keys, str) else list(keys or [])
    if not keys:
        raise ConfigError("disclosure: keys must name at least one column (the quasi-identifiers)")
    if target in keys:
        raise ConfigError(f"disclosure: the target '{target}' is among the keys {keys}")
    for name, frame in (("original", original), ("synthetic", synthetic)):
        missing = [c for c in [*keys, target] if c not in frame]
        if missing:
            raise ConfigError(f"disclosure: the {name} records lack the column(s) {missing}")
    # synthpop orders the keys as the original's columns are
    return [c for c in original.columns if c in keys]


def disclosure(original: pd.DataFrame, synthetic: pd.DataFrame, keys, target: str, *,
               denom_lim: int = DEFAULT_DENOM_LIM, exclude_over_denom_lim: bool = False,
               not_target_levels=(), use_target_na: bool = True, use_keys_na=True,
               thresh_1way=DEFAULT_THRESH_1WAY, thresh_2way=DEFAULT_THRESH_2WAY) -> DisclosureResult:
    """synthpop's `disclosure()` of one synthetic data set on `keys` and `target` (module docstring)."""
    keys = _check(original, synthetic, keys, target)
    if isinstance(denom_lim, bool) or not isinstance(denom_lim, (int, np.integer)) or denom_lim < 1:
        raise ConfigError(f"disclosure: denom_lim must be a positive integer, got {denom_lim!r}")
    use_keys_na = [bool(use_keys_na)] * len(keys) if np.ndim(use_keys_na) == 0 else [bool(v) for v in use_keys_na]
    if len(use_keys_na) != len(keys):
        raise ConfigError(f"disclosure: use_keys_na gives {len(use_keys_na)} values for {len(keys)} keys")
    n_d, n_s = len(original), len(synthetic)
    q_d, t_d = _key_labels(original, keys), labels(original[target])
    q_s, t_s = _key_labels(synthetic, keys), labels(synthetic[target])

    d = pd.DataFrame({"q": q_d, "t": t_d}).value_counts().rename("d")
    s = pd.DataFrame({"q": q_s, "t": t_s}).value_counts().rename("s")
    cells = pd.concat([d, s], axis=1).fillna(0).astype(int).reset_index()
    kd_pre = cells.groupby("q")["d"].transform("sum")
    ks_pre = cells.groupby("q")["s"].transform("sum")
    # homogeneous: the cell holds its whole q group (decided before any exclusion)
    pd_one = (kd_pre > 0) & (cells["d"] == kd_pre)
    ps_one = (ks_pre > 0) & (cells["s"] == ks_pre)
    any_ps_one = ps_one.groupby(cells["q"]).transform("any")
    in_syn = ks_pre > 0
    tables = {"d": cells["d"], "s": cells["s"], "did": cells["d"] * pd_one, "dis": cells["s"] * ps_one,
              "tiS": cells["d"] * in_syn, "tDiS": cells["d"] * any_ps_one, "tDiSCO": cells["d"] * in_syn * ps_one}
    tables["tDiSDiO"] = tables["tDiSCO"] * pd_one
    base_cap = 100 * float(((cells.groupby("t")["d"].sum() / n_d) ** 2).sum()) if n_d else np.nan

    excluded = cells["t"].isin({str(v) for v in np.atleast_1d(not_target_levels) if v is not None})
    if not use_target_na and (t_d == MISSING).any():
        excluded |= cells["t"] == MISSING
    key_parts = cells["q"].str.split(SEPARATOR, regex=False, expand=True) if len(cells) else pd.DataFrame()
    for i, keep_na in enumerate(use_keys_na):
        if not keep_na and len(cells):
            excluded |= key_parts[i] == MISSING
    after = {}
    for name, table in tables.items():
        table = table.where(~excluded, 0)
        if exclude_over_denom_lim:
            table = table.where(table <= denom_lim, 0)
        after[name] = table.astype(int)

    kd = after["d"].groupby(cells["q"]).sum()
    ks = after["s"].groupby(cells["q"]).sum()
    syn_groups = set(cells.loc[in_syn, "q"])
    unique_d = kd[kd == 1].index
    identity = {"UiO": 100 * len(unique_d) / n_d, "UiS": 100 * int((ks == 1).sum()) / n_s,
                "UiOiS": 100 * sum(q in syn_groups for q in unique_d) / n_d,
                "repU": 100 * int(((kd == 1) & (ks == 1)).sum()) / n_d}
    disco_cells = after["tDiSCO"]
    attribute = {"Dorig": 100 * after["did"].sum() / n_d, "Dsyn": 100 * after["dis"].sum() / n_s,
                 "iS": 100 * after["tiS"].sum() / n_d, "DiS": 100 * after["tDiS"].sum() / n_d,
                 "DiSCO": 100 * disco_cells.sum() / n_d, "DiSDiO": 100 * after["tDiSDiO"].sum() / n_d,
                 "max_denom": int(disco_cells.max()) if len(disco_cells) else 0,
                 "mean_denom": float(disco_cells[disco_cells > 0].mean()) if (disco_cells > 0).any() else np.nan}
    caps = _caps(cells["q"], after["d"], after["s"], kd, ks, disco_cells, n_d, n_s, base_cap)
    checks = _checks(cells, after, original, keys, target, thresh_1way, thresh_2way)

    # per original record: its cell's flags (after the exclusions, as the counts are)
    cell_of = pd.MultiIndex.from_arrays([q_d, t_d])
    flags = pd.DataFrame({"unique": cells["q"].map(kd).eq(1) & (after["d"] > 0),
                          "replicated": cells["q"].map(kd).eq(1) & cells["q"].map(ks).eq(1) & (after["d"] > 0),
                          "disco": disco_cells > 0}).set_axis(pd.MultiIndex.from_frame(cells[["q", "t"]]))
    per_record = flags.reindex(cell_of).fillna(False).astype(bool).reset_index(drop=True)
    records = pd.DataFrame({"position": np.arange(n_d), "unique_original": per_record["unique"].to_numpy(),
                            "replicated_unique": per_record["replicated"].to_numpy(),
                            "disco": per_record["disco"].to_numpy()})
    settings = {"denom_lim": int(denom_lim), "exclude_over_denom_lim": bool(exclude_over_denom_lim),
                "not_target_levels": [str(v) for v in np.atleast_1d(not_target_levels) if v is not None],
                "use_target_na": bool(use_target_na), "use_keys_na": use_keys_na,
                "thresh_1way": list(thresh_1way), "thresh_2way": list(thresh_2way)}
    return DisclosureResult(keys=tuple(keys), target=target, n_original=n_d, n_synthetic=n_s, identity=identity,
                            attribute=attribute, caps=caps, settings=settings, checks=checks, records=records)


def _caps(q: pd.Series, d: pd.Series, s: pd.Series, kd: pd.Series, ks: pd.Series, disco: pd.Series, n_d: int,
          n_s: int, base_cap: float) -> dict:
    """The correct attribution probabilities on the tables after the exclusions (pd', ps' recomputed)."""
    kd_cell, ks_cell = q.map(kd), q.map(ks)
    with np.errstate(divide="ignore", invalid="ignore"):
        pd_after = np.where(kd_cell > 0, d / kd_cell, 0.0)
        ps_after = np.where(ks_cell > 0, s / ks_cell, 0.0)
    in_syn = int(kd[ks.reindex(kd.index).fillna(0) > 0].sum())
    return {"baseCAPd": base_cap,
            "CAPd": 100 * float((d * pd_after).sum()) / n_d,
            "CAPs": 100 * float((s * ps_after).sum()) / n_s,
            "DCAP": 100 * float((ps_after * d).sum()) / n_d,
            "TCAP": 100 * float(disco.sum()) / in_syn if in_syn else np.nan}


def _checks(cells: pd.DataFrame, after: dict, original: pd.DataFrame, keys: list[str], target: str,
            thresh_1way, thresh_2way) -> dict:
    """synthpop's two checks for commonly known relationships; they flag, and change no number.
    One way: the target level with the most DiSCO records, flagged when it has more than
    `thresh_1way[0]` of them and more than `thresh_1way[1]` % of all DiSCO records. Two ways: every
    (target level, key level) pair among DiSCO cells of more than `thresh_2way[0]` original records
    whose key level holds that target level in more than `thresh_2way[1]` % of the original records."""
    by_level = after["tDiSCO"].groupby(cells["t"]).sum().sort_index()
    total = int(by_level.sum())
    one_way = None
    if total:
        level = by_level.idxmax()
        share = 100 * int(by_level[level]) / total
        one_way = {"level": level, "n_disco": int(by_level[level]), "total_disco": total, "pct": share,
                   "flagged": bool(by_level[level] > thresh_1way[0] and share > thresh_1way[1])}
    pairs = []
    big = cells[after["tDiSCO"] > thresh_2way[0]]
    if len(big):
        t_original = labels(original[target])
        parts = big["q"].str.split(SEPARATOR, regex=False, expand=True)
        counts = after["tDiSCO"][big.index]
        for i, key in enumerate(keys):
            key_original = labels(original[key])
            grouped = counts.groupby([big["t"], parts[i]]).sum()
            for (t, level), n_pairs in grouped.items():
                in_level = key_original == level
                key_total = int(in_level.sum())
                both = int((in_level & (t_original == t)).sum())
                pct = 100 * both / key_total if key_total else 0.0
                if pct > thresh_2way[1]:
                    pairs.append({"target_level": t, "key": key, "key_level": level, "n_disco": int(n_pairs),
                                  "key_total": key_total, "key_target_total": both, "pct": pct})
    pairs.sort(key=lambda p: -p["n_disco"])
    return {"one_way": one_way, "two_way": pairs}
