"""pyproject.toml declares every third-party distribution the package imports (issue #29).

Every `import x` / `from x import ...` anywhere in synthrisk/ (module level or inside a function: a
lazy import is still needed when its code runs) must name a module of a distribution listed in
`[project] dependencies` or one of `[project.optional-dependencies]`; `pip install .` would
otherwise leave it out. The exception is a built-in generator backend that runs in an environment
of its own (synthrisk.generators.base.BACKEND_ENVIRONMENTS: synthcity): its module may import
what that environment's requirements file installs, and nothing of it is declared here. Optional
dependencies of pandas that its methods import when called (tabulate for `to_markdown`) are checked
by the methods' names. .ci/fresh_install.sh installs the package into a fresh virtualenv and runs
`synthrisk audit` there, which finds what neither check can.
"""

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from helpers import ROOT

from synthrisk.generators.base import BACKEND_ENVIRONMENTS, BUILTIN_BACKENDS

PACKAGE = ROOT / "synthrisk"


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares them (PyYAML = pyyaml, dp_accounting = dp-accounting)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(line: str) -> str | None:
    """The distribution a requirement line names (`torch==2.13.0` -> torch); None for comments and options."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line.split("#")[0])
    return normalise(match.group(1)) if match else None


def declared() -> dict[str, str]:
    """{normalised distribution: where pyproject declares it}."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = {requirement_name(r): "dependencies" for r in project.get("dependencies", [])}
    for extra, requirements in project.get("optional-dependencies", {}).items():
        for r in requirements:
            found.setdefault(requirement_name(r), f"optional-dependencies.{extra}")
    return found


def imports(path: Path) -> dict[str, int]:
    """{top-level module: first line} of the absolute imports of one file."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            found.setdefault(name.split(".")[0], node.lineno)
    return found


def third_party_imports() -> list[tuple[str, Path, int]]:
    """(top-level module, file, line) of every import of synthrisk/ that is neither the standard
    library nor synthrisk itself."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for module, line in imports(path).items():
            if module not in sys.stdlib_module_names and module != "synthrisk":
                found.append((module, path, line))
    return found


def isolated_environments() -> dict[Path, set[str]]:
    """{module file of a backend with an environment of its own: distributions its requirements file installs}."""
    found = {}
    for backend, requirements in BACKEND_ENVIRONMENTS.items():
        names = {requirement_name(line) for line in (ROOT / requirements).read_text().splitlines()} - {None}
        found[PACKAGE / "generators" / f"{BUILTIN_BACKENDS[backend]}.py"] = names
    return found


def undeclared(modules: list[tuple[str, Path, int]], declared_names: dict[str, str]) -> list[str]:
    """One message per import whose distribution pyproject does not declare."""
    providers = packages_distributions()  # import name -> distributions installed here that provide it
    isolated = isolated_environments()
    problems = []
    for module, path, line in modules:
        distributions = {normalise(d) for d in providers.get(module, [])}
        if distributions & set(declared_names):
            continue
        where = f"{path.relative_to(ROOT)}:{line}"
        own_environment = isolated.get(path, set())
        if (distributions or {normalise(module)}) & own_environment:
            continue  # e.g. synthcity, installed only in .venv-synthcity
        if distributions:
            problems.append(f"{where} imports {module!r} (distribution {' or '.join(sorted(distributions))}), "
                            "which pyproject.toml declares in neither [project] dependencies nor an extra")
        else:
            problems.append(f"{where} imports {module!r}, which no installed distribution provides and "
                            "pyproject.toml does not declare")
    return problems


def test_every_third_party_import_of_the_package_is_declared_in_pyproject():
    modules = third_party_imports()
    assert {m for m, _, _ in modules} >= {"numpy", "pandas", "sklearn", "yaml"}  # the scan sees imports at all
    problems = undeclared(modules, declared())
    assert not problems, "\n".join(problems)


# pandas methods that import an optional dependency of pandas when called: {method: distribution}.
# synthrisk never imports these, so the import scan cannot see them (pandas.compat._optional). Any
# attribute of such a name counts (`style` might be another library's): a false alarm costs a line here.
PANDAS_OPTIONAL = {"to_markdown": "tabulate", "style": "jinja2", "to_parquet": "pyarrow", "read_parquet": "pyarrow",
                   "to_excel": "openpyxl", "read_excel": "openpyxl", "to_xml": "lxml", "read_xml": "lxml"}


def test_optional_dependencies_of_pandas_that_the_package_calls_for_are_declared():
    names = declared()
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Attribute) and node.attr in PANDAS_OPTIONAL:
                distribution = PANDAS_OPTIONAL[node.attr]
                if distribution not in names:
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno} calls pandas' .{node.attr}, which needs "
                                    f"{distribution}; pyproject.toml does not declare it")
    assert not problems, "\n".join(problems)


def test_the_synthcity_backend_is_the_only_exception_and_not_a_dependency():
    """synthcity pins torch<2.3 and numpy<2: it must stay out of the main environment."""
    assert "synthcity" not in declared()
    imported = {path.relative_to(ROOT).as_posix() for module, path, _ in third_party_imports() if module == "synthcity"}
    assert imported == {"synthrisk/generators/synthcity.py"}


def test_the_check_names_the_module_and_file_of_an_undeclared_import():
    names = declared()
    del names["statsmodels"]
    problems = [p for p in undeclared(third_party_imports(), names) if "imports 'statsmodels'" in p]
    assert any(re.match(r"synthrisk/rapid/core\.py:\d+ imports 'statsmodels' \(distribution statsmodels\), which "
                        r"pyproject\.toml declares in neither", p) for p in problems), problems
    # an isolated backend's module may not import what its own environment lacks either
    synthcity = PACKAGE / "generators/synthcity.py"
    assert undeclared([("notinstalled_xyz", synthcity, 1)], names) == [
        "synthrisk/generators/synthcity.py:1 imports 'notinstalled_xyz', which no installed distribution provides "
        "and pyproject.toml does not declare"]
