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


def _names(column: pd.Series, uniques) -> list[str]:
    if pd.api.types.is_bool_dtype(column):
        return ["TRUE" if v else "FALSE" for v in uniques]
    if pd.api.types.is_numeric_dtype(column):
        return [f"{v:.15g}" for v in uniques]
    return [str(v) for v in uniques]


def _codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(a code per value, the label of each code): values R writes alike (1 and 1.0 in one column, a
    missing value and the text `Missing`) share a code. Each distinct value is written once: the files
    of an audit at scale have millions of rows and few distinct values per column."""
    raw, uniques = pd.factorize(column, use_na_sentinel=True)
    merged, distinct = pd.factorize(np.asarray([*_names(column, uniques), MISSING], dtype=object))
    return merged[raw], np.asarray(distinct, dtype=object)  # raw -1 (missing) takes the last: Missing


def _joint_codes(first: pd.Series, second: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of both files' values over their joint labels: each file labelled as its own column is
    written (a float 0.0 in one file and the text "0" in the other are one label, as in R)."""
    (a, names_a), (b, names_b) = _codes(first), _codes(second)
    joint, index = pd.factorize(np.concatenate([names_a, names_b]))
    return np.concatenate([joint[: len(names_a)][a], joint[len(names_a):][b]]), np.asarray(index, dtype=object)


def _check(original: pd.DataFrame, synthetic: pd.DataFrame, keys, target: str | None) -> list[str]:
    keys = [keys] if isinstance(keys, str) else list(keys or [])
    if not keys:
        raise ConfigError("disclosure: keys must name at least one column (the quasi-identifiers)")
    if target is not None and target in keys:
        raise ConfigError(f"disclosure: the target '{target}' is among the keys {keys}")
    for name, frame in (("original", original), ("synthetic", synthetic)):
        missing = [c for c in [*keys, *([] if target is None else [target])] if c not in frame]
        if missing:
            raise ConfigError(f"disclosure: the {name} records lack the column(s) {missing}")
    for name, frame in (("original", original), ("synthetic", synthetic)):
        if len(frame) == 0:
            raise ConfigError(f"disclosure: the {name} records are empty")
    # synthpop orders the keys as the original's columns are
    return [c for c in original.columns if c in keys]


@dataclass(frozen=True)
class _Cells:
    """Both files' records as integer codes over their joint labels, and the (t, q) cells they fall
    in: per cell its q group, its target level and each key's level (codes), the original and
    synthetic counts."""

    n_d: int
    n_s: int
    cell: np.ndarray           # per record (original first, then synthetic): its cell
    q: np.ndarray              # per cell: its q group
    t: np.ndarray              # per cell: its target level
    key_levels: list           # per key: per cell, the key's level
    key_names: list            # per key: the label of each level code
    t_names: np.ndarray        # the label of each target code
    d: np.ndarray
    s: np.ndarray

    @property
    def n_q(self) -> int:
        return int(self.q.max()) + 1 if len(self.q) else 0

    def per_q(self, values: np.ndarray) -> np.ndarray:
        """A cell array summed over each q group."""
        return np.bincount(self.q, weights=values, minlength=self.n_q)


def _cells(original: pd.DataFrame, synthetic: pd.DataFrame, keys: list[str], target: str | None) -> _Cells:
    key_codes, key_names = zip(*(_joint_codes(original[k], synthetic[k]) for k in keys))
    q = key_codes[0].astype(np.int64)
    for codes, names in zip(key_codes[1:], key_names[1:]):
        q = pd.factorize(q * len(names) + codes)[0].astype(np.int64)  # compact after each key: no overflow
    t, t_names = (_joint_codes(original[target], synthetic[target]) if target
                  else (np.zeros(len(original) + len(synthetic), np.int64), np.asarray([""], dtype=object)))
    cell = pd.factorize(q * len(t_names) + t)[0]
    n_cells = int(cell.max()) + 1 if len(cell) else 0
    first = np.zeros(n_cells, np.int64)
    first[cell[::-1]] = np.arange(len(cell))[::-1]  # a record of each cell
    n_d = len(original)
    return _Cells(n_d=n_d, n_s=len(synthetic), cell=cell, q=pd.factorize(q[first])[0], t=t[first],
                  key_levels=[codes[first] for codes in key_codes], key_names=list(key_names), t_names=t_names,
                  d=np.bincount(cell[:n_d], minlength=n_cells), s=np.bincount(cell[n_d:], minlength=n_cells))


def _target_levels(original: pd.DataFrame, target: str | None, levels, known: np.ndarray) -> set[str]:
    """`not_target_levels` as labels: a text is a label as it stands; a number or a truth value is
    written as the target's values are (1.0 -> "1", True -> "TRUE"). A level the target never takes
    is refused: a misspelt level would silently stay in."""
    if levels is None or isinstance(levels, (str, bytes)) or np.ndim(levels) == 0:
        levels = [] if levels is None else [levels]
    levels = [v.item() if isinstance(v, np.generic) else v for v in levels if v is not None]
    if levels and target is None:
        raise ConfigError("disclosure: not_target_levels needs a target")
    out = set()
    for value in levels:
        label = value if isinstance(value, str) else _names(original[target], [value])[0]
        if label not in set(known):
            shown = ", ".join(map(repr, sorted(known)[:20]))
            raise ConfigError(f"disclosure: not_target_levels: {value!r} is not a level of the target '{target}' "
                              f"(its levels: {shown}{', ...' if len(known) > 20 else ''})")
        out.add(label)
    return out


def check_denom_lim(value, where: str = "") -> int:
    """`denom_lim` as synthpop requires it: a whole number of at least 1."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{where}denom_lim must be a positive integer, got {value!r}")
    return int(value)


def _code_of(names: np.ndarray, label: str) -> int:
    hits = np.flatnonzero(names == label)
    return int(hits[0]) if len(hits) else -1


def disclosure(original: pd.DataFrame, synthetic: pd.DataFrame, keys, target: str | None, *,
               denom_lim: int = DEFAULT_DENOM_LIM, exclude_over_denom_lim: bool = False,
               not_target_levels=(), use_target_na: bool = True, use_keys_na=True,
               thresh_1way=DEFAULT_THRESH_1WAY, thresh_2way=DEFAULT_THRESH_2WAY) -> DisclosureResult:
    """synthpop's `disclosure()` of one synthetic data set on `keys` and `target` (module docstring).
    `target` None: the identity measures alone (every record has one target value; the attribute
    measures and the checks then say nothing)."""
    given = [keys] if isinstance(keys, str) else list(keys or [])
    keys = _check(original, synthetic, keys, target)
    check_denom_lim(denom_lim, "disclosure: ")
    if np.ndim(use_keys_na) == 0:
        use_keys_na = [bool(use_keys_na)] * len(keys)
    else:  # one value per key, in the order the keys were given (they are read in the data's order)
        if len(use_keys_na) != len(given):
            raise ConfigError(f"disclosure: use_keys_na gives {len(use_keys_na)} values for {len(given)} keys")
        by_key = dict(zip(given, (bool(v) for v in use_keys_na)))
        use_keys_na = [by_key[k] for k in keys]
    c = _cells(original, synthetic, keys, target)
    n_d, n_s, d, s = c.n_d, c.n_s, c.d, c.s
    kd_pre, ks_pre = c.per_q(d)[c.q], c.per_q(s)[c.q]
    # homogeneous: the cell holds its whole q group (decided before any exclusion)
    pd_one = (kd_pre > 0) & (d == kd_pre)
    ps_one = (ks_pre > 0) & (s == ks_pre)
    any_ps_one = c.per_q(ps_one.astype(float))[c.q] > 0
    in_syn = ks_pre > 0
    tables = {"d": d, "s": s, "did": d * pd_one, "dis": s * ps_one, "tiS": d * in_syn, "tDiS": d * any_ps_one,
              "tDiSCO": d * in_syn * ps_one}
    tables["tDiSDiO"] = tables["tDiSCO"] * pd_one
    base_cap = 100 * float(((np.bincount(c.t, weights=d) / n_d) ** 2).sum()) if n_d else np.nan

    left_out = _target_levels(original, target, not_target_levels, c.t_names[np.unique(c.t)])
    excluded = np.isin(c.t_names, list(left_out))[c.t] if left_out else np.zeros(len(d), bool)
    missing_t = _code_of(c.t_names, MISSING)
    if not use_target_na and target is not None and missing_t >= 0 and original[target].isna().any():
        excluded |= c.t == missing_t
    for levels, names, keep_na in zip(c.key_levels, c.key_names, use_keys_na):
        if not keep_na:
            excluded |= levels == _code_of(names, MISSING)
    after = {}
    for name, table in tables.items():
        table = np.where(excluded, 0, table)
        if exclude_over_denom_lim:
            table = np.where(table <= denom_lim, table, 0)
        after[name] = table.astype(np.int64)

    kd, ks = c.per_q(after["d"]), c.per_q(after["s"])
    syn_groups = c.per_q(s.astype(float)) > 0  # before the exclusions, as synthpop has it
    identity = {"UiO": 100 * int((kd == 1).sum()) / n_d, "UiS": 100 * int((ks == 1).sum()) / n_s,
                "UiOiS": 100 * int(((kd == 1) & syn_groups).sum()) / n_d,
                "repU": 100 * int(((kd == 1) & (ks == 1)).sum()) / n_d}
    disco_cells = after["tDiSCO"]
    attribute = {"Dorig": 100 * after["did"].sum() / n_d, "Dsyn": 100 * after["dis"].sum() / n_s,
                 "iS": 100 * after["tiS"].sum() / n_d, "DiS": 100 * after["tDiS"].sum() / n_d,
                 "DiSCO": 100 * disco_cells.sum() / n_d, "DiSDiO": 100 * after["tDiSDiO"].sum() / n_d,
                 "max_denom": int(disco_cells.max()) if len(disco_cells) else 0,
                 "mean_denom": float(disco_cells[disco_cells > 0].mean()) if (disco_cells > 0).any() else np.nan}
    attribute = {k: (float(v) if k != "max_denom" else v) for k, v in attribute.items()}
    caps = _caps(c, after["d"], after["s"], kd, ks, disco_cells, base_cap)
    checks = (_checks(c, after, keys, thresh_1way, thresh_2way) if target is not None
              else {"one_way": None, "two_way": []})

    # per original record: its cell's flags (after the exclusions, as the counts are)
    unique = (kd[c.q] == 1) & (after["d"] > 0)
    replicated = unique & (ks[c.q] == 1)
    mine = c.cell[:n_d]
    records = pd.DataFrame({"position": np.arange(n_d), "unique_original": unique[mine],
                            "replicated_unique": replicated[mine], "disco": (disco_cells > 0)[mine]})
    settings = {"denom_lim": int(denom_lim), "exclude_over_denom_lim": bool(exclude_over_denom_lim),
                "not_target_levels": sorted(left_out), "use_target_na": bool(use_target_na),
                "use_keys_na": use_keys_na, "thresh_1way": list(thresh_1way), "thresh_2way": list(thresh_2way)}
    return DisclosureResult(keys=tuple(keys), target=target, n_original=n_d, n_synthetic=n_s, identity=identity,
                            attribute=attribute, caps=caps, settings=settings, checks=checks, records=records)


def _caps(c: _Cells, d: np.ndarray, s: np.ndarray, kd: np.ndarray, ks: np.ndarray, disco: np.ndarray,
          base_cap: float) -> dict:
    """The correct attribution probabilities on the tables after the exclusions (pd', ps' recomputed)."""
    kd_cell, ks_cell = kd[c.q], ks[c.q]
    with np.errstate(divide="ignore", invalid="ignore"):
        pd_after = np.where(kd_cell > 0, d / kd_cell, 0.0)
        ps_after = np.where(ks_cell > 0, s / ks_cell, 0.0)
    in_syn = int(kd[ks > 0].sum())
    return {"baseCAPd": base_cap,
            "CAPd": 100 * float((d * pd_after).sum()) / c.n_d,
            "CAPs": 100 * float((s * ps_after).sum()) / c.n_s,
            "DCAP": 100 * float((ps_after * d).sum()) / c.n_d,
            "TCAP": 100 * float(disco.sum()) / in_syn if in_syn else np.nan}


def _level_order(label: str) -> tuple:
    """R's order of a target's levels: numbers by value (a numeric target's factor levels), then text."""
    try:
        return (0, float(label), "")
    except ValueError:
        return (1, 0.0, label)


def _checks(c: _Cells, after: dict, keys: list[str], thresh_1way, thresh_2way) -> dict:
    """synthpop's two checks for commonly known relationships; they flag, and change no number.
    One way: the target level with the most DiSCO records, flagged when it has more than
    `thresh_1way[0]` of them and more than `thresh_1way[1]` % of all DiSCO records. Two ways: every
    (target level, key level) pair among DiSCO cells of more than `thresh_2way[0]` original records
    whose key level holds that target level in more than `thresh_2way[1]` % of the original records
    (counted before any exclusion)."""
    disco = after["tDiSCO"]
    by_level = pd.Series(np.bincount(c.t, weights=disco, minlength=len(c.t_names)), index=c.t_names)
    by_level = by_level.iloc[sorted(range(len(by_level)), key=lambda i: _level_order(by_level.index[i]))]
    total = int(by_level.sum())
    one_way = None
    if total:
        level = by_level.idxmax()  # ties: the first in label order, as R's
        share = 100 * int(by_level[level]) / total
        one_way = {"level": level, "n_disco": int(by_level[level]), "total_disco": total, "pct": share,
                   "flagged": bool(by_level[level] > thresh_1way[0] and share > thresh_1way[1])}
    pairs = []
    big = np.flatnonzero(disco > thresh_2way[0])
    if len(big):
        # every original record's cell, for the key level's totals
        mine = c.cell[:c.n_d]
        t_of_record = c.t[mine]
        t_codes = {name: i for i, name in enumerate(c.t_names)}
        for levels, names, key in zip(c.key_levels, c.key_names, keys):
            level_of_record = levels[mine]
            totals = np.bincount(level_of_record, minlength=len(names))
            grouped = pd.Series(disco[big]).groupby([c.t_names[c.t[big]], names[levels[big]]]).sum()
            level_codes = {name: i for i, name in enumerate(names)}
            for (t, level), n_pairs in grouped.items():
                in_level = level_of_record == level_codes[level]
                key_total = int(totals[level_codes[level]])
                both = int((in_level & (t_of_record == t_codes[t])).sum())
                pct = 100 * both / key_total if key_total else 0.0
                if pct > thresh_2way[1]:
                    pairs.append({"target_level": t, "key": key, "key_level": level, "n_disco": int(n_pairs),
                                  "key_total": key_total, "key_target_total": both, "pct": pct})
    pairs.sort(key=lambda p: -p["n_disco"])
    return {"one_way": one_way, "two_way": pairs}
