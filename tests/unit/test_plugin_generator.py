"""A generator from outside the package: a tiny installed package (tests/helpers.py's `tinygen`),
found by entry point or by 'module:Class'; bad backends and generator environments are named (run
through the workflow, and in an environment of its own: tests/workflow/test_plugin_generator_workflow.py)."""

import pytest
from helpers import ROOT

from synthrisk.errors import ConfigError
from synthrisk.generators import make_generator


def test_a_backend_is_found_by_entry_point_and_by_module_path(tinygen_site, mixed_schema, mixed):
    for backend in ("column_shuffle", "tinygen:ColumnShuffle"):
        generator = make_generator({"backend": backend}, seed=0).fit(mixed, mixed_schema)
        synthetic = generator.sample(50, seed=1)
        assert list(synthetic.columns) == list(mixed.columns) and len(synthetic) == 50


@pytest.mark.parametrize("backend, message", [
    ("no_such_backend", "unknown generator backend 'no_such_backend'"),
    ("no_such_module:Gen", "cannot import module 'no_such_module'"),
    ("json:dumps", "'json:dumps' is not a generator class"),
])
def test_a_bad_backend_is_named(backend, message):
    with pytest.raises(ConfigError, match="generators.mine.backend") as error:
        make_generator({"backend": backend}, name="mine")
    assert message in str(error.value)


def test_generator_environments_are_checked_when_the_dag_is_built(tmp_path):
    from synthrisk.generators.environments import environment_dir, generator_environments

    specs = {"sc": {"backend": "synthcity"}, "plain": {"backend": "cart"}}
    assert generator_environments(specs, ROOT) == {"synthcity": ROOT / "envs/synthcity.txt"}
    assert environment_dir(ROOT / "envs/synthcity.txt", ROOT) == ROOT / ".venv-synthcity"
    mine = tmp_path / "mine.txt"
    mine.write_text("./pkg\n")
    assert environment_dir(mine, ROOT) == tmp_path / ".venv-mine"
    with pytest.raises(ConfigError, match=r"generators\.x\.environment: .*none\.txt.* does not exist"):
        generator_environments({"x": {"backend": "cart", "environment": str(tmp_path / "none.txt")}}, ROOT)
    (tmp_path / "other").mkdir()
    (tmp_path / "other/mine.txt").write_text("")
    with pytest.raises(ConfigError, match="both be built as .venv-mine"):
        generator_environments({"a": {"backend": "cart", "environment": str(mine)},
                                "b": {"backend": "cart", "environment": str(tmp_path / "other/mine.txt")}}, ROOT)


