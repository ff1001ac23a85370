import os

# Helpers shared by the rules: target lists derived from the validated config.

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


RAPID = config.get("rapid", {})
RAPID_ATTACKERS = RAPID.get("attackers", ["rf"])
RAPID_SIMULATION = {
    "strengths": [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0],
    "n": 2000,
    "attackers": RAPID_ATTACKERS,
    "generator": "cart",
    "seeds": [0],
    **RAPID.get("simulation", {}),
}


def dataset_schema_object(dataset):
    """The dataset's schema, validated (errors name the schema file and the key to fix)."""
    from synthrisk.data import load_schema

    return load_schema(schema_path(dataset))


def rapid_targets(dataset):
    """(attacker, sensitive) pairs that apply (the package decides: e.g. logit and the calibrated
    attackers only for categorical targets, linear only for continuous ones)."""
    from synthrisk.rapid.attackers import applicable

    schema = dataset_schema_object(dataset)
    return [(attacker, sensitive) for sensitive in schema.sensitive for attacker in RAPID_ATTACKERS
            if applicable(attacker, schema.is_categorical(sensitive))]


def all_rapid_runs():
    return [
        f"results/rapid/{dataset}/{generator}/seed{seed}/{attacker}-{sensitive}.json"
        for dataset in DATASETS
        for generator in GENERATORS
        for seed in SEEDS
        for attacker, sensitive in rapid_targets(dataset)
    ]


def rapid_simulation_target():
    """The simulation study runs when the config has a simulation dataset and its generator."""
    if "simulation" in config["datasets"] and RAPID_SIMULATION["generator"] in GENERATORS:
        return ["results/tables/rapid_simulation.csv"]
    return []
