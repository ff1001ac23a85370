# DP sufficient statistics: the paper's five experiments, each a table and a figure.

DP_EXPERIMENTS = ["variance", "coverage", "clipping", "scaling", "census"]


rule dp_experiment:
    input:
        adult_schema=os.path.join(workflow.basedir, "config/datasets/adult.yaml"),
    output:
        results="results/dp/{experiment}/results.csv",
        table="results/tables/dp_{experiment}.csv",
        figure=report(
            "results/figures/dp_{experiment}.png",
            category="DP inference",
            caption="../report/dp_{experiment}.rst",
        ),
    params:
        settings=config.get("dp", {}),
        tables="results/tables",
        seed=SEEDS[0],
    wildcard_constraints:
        experiment="|".join(DP_EXPERIMENTS),
    log:
        "results/logs/dp/{experiment}.log",
    benchmark:
        "results/benchmarks/dp/{experiment}.tsv"
    script:
        "../../scripts/dp_experiment.py"
