"""The code examples of README.md and the docs site run as written: every ```python block of
README.md and docs/ is run here (with the names it assumes bound to small real data) or names the
test that runs it, and the README's audit command is run through the command line. The audits use
the calibration's cheaper settings (same verdict logic), as test_audit.py does."""

import re
import shlex

import numpy as np
import pandas as pd
import pytest
from helpers import ROOT

from synthrisk.cli import main
from synthrisk.io import write_table

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: blocks another test runs as written: (page, first line of the block) -> that test
RUN_ELSEWHERE = {("docs/extending.md", '"""Members with an exact copy in the synthetic data, against non-members with one."""'):
                 "tests/workflow/test_measures_workflow.py (the tiny Snakemake run)",
                 ("docs/api.md", "# One measure at a time: membership by DCR, attribute inference by RAPID"):
                 "tests/unit/test_measure_api.py (test_the_docs_example_runs_as_written)"}


#: a git commit hash as docs would quote one: a word of 7 to 40 lowercase hex digits holding at
#: least one digit and one letter a-f. Not after "#", so colours (#c0392b) and issue numbers pass;
#: longer hex words (a file's sha256, 64 digits) are checksums, not commits, and pass too.
COMMIT_HASH = re.compile(r"(?<![0-9A-Za-z_#])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![0-9A-Za-z_])")
README_MAX_LINES, PAGE_MAX_LINES = 150, 300


def python_blocks() -> list[tuple[str, int, str]]:
    found = []
    for page in PAGES:
        for index, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S)):
            found.append((page.relative_to(ROOT).as_posix(), index, block))
    return found


@pytest.fixture(scope="module")
def split(adult):
    sample = adult.sample(900, random_state=11).reset_index(drop=True)
    return sample.iloc[:300].reset_index(drop=True), sample.iloc[300:600].reset_index(drop=True), \
        sample.iloc[600:].reset_index(drop=True)


def namespace(page: str, split, adult_schema) -> dict:
    """The names an example assumes: its data, as small real records."""
    train, holdout, synthetic = split
    if page in ("README.md", "docs/api.md"):
        return {"train": train, "synthetic": synthetic, "holdout": holdout}
    if page == "docs/methods/rapid.md":
        return {"real_df": train, "synthetic_df": synthetic, "schema": adult_schema}
    if page == "docs/methods/dp-inference.md":
        rng = np.random.default_rng(0)
        frame = pd.DataFrame({"sex": rng.choice(["f", "m"], 2000), "age_band": rng.choice(["<40", "40+"], 2000)})
        frame["visits"] = rng.poisson(np.where(frame["sex"] == "f", 3.0, 2.0))
        return {"frame": frame, "schema": type("Schema", (), {"levels": {"sex": ["f", "m"], "age_band": ["<40", "40+"]}})}
    return {}


@pytest.mark.parametrize("page,index,block", python_blocks(), ids=lambda v: str(v)[:40] if isinstance(v, str) else str(v))
def test_python_example_runs_as_written(page, index, block, split, adult_schema, cheap_audit, tmp_path, monkeypatch):
    first = block.strip().splitlines()[0]
    if (page, first) in RUN_ELSEWHERE:
        assert (ROOT / RUN_ELSEWHERE[(page, first)].split()[0]).exists()
        pytest.skip(f"run as written by {RUN_ELSEWHERE[(page, first)]}")
    monkeypatch.chdir(tmp_path)
    scope = namespace(page, split, adult_schema)
    exec(compile(block, f"{page} python block {index}", "exec"), scope)  # noqa: S102 - the docs' own example
    if page in ("README.md", "docs/api.md"):
        assert set(scope["result"].risks["risk"]) == {"membership", "attribute_inference", "singling_out", "linkability"}
        assert (tmp_path / "audit.html").stat().st_size > 10_000
    if page == "docs/generators.md":
        generator = scope["Bootstrap"](seed=0).fit(split[0], adult_schema)
        assert list(generator.sample(50, seed=1).columns) == list(split[0].columns)


def test_readme_audit_command_runs_as_written(split, cheap_audit, tmp_path, monkeypatch, capsys):
    """Quick start 1 with the README's file names: the verdict lines it shows, and the folder."""
    text = (ROOT / "README.md").read_text()
    command = re.search(r"```bash\n(synthrisk audit .*?)```", text, re.S).group(1).replace("\\\n", " ")
    train, holdout, synthetic = split
    monkeypatch.chdir(tmp_path)
    for frame, name in ((train, "members.csv"), (synthetic, "release.csv"), (holdout, "holdout.csv")):
        write_table(frame, tmp_path / name)
    assert main(shlex.split(command)[1:]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Does this audit support releasing this file? ")
    assert lines[1].startswith("membership inference: ") and any(line.startswith("attribute inference: ") for line in lines)
    assert {p.name for p in (tmp_path / "audit").iterdir()} >= {"audit.html", "audit.json", "tables", "schema.yaml"}


def test_pages_are_short_and_describe_what_is():
    """Issue #43, item 4: the README fits in 150 lines and every docs page in 300, and neither names
    a commit: which commit measured what is history, and history goes to CHANGELOG.md."""
    too_long, hashes = [], []
    for page in PAGES:
        name, text = page.relative_to(ROOT).as_posix(), page.read_text()
        limit = README_MAX_LINES if name == "README.md" else PAGE_MAX_LINES
        if len(text.splitlines()) > limit:
            too_long.append(f"{name}: {len(text.splitlines())} lines (at most {limit})")
        hashes += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()}" for m in COMMIT_HASH.finditer(text)]
    assert not too_long, "pages too long: " + "; ".join(too_long)
    assert not hashes, "commit hashes in the docs (move the history to CHANGELOG.md): " + "; ".join(hashes)
    assert not COMMIT_HASH.search("colour #c0392b, a sha256 " + "0123456789abcdef" * 4) and COMMIT_HASH.search("at c1652a0")
