import functools
import os

from snakemake.settings.types import DeploymentMethod

# Helpers shared by the rules: target lists derived from the validated config.

# Every rule's software: the main environment (envs/requirements.txt, which `make` installs into .venv),
# described for conda users in envs/main.yaml. The directive is set only when the run deploys with
# conda (--software-deployment-method conda; `make lint` lints that way): otherwise Snakemake ignores
# it anyway, except `snakemake --archive`, which would insist on building the conda environment and
# so fail on a machine without conda.
MAIN_CONDA_ENV = (
    os.path.join(workflow.basedir, "envs/main.yaml")
    if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
    else None
)
# Where tables and figures go. Summary scripts get the folder and write there exactly the files
# their rule declares as outputs.
TABLES_DIR = "results/tables"
FIGURES_DIR = "results/figures"

DATASETS = list(config["datasets"])
# `enabled: false` keeps a generator in a config without running it (an overlay config such as
# config/paper_laptop.yaml switches off what a laptop cannot afford); jobs never see the flag.
GENERATOR_SPECS = {
    name: {key: value for key, value in spec.items() if key != "enabled"}
    for name, spec in config["generators"].items()
    if spec.get("enabled", True)
}
if not GENERATOR_SPECS:
    raise ValueError("config: generators: every entry has `enabled: false`; enable at least one")
GENERATORS = list(GENERATOR_SPECS)
SEEDS = config["seeds"]


def schema_path(dataset):
    # Relative schema paths name files of this repository, so a run in another working
    # directory (`--directory runs/paper`) finds the same schemas.
    path = config["datasets"][dataset]["schema"]
    return path if os.path.isabs(path) else os.path.join(workflow.basedir, path)


def dataset_schema(wildcards):
    return schema_path(wildcards.dataset)


def simulation_schema_path():
    # The dependence study uses the simulator's schema even when no dataset is named simulation.
    if "simulation" in config["datasets"]:
        return schema_path("simulation")
    return os.path.join(workflow.basedir, "config/datasets/simulation.yaml")


def per_run(pattern):
    """`pattern` for every dataset x generator x seed of the config."""
    return expand(pattern, dataset=DATASETS, generator=GENERATORS, seed=SEEDS)


def all_synthetic():
    return per_run("results/synthetic/{dataset}/{generator}/seed{seed}.parquet")


def synthetic_rows(wildcards):
    spec = config["datasets"][wildcards.dataset]
    return spec.get("n_synthetic", spec["n_train"])


# The measures this config runs (synthrisk.measures: every built-in measure the config names, plug-ins
# by their `module`, those on by default) and their settings, validated now so that a bad key stops
# the run before any job with a message naming it.
from synthrisk.measures import configured_measures

MEASURES = configured_measures(config)
MEASURE_SETTINGS = {name: m.settings(config.get(name)) for name, m in MEASURES.items()}


@functools.lru_cache(maxsize=None)
def dataset_schema_object(dataset):
    """The dataset's schema, validated (errors name the schema file and the key to fix); read once
    per run, however many measures ask for their units."""
    from synthrisk.data import load_schema

    return load_schema(schema_path(dataset))


def measure_run_stem(name):
    """Where measure `name` writes for one dataset x generator x seed (stated once)."""
    return f"results/{name}/{{dataset}}/{{generator}}/seed{{seed}}"


def measure_runs(name):
    """Every summary JSON of measure `name`: one per dataset x generator x seed, or one per unit
    (e.g. RAPID's attacker x sensitive attribute) when the measure has units."""
    measure, settings = MEASURES[name], MEASURE_SETTINGS[name]
    runs = []
    for dataset in DATASETS:
        units = measure.units(dataset_schema_object(dataset), settings)
        for generator in GENERATORS:
            for seed in SEEDS:
                stem = measure_run_stem(name).format(dataset=dataset, generator=generator, seed=seed)
                runs += [f"{stem}/{unit}.json" for unit in units] if measure.has_units else [f"{stem}.json"]
    return runs


def measure_job_outputs():
    """What the measure job of one dataset x generator x seed writes, per measure: the per-record
    table and summary JSON, or for a measure with units (whose number depends on the dataset) the
    run directory that holds one such pair per unit."""
    outputs = {}
    for name, measure in MEASURES.items():
        stem = measure_run_stem(name)
        if measure.has_units:
            outputs[name] = directory(stem)
        else:
            outputs[f"{name}_records"] = f"{stem}.parquet"
            outputs[f"{name}_summary"] = f"{stem}.json"
    return outputs


def measure_job_results(name):
    """The measure job outputs that the summary of measure `name` reads: its summary JSONs, or its
    run directories (the JSONs inside are listed by `measure_runs`)."""
    if not MEASURES[name].has_units:
        return measure_runs(name)
    return per_run(measure_run_stem(name))


def measure_tables(name):
    return [f"{TABLES_DIR}/{table}.csv" for table in MEASURES[name].outputs.table_names(name)]


def measure_figures(name):
    return [f"{FIGURES_DIR}/{figure.stem}.png" for figure in MEASURES[name].outputs.figure_files(name, DATASETS)]


def all_measure_tables():
    return [path for name in MEASURES for path in measure_tables(name)]


RAPID_SIMULATION = None
if "rapid" in MEASURE_SETTINGS:
    from synthrisk.rapid.simulation import simulation_settings

    RAPID_SIMULATION = simulation_settings(MEASURE_SETTINGS["rapid"])


def rapid_simulation_target():
    """The simulation study runs when the config has RAPID, a simulation dataset and its generator."""
    if RAPID_SIMULATION and "simulation" in config["datasets"] and RAPID_SIMULATION["generator"] in GENERATORS:
        return ["results/tables/rapid_simulation.csv"]
    return []


# Functions of the rules in generate.smk, report.smk and dp.smk (Snakemake's linter asks that
# rule files hold rules only).


def environment_python(env):
    return str(interpreter(Path(ENVIRONMENTS[env]), workflow.basedir))


def environment_stamp(env):
    return str(environment_dir(Path(ENVIRONMENTS[env]), workflow.basedir) / ".installed")


def generator_runtime(wildcards, attempt):
    """Cluster run time (minutes) of a generate job: its generator's `timeout` with 20% margin for
    loading and writing, or one hour without a timeout; doubled on a retry."""
    import math

    timeout = GENERATOR_SPECS[wildcards.generator].get("timeout")
    minutes = math.ceil(timeout * 1.2 / 60) + 5 if timeout else 60
    return minutes * attempt


def names_pattern(names):
    return "|".join(re.escape(name) for name in names) if names else "(?!)"  # (?!) matches nothing


def report_figures():
    figures = list(rules.summary.output.figures)
    figures += [path for name in MEASURES for path in measure_figures(name)]
    if rapid_simulation_target():
        figures += [rules.rapid_simulation.output.by_strength, rules.rapid_simulation.output.curves]
    figures += expand("results/figures/dp_{experiment}.png", experiment=DP_EXPERIMENTS)
    figures += [path for path in epsilon_audit_targets() if path.endswith(".png")]  # workflow/rules/epsilon_audit.smk
    figures += [path for path in shadow_mia_results() if path.endswith(".png")]  # workflow/rules/shadow_mia.smk
    return figures


def report_tables():
    names = ["summary", "risk"] + [table for name, measure in MEASURES.items() for table in measure.outputs.table_names(name)]
    names += ["rapid_simulation"] if rapid_simulation_target() else []
    names += [f"dp_{experiment}" for experiment in DP_EXPERIMENTS]
    names += ["epsilon_audit"] if epsilon_audit_targets() else []
    names += ["shadow_mia", "shadow_mia_targets"] if shadow_mia_results() else []
    return {name: f"results/tables/{name}.csv" for name in names}


def dp_inputs(wildcards):
    if wildcards.experiment == "census":
        return {"adult_schema": os.path.join(workflow.basedir, "config/datasets/adult.yaml")}
    if wildcards.experiment in DP_GRID_EXPERIMENTS:
        return {"grid": "results/dp/grid.parquet"}
    return {}


# Functions of epsilon_audit.smk (PRIVACY_AUDIT and epsilon_audit_stage are set there).


def epsilon_audit_blocks():
    s = PRIVACY_AUDIT
    return expand(
        "results/epsilon_audit/{generator}/eps{epsilon}/{world}/block{block}.csv",
        generator=s["generators"],
        epsilon=[epsilon_audit_stage.epsilon_label(e) for e in s["epsilons"]],
        world=["without", "with"],
        block=range(epsilon_audit_stage.n_blocks(s)),
    )


def epsilon_audit_targets():
    return list(rules.epsilon_audit_table.output) if PRIVACY_AUDIT else []


# Functions of shadow_mia.smk (SHADOW_MIA and shadow_mia_stage are set there).


def shadow_mia_population(wildcards):
    """The split files the shadow stage's population comes from (its dataset, the first seed)."""
    folder = f"results/data/{SHADOW_MIA['dataset']}/seed{SHADOW_MIA['seed']}"
    return {name: f"{folder}/{name}.parquet" for name in shadow_mia_stage.POPULATION_FILES}


def shadow_mia_blocks():
    return [
        f"results/shadow_mia/{generator}/{role}/block{block}.parquet"
        for generator in SHADOW_MIA["generators"]
        for role in shadow_mia_stage.ROLES
        for block in range(shadow_mia_stage.n_blocks(SHADOW_MIA, role))
    ]


def shadow_mia_results():
    return list(rules.shadow_mia_table.output) if SHADOW_MIA else []
