# DP sufficient statistics: the paper's five experiments, each a table and a figure.

from synthrisk.dp.experiments import EXPERIMENTS

# The experiments run when the config has a `dp:` block (its defaults: synthrisk.dp.stage.DEFAULTS);
# a config that does not mention them does not run them.
DP_EXPERIMENTS = list(EXPERIMENTS) if "dp" in config else []
DP_GRID_EXPERIMENTS = ["variance", "scaling"]  # two readings of one Monte Carlo grid


rule dp_grid:
    output:
        "results/dp/grid.parquet",
    params:
        settings=config.get("dp", {}),
        seed=SEEDS[0],
    log:
        "results/logs/dp/grid.log",
    benchmark:
        "results/benchmarks/dp_grid.tsv"
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/dp_grid.py"


rule dp_experiment:
    input:
        unpack(dp_inputs),
    output:
        results="results/dp/{experiment}/results.csv",
        table="results/tables/dp_{experiment}.csv",
        figure=report(
            "results/figures/dp_{experiment}.png",
            category="DP inference",
            caption="../report/dp.rst",
        ),
    params:
        settings=config.get("dp", {}),
        tables=lambda wildcards: TABLES_DIR,
        seed=SEEDS[0],
    wildcard_constraints:
        experiment="|".join(EXPERIMENTS),
    log:
        "results/logs/dp/{experiment}.log",
    benchmark:
        "results/benchmarks/dp_experiment/{experiment}.tsv"
    conda:
        MAIN_CONDA_ENV
    script:
        "../../scripts/dp_experiment.py"
