# Helpers shared by the rules: target lists derived from the validated config.

DATASETS = list(config["datasets"])
GENERATORS = list(config["generators"])
SEEDS = config["seeds"]


def dataset_schema(wildcards):
    return config["datasets"][wildcards.dataset]["schema"]


def all_synthetic():
    return expand(
        "results/synthetic/{dataset}/{generator}/seed{seed}.parquet",
        dataset=DATASETS,
        generator=GENERATORS,
        seed=SEEDS,
    )
